// MARK: - Applying a batch

extension ChangeBatch {
    /// What UIKit does with this batch: validates it, then builds the new state from `old`,
    /// taking from `dataSource` (the snapshot delivered with the batch) only what UIKit would
    /// ask the data source for — inserted sections and rows, and the new values of updated
    /// ones (``sectionUpdates``, ``itemUpdates``, ``movedAndUpdatedSections``,
    /// ``movedAndUpdatedItems``). Every other section and row keeps its old value.
    ///
    /// So `try batch.apply(to: old, reading: new) == new` holds exactly when the batch is
    /// valid **and** reports every change: a changed row that the batch forgot to report
    /// keeps its old value and the results differ.
    public func apply<Item, Section>(
        to old: ResultsSnapshot<Item, Section>, reading dataSource: ResultsSnapshot<Item, Section>
    ) throws(BatchValidationError) -> ResultsSnapshot<Item, Section> {
        let plan = try BatchValidator.plan(self, oldCounts: old.rowCounts, newCounts: dataSource.rowCounts)
        let updatedSections = Set(sectionUpdates)
        let sectionsUpdatedAfterMove = Set(movedAndUpdatedSections)
        let updatedRows = Set(itemUpdates)
        let rowsUpdatedAfterMove = Set(movedAndUpdatedItems)
        var sections: [ResultsSection<Item, Section>] = []
        sections.reserveCapacity(plan.sections.count)
        for (n, origin) in plan.sections.enumerated() {
            switch origin {
            case .inserted:
                sections.append(dataSource.sections[n])
            case .old(let o):
                let oldSection = old.sections[o]
                let value =
                    updatedSections.contains(o) || sectionsUpdatedAfterMove.contains(n)
                    ? dataSource.sections[n].value : oldSection.value
                var rows: [ResultsRow<Item>] = []
                rows.reserveCapacity(plan.rows[n].count)
                for (r, rowOrigin) in plan.rows[n].enumerated() {
                    let newPath = ItemPath(section: n, item: r)
                    switch rowOrigin {
                    case .inserted:
                        rows.append(dataSource[newPath])
                    case .old(let oldPath):
                        let reload = updatedRows.contains(oldPath) || rowsUpdatedAfterMove.contains(newPath)
                        rows.append(reload ? dataSource[newPath] : old[oldPath])
                    }
                }
                sections.append(ResultsSection(id: oldSection.id, value: value, rows: rows))
            }
        }
        return ResultsSnapshot(sections: sections)
    }
}
