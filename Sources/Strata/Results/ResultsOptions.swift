/// What a results controller does with fetched items before showing them: a post-fetch
/// filter and comparator (Swift closures that can look at anything, not only columns), and
/// whether filtered-out items are summarised as one group row per section.
///
/// ```swift
/// var options = ResultsOptions<Note>()
/// options.filter = { !$0.body.isEmpty }
/// options.comparator = { $0.title.count < $1.title.count }
/// options.groupFilteredItems = true
/// controller.options = options   // emits one change batch
/// ```
///
/// The closures run while the controller processes a commit (on the store's writer, right
/// after the commit) and when options change: keep them fast, pure and deterministic — the
/// same item must always get the same answer, or batches cannot describe the change.
public struct ResultsOptions<Item: Sendable>: Sendable {
    /// Keeps an item when it returns true. Items it rejects are hidden, or shown inside the
    /// section's group row when ``groupFilteredItems`` is true. Nil keeps every item.
    public var filter: (@Sendable (Item) -> Bool)?
    /// `areInIncreasingOrder` for the items of a section, applied after the fetch order;
    /// items it considers equal keep the fetch order. Nil keeps the fetch order.
    public var comparator: (@Sendable (Item, Item) -> Bool)?
    /// When true, each section whose items the filter rejected ends with one group row
    /// (``ResultsRow/group(_:)``) that holds those items in fetch order.
    public var groupFilteredItems: Bool

    /// Options; by default no filter, no comparator, no group rows.
    public init(
        filter: (@Sendable (Item) -> Bool)? = nil, comparator: (@Sendable (Item, Item) -> Bool)? = nil,
        groupFilteredItems: Bool = false
    ) {
        self.filter = filter
        self.comparator = comparator
        self.groupFilteredItems = groupFilteredItems
    }
}
