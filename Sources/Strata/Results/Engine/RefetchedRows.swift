/// What the eager engine kept across a refetch of results whose rows are items: each
/// section's item ids in the last snapshot's state and in the new one, and a comparison of
/// an item's old and new values. ``BatchBuilder`` matches rows by these ids
/// (``RowMatching/init(oldIDs:newIDs:sections:differs:)``) instead of reading every row of
/// the two snapshots, which in code not specialized for the item type costs two copies of
/// every item: the difference of a refetch then costs a few array passes and one comparison
/// per item in both.
///
/// The batch is the identity difference of the two snapshots all the same (checked in debug
/// builds, see ``BatchBuilder/_check(_:from:to:known:)``); when a snapshot's section does
/// not hold as many rows as its ids (never, while the engine's invariants hold), the
/// difference is computed from the snapshots instead.
struct RefetchedRows {
    /// Each section's ids in the old snapshot's state.
    let oldIDs: [SectionID: RowChunks<Int64>]
    /// Each section's ids in the new snapshot's state.
    let newIDs: [SectionID: RowChunks<Int64>]
    /// The comparison that matched the rows ahead, if any (``RefetchComparison/matchRows(old:new:)``).
    let matchedAhead: RefetchComparison?
    /// Compares the values of the items in both states and returns the test of whether the
    /// item of an id has another value in the new one (called once, by the batch).
    let comparingValues: () -> (Int64) -> Bool

    init(
        oldIDs: [SectionID: RowChunks<Int64>], newIDs: [SectionID: RowChunks<Int64>], matchedAhead: RefetchComparison? = nil,
        comparingValues: @escaping () -> (Int64) -> Bool
    ) {
        self.oldIDs = oldIDs
        self.newIDs = newIDs
        self.matchedAhead = matchedAhead
        self.comparingValues = comparingValues
    }

    /// The rows of `old` and `new` matched by id, or nil when the ids kept do not describe
    /// the two snapshots' rows.
    func rowMatching<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>, sections: SectionMatching
    ) -> RowMatching? {
        var oldSections: [RowChunks<Int64>?] = []
        oldSections.reserveCapacity(old.sections.count)
        for (o, section) in old.sections.enumerated() {
            guard sections.oldToNew[o] != nil else {
                oldSections.append(nil)
                continue
            }
            guard let ids = oldIDs[section.id] ?? (section.rows.isEmpty ? RowChunks() : nil), ids.count == section.rows.count
            else { return nil }
            oldSections.append(ids)
        }
        var newSections: [RowChunks<Int64>?] = []
        newSections.reserveCapacity(new.sections.count)
        for (n, section) in new.sections.enumerated() {
            guard !sections.newIsInserted[n] else {
                newSections.append(nil)
                continue
            }
            guard let ids = newIDs[section.id] ?? (section.rows.isEmpty ? RowChunks() : nil), ids.count == section.rows.count
            else { return nil }
            newSections.append(ids)
        }
        if let matchedAhead,
            let rows = matchedAhead.rowMatching(
                old: old.sections.indices.map { old.sections[$0].id }, new: new.sections.indices.map { new.sections[$0].id })
        {
            return rows
        }
        return RowMatching(oldIDs: oldSections, newIDs: newSections, sections: sections, differs: comparingValues())
    }
}
