/// The rows of a table that a commit wrote (inserted, updated or deleted), asked about by id
/// once for every row of the last snapshot when a refetch answers the commit (those it did
/// not write keep their order, ``SnapshotJournal/keptOrder(in:besides:)``): a bit an id over the table's range of ids while that
/// takes less memory than a set of the ids written would (up to 128 ids a row written, and
/// 65,536 in any case), else one set — where the three sets of the changes cost three
/// hashes a row.
struct WrittenRows {
    private var bits: [UInt64] = []
    private var base: Int64 = 0
    private var set: Set<Int64>?

    /// The rows `changes` wrote, asked about only for ids in `ids` (the table's range of ids,
    /// nil when the table is empty).
    init(_ changes: CommittedChanges.TableChanges, ids: ClosedRange<Int64>?) {
        let written = changes.inserted.count + changes.updated.count + changes.deleted.count
        guard let ids, let width = Self.width(ids), width <= 128 * written + 65_536 else {
            set = changes.inserted.union(changes.updated).union(changes.deleted)
            return
        }
        base = ids.lowerBound
        bits = [UInt64](repeating: 0, count: width / 64 + 1)
        for rows in [changes.inserted, changes.updated, changes.deleted] {
            for id in rows where ids.contains(id) {
                let offset = Int(id - base)
                bits[offset >> 6] |= 1 << UInt64(offset & 63)
            }
        }
    }

    /// The number of ids in `range`, when it fits an `Int`.
    private static func width(_ range: ClosedRange<Int64>) -> Int? {
        let (width, overflow) = range.upperBound.subtractingReportingOverflow(range.lowerBound)
        return overflow || width >= Int64(Int.max) ? nil : Int(width) + 1
    }

    /// Whether the commit wrote the row `id` (an id in the range given, or any id when it
    /// was too wide).
    func contains(_ id: Int64) -> Bool {
        if let set { return set.contains(id) }
        let offset = id &- base
        guard offset >= 0, offset < Int64(bits.count) * 64 else { return false }
        return bits[Int(offset) >> 6] & (1 << UInt64(offset & 63)) != 0
    }
}
