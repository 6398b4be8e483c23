import GRDB

/// The steps of a commit that both loadings take, on their index and journal: the section
/// objects read again, and the affected items removed and placed again one at a time, their
/// places journaled before and after. Each loading's ``ItemLoading/apply(_:_:fetcher:index:journal:policy:)``
/// composes them with its own reads and values.
enum CommitRows {
    /// A row read afresh: id, value (nil when the loading keeps no values), keys.
    typealias Reread<Item> = (id: Int64, item: Item?, keys: IndexKeys)

    /// Re-reads the section objects the commit changed (every one when it names none).
    static func updateSections<Item, Section, Keys>(
        _ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>,
        index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>
    ) throws {
        guard let ids = tracked.sectionObjects else { return }
        if ids.isEmpty {
            journal.invalidate(try index.refreshSections(try fetcher.sectionObjects(db)))
        } else {
            journal.invalidate(try index.updateSections(try fetcher.sectionObjects(db, ids: ids), ids: ids))
        }
    }

    /// Removes every `gone` item, then places the re-read ones, one at a time, the journal's
    /// rows following; with a row journal (`changedRows`), journals every row's place before
    /// and after in it.
    static func replaceOneByOne<Item, Section, Keys>(
        gone: Set<Int64>, reread fetched: [Reread<Item>], index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, changedRows: inout [Int64: RowChange]?
    ) throws {
        guard var rows = changedRows else {
            for id in gone { try remove(id, index: &index, journal: &journal) }
            for row in fetched { try insert(row, index: &index, journal: &journal) }
            return
        }
        defer { changedRows = rows }
        if gone.count == 1, fetched.count <= 1, let id = gone.first {
            // One row (most commits): where it is removed from and inserted at are its places
            // before and after, without searching for them again.
            if let old = try remove(id, index: &index, journal: &journal) { rows[id] = RowChange(old: old) }
            if let row = fetched.first, let new = try insert(row, index: &index, journal: &journal) {
                rows[row.id, default: RowChange()].new = new
            }
            return
        }
        for id in gone {
            if let place = try index.place(of: id) { rows[id] = RowChange(old: place) }
        }
        for id in gone { try remove(id, index: &index, journal: &journal) }
        for row in fetched { try insert(row, index: &index, journal: &journal) }
        for row in fetched {
            if let place = try index.place(of: row.id) { rows[row.id, default: RowChange()].new = place }
        }
    }

    /// Removes the item `id`; returns where it was shown.
    @discardableResult
    private static func remove<Item, Section, Keys>(
        _ id: Int64, index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>
    ) throws -> RowChange.Place? {
        guard let removal = try index.remove(id) else { return nil }
        journal.removed(id, at: removal.index, from: removal.section)
        if removal.sectionRemoved { journal.invalidate([removal.section]) }
        return RowChange.Place(section: removal.section, index: removal.index)
    }

    /// Places a row read afresh; returns where it is shown.
    @discardableResult
    private static func insert<Item, Section, Keys>(
        _ row: Reread<Item>, index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>
    ) throws -> RowChange.Place? {
        guard let place = try index.insert(row.id, row.keys) else { return nil }
        journal.inserted(row.id, row.item, at: place.index, in: place.section)
        return place
    }
}
