/// The values of the items a ``SectionedIndex`` places, by id: every indexed item, shown or
/// hidden, has its value here and nothing else does. Kept apart from the index so that
/// values can be loaded on their own terms (in pages, later) while the index stays whole.
struct ItemPayload<Item: StrataEntity> {
    private var items: [Int64: Item] = [:]

    var isEmptyCapacity: Bool { items.capacity == 0 }

    mutating func reserveCapacity(_ count: Int) {
        items.reserveCapacity(count)
    }

    mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
    }

    /// The value of the item `id`.
    subscript(id: Int64) -> Item? {
        get { items[id] }
        set { items[id] = newValue }
    }

    /// Checks that the payload holds exactly the indexed items, each under its own id
    /// (debug builds only).
    func _checkInvariants<Section>(against index: SectionedIndex<Section>) {
        #if DEBUG
        precondition(items.count == index.records.count, "payload and index hold different items")
        for (id, item) in items {
            precondition(item.id.rawValue == id, "item \(item.id) stored under id \(id)")
            precondition(index.records[id] != nil, "item \(id) has a value but no place")
        }
        #endif
    }
}

/// When a commit is answered by a refetch rather than by re-reading its rows.
struct RefetchPolicy: Hashable, Sendable {
    /// A commit that affects more than `max(minimum, ratio × results)` items refetches.
    var minimum: Int
    var ratio: Double
    /// Above this many changed rows in one commit, changed sections are derived again rather
    /// than patched row by row.
    var patchLimit: Int

    init(minimum: Int = 64, ratio: Double = 0.25, patchLimit: Int = 64) {
        self.minimum = minimum
        self.ratio = ratio
        self.patchLimit = patchLimit
    }

    /// Every commit refetches (tests).
    static var always: RefetchPolicy { RefetchPolicy(minimum: 0, ratio: 0) }
    /// No commit refetches for its size (tests); other reasons still refetch.
    static var never: RefetchPolicy { RefetchPolicy(minimum: .max) }

    /// Whether `affected` items out of `count` are better answered by a refetch.
    func refetches(affected: Int, of count: Int) -> Bool {
        affected > max(minimum, Int(Double(count) * ratio))
    }
}
