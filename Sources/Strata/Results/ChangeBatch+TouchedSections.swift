extension ChangeBatch {
    /// The sections (by id) whose rows or presence this batch changes, from `old` to `new`.
    ///
    /// Marks sections by index first and makes the set from the marks, so that a batch of
    /// many rows (a refetch's, with a move or an update for most rows) costs a flag per row,
    /// not a hash insert per row.
    func touchedSections<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>
    ) -> Set<SectionID> {
        var oldTouched = [Bool](repeating: false, count: old.sections.count)
        var newTouched = [Bool](repeating: false, count: new.sections.count)
        for index in sectionDeletes { oldTouched[index] = true }
        for index in sectionInserts { newTouched[index] = true }
        for path in itemDeletes { oldTouched[path.section] = true }
        for path in itemUpdates { oldTouched[path.section] = true }
        for path in itemInserts { newTouched[path.section] = true }
        for path in movedAndUpdatedItems { newTouched[path.section] = true }
        for move in itemMoves {
            oldTouched[move.from.section] = true
            newTouched[move.to.section] = true
        }
        var ids = Set<SectionID>()
        for index in oldTouched.indices where oldTouched[index] { ids.insert(old.sections[index].id) }
        for index in newTouched.indices where newTouched[index] { ids.insert(new.sections[index].id) }
        return ids
    }
}
