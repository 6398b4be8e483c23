/// What the user did to the delivered snapshot (see ``ResultsController/moveItem(from:to:)-(ItemPath,_)``
/// and ``ResultsController/deleteItem(at:)-(ItemPath)``), once its write succeeded: the input
/// that ``ResultsPipeline/edited(_:of:)`` turns into the snapshot the list view already shows
/// and the edit's batch.
enum UserEdit<Item: StrataEntity> {
    /// One row moved; `item` is its value as the edit's write left it, `valueChanged` when
    /// that differs from the value shown (a new parent).
    case move(Move<ItemPath>, item: Item, valueChanged: Bool)
    /// The row at this path was deleted; its section too when it was transient and is left
    /// empty.
    case delete(ItemPath)

    /// `old` with the edit made. A section a move leaves stays, empty, until the next batch
    /// removes it. Batched rows move by id, reading nothing, when the item's value did not
    /// change (a move inside its list: the position is not a property); otherwise rows are
    /// edited as values.
    func applied<Section>(to old: ResultsSnapshot<Item, Section>) -> ResultsSnapshot<Item, Section> {
        var sections = old.sections
        switch self {
        case .move(let move, let moved, let valueChanged):
            let source = move.from, destination = move.to
            let sourceSection = old.sections[source.section], targetSection = old.sections[destination.section]
            let moveIDs = !valueChanged
            var sourceRows = sourceSection.rows
            sourceRows.remove(at: source.item, keepingBatched: moveIDs)
            if source.section == destination.section {
                sourceRows.insert(.item(moved), id: moved.objectID.rawValue, at: destination.item, keepingBatched: moveIDs)
            } else {
                var destinationRows = targetSection.rows
                destinationRows.insert(.item(moved), id: moved.objectID.rawValue, at: destination.item, keepingBatched: moveIDs)
                sections[destination.section] = ResultsSection(id: targetSection.id, value: targetSection.value, rows: destinationRows)
            }
            sections[source.section] = ResultsSection(id: sourceSection.id, value: sourceSection.value, rows: sourceRows)
        case .delete(let path):
            let section = old.sections[path.section]
            var rows = section.rows
            rows.remove(at: path.item, keepingBatched: true)
            if rows.isEmpty && section.id.isTransient {
                sections.remove(at: path.section)
            } else {
                sections[path.section] = ResultsSection(id: section.id, value: section.value, rows: rows)
            }
        }
        return ResultsSnapshot(sections: sections)
    }

    /// The sections (by id) of `old` whose rows the edit changes.
    func touchedSections<Section>(of old: ResultsSnapshot<Item, Section>) -> Set<SectionID> {
        switch self {
        case .move(let move, _, _): [old.sections[move.from.section].id, old.sections[move.to.section].id]
        case .delete(let path): [old.sections[path.section].id]
        }
    }
}
