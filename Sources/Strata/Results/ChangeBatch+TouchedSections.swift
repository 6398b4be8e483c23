extension ChangeBatch {
    /// The sections (by id) whose rows or presence this batch changes, from `old` to `new`.
    func touchedSections<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>
    ) -> Set<SectionID> {
        var ids = Set<SectionID>()
        for index in sectionDeletes { ids.insert(old.sections[index].id) }
        for index in sectionInserts { ids.insert(new.sections[index].id) }
        for path in itemDeletes + itemUpdates { ids.insert(old.sections[path.section].id) }
        for path in itemInserts + movedAndUpdatedItems { ids.insert(new.sections[path.section].id) }
        for move in itemMoves {
            ids.insert(old.sections[move.from.section].id)
            ids.insert(new.sections[move.to.section].id)
        }
        return ids
    }
}
