/// The values of the items a ``SectionedIndex`` places, by id: every indexed item, shown or
/// hidden, has its value here and nothing else does. Kept apart from the index so that
/// values can be loaded on their own terms (in pages, later) while the index stays whole.
struct ItemPayload<Item: StrataEntity> {
    /// Each value at its id's slot: one small hash table and one array, not a dictionary
    /// whose buckets each hold a value (see ``IDSlots``).
    private var slots = IDSlots()
    private var values: ContiguousArray<Item> = []

    var isEmptyCapacity: Bool { slots.isEmptyCapacity }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>? = nil) {
        slots.reserveCapacity(count, ids: ids)
        values.reserveCapacity(count)
    }

    mutating func removeAll() {
        slots.removeAll()
        values.removeAll(keepingCapacity: true)
    }

    /// The value of the item `id`.
    subscript(id: Int64) -> Item? {
        get { slots.slot(of: id).map { values[$0] } }
        set {
            if let newValue {
                if let slot = slots.slot(of: id) {
                    values[slot] = newValue
                } else {
                    _ = slots.append(id)
                    values.append(newValue)
                }
            } else if let freed = slots.remove(id) {
                values.removeSlot(freed)
            }
        }
    }

    /// Adds the value of the item `id`, which has none (a build's, after ``removeAll()``):
    /// no look-up of its slot.
    mutating func append(_ id: Int64, _ item: Item) {
        _ = slots.append(id)
        values.append(item)
    }

    /// The value in `slot`: the `slot`-th value appended since ``removeAll()``, while none
    /// was removed.
    func value(atSlot slot: Int) -> Item { values[slot] }

    /// Checks that the payload holds exactly the indexed items, each under its own id
    /// (debug builds only).
    func _checkInvariants<Section>(against index: SectionedIndex<Section, FullIndexKeys>) {
        #if DEBUG
        precondition(values.count == slots.count && slots.count == index.count, "payload and index hold different items")
        for (id, item) in zip(slots.ids, values) {
            precondition(item.objectID.rawValue == id, "item \(item.objectID) stored under id \(id)")
            precondition(slots.slot(of: id) != nil, "item \(id) has no slot")
            precondition(index.contains(id), "item \(id) has a value but no place")
        }
        #endif
    }
}

/// When a commit is answered by a refetch rather than by re-reading its rows.
struct RefetchPolicy: Hashable, Sendable {
    /// A commit that affects more than `max(minimum, ratio × results)` items refetches.
    var minimum: Int
    var ratio: Double
    /// A commit that changes at most `max(patchLimit, patchLimitPerSection × sections)` rows
    /// patches the snapshot's rows in place, one removal and one insertion per row; above,
    /// the changed sections are derived again. A patch moves on average half a section per
    /// row, a derivation reads every row of the changed sections, so the limit grows with
    /// the number of sections (smaller sections for the same results).
    var patchLimit: Int
    var patchLimitPerSection: Int
    /// A commit rebuilt in bulk merges its sections on several threads when they hold at
    /// least this many items in all (and the machine has more than one core).
    var parallelMergeMinimum: Int

    init(
        minimum: Int = 64, ratio: Double = 0.6, patchLimit: Int = 64, patchLimitPerSection: Int = 32,
        parallelMergeMinimum: Int = 20_000
    ) {
        self.minimum = minimum
        self.ratio = ratio
        self.patchLimit = patchLimit
        self.patchLimitPerSection = patchLimitPerSection
        self.parallelMergeMinimum = parallelMergeMinimum
    }

    /// Whether a commit that changed `changed` rows of results in `sections` sections
    /// patches the snapshot's rows rather than deriving the changed sections again.
    func patches(changed: Int, sections: Int) -> Bool {
        changed <= max(patchLimit, patchLimitPerSection * sections)
    }

    /// Every commit refetches (tests).
    static var always: RefetchPolicy {
        var policy = RefetchPolicy(minimum: 0, ratio: 0)
        policy.batchedRatio = 0
        return policy
    }
    /// No commit refetches for its size (tests); other reasons still refetch.
    static var never: RefetchPolicy { RefetchPolicy(minimum: .max) }

    /// A batched (compact) index has no bulk path: it places each changed row by binary
    /// searches that read keys from the database, so it refetches above this share instead.
    var batchedRatio: Double = 0.25

    /// Whether `affected` items out of `count` are better answered by a refetch (`batched`:
    /// for a compact index, see ``batchedRatio``).
    func refetches(affected: Int, of count: Int, batched: Bool = false) -> Bool {
        affected > max(minimum, Int(Double(count) * min(ratio, batched ? batchedRatio : ratio)))
    }
}
