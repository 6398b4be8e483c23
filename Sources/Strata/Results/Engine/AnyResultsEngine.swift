import GRDB

/// A ``ResultsEngine`` whatever its loading: what ``ResultsPipeline`` holds.
protocol AnyResultsEngine<Item, Section>: AnyObject {
    associatedtype Item: StrataEntity
    associatedtype Section: Hashable & Sendable
    var fetcher: ResultsFetcher<Item, Section> { get }
    var options: ResultsOptions<Item> { get set }
    var policy: RefetchPolicy { get set }
    /// True after a failed input, until the next fetch (see ``CommitTracker``).
    var needsRefetch: Bool { get }
    func fetchAll(_ db: Database) throws
    @discardableResult func apply(_ changes: CommittedChanges, _ db: Database) throws -> Bool
    /// Tells the next commit where the item `id` is in the last snapshot (a user edit's row).
    func hintPlace(of id: Int64, in section: SectionID, at index: Int)
    func snapshot() -> ResultsSnapshot<Item, Section>
    func snapshotAndChanges() -> (snapshot: ResultsSnapshot<Item, Section>, changes: BatchBuilder.Known)
    /// This engine if it loads eagerly, else a new one loading eagerly in its state.
    func loadingEagerly() throws -> any AnyResultsEngine<Item, Section>
    /// A new engine loading eagerly, with this one's items, options and tracker, its values
    /// and keys read by `read` (see ``ItemLoading/loadingEagerly(_:)``).
    func eagerCopy(readingWith read: (_ body: (Database) throws -> Void) throws -> Void) throws -> any AnyResultsEngine<Item, Section>
    func _checkInvariants()
}
