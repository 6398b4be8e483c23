import Foundation
import GRDB

/// The synchronous state machine behind ``ResultsController``: fetches, applies commits
/// incrementally, and derives snapshots. Not thread-safe; its owner serialises access.
///
/// It composes four parts, each with its own invariants:
/// - ``ResultsFetcher``: every read (stateless, `Sendable`);
/// - ``SectionedIndex``: where each item is, by id and keys alone;
/// - ``ItemPayload``: the items' values;
/// - ``SnapshotJournal``: the options, the rows derived for the next snapshot, and what
///   changed since the last one;
///
/// and a ``RefetchPolicy`` that says when a commit is answered by a refetch. Commits re-read
/// only affected rows by id and place them by binary search with ``DatabaseValueOrdering``,
/// which orders exactly as SQLite's `ORDER BY`.
final class ResultsEngine<Item: StrataEntity, Section: Hashable & Sendable> {
    typealias Changes = SnapshotJournal<Item, Section>.Changes

    let fetcher: ResultsFetcher<Item, Section>
    private(set) var index: SectionedIndex<Section>
    private(set) var payload = ItemPayload<Item>()
    private var journal: SnapshotJournal<Item, Section>
    var policy = RefetchPolicy()

    var plan: ResultsQueryPlan { fetcher.plan }

    var options: ResultsOptions<Item> {
        get { journal.options }
        set { journal.options = newValue }
    }

    init(request: ResultsRequest<Item, Section>, schema: SchemaDescriptor, options: ResultsOptions<Item>) throws {
        let plan = try ResultsQueryPlan(request: request, schema: schema)
        if case .none = plan.sectionKind {
            guard NoSection() is Section else { throw ResultsError.sectionTypeMismatch(String(describing: Section.self)) }
        }
        fetcher = ResultsFetcher(plan: plan)
        index = SectionedIndex(kind: plan.sectionKind, itemDescending: plan.itemDescending)
        journal = SnapshotJournal(options: options)
    }

    // MARK: - Fetching

    /// Replaces the whole state with a fresh fetch, in one pass over the rows: index,
    /// payload, and (without post-fetch options, where rows are items) the snapshot's rows.
    func fetchAll(_ db: Database) throws {
        let sectionObjects = try fetcher.sectionObjects(db)
        if index.isEmptyCapacity {
            // The first fetch: room for every row of the table, so that the dictionaries are
            // not copied while they grow, which would raise peak memory by a third.
            // Refetches keep the capacity they had.
            let count = try fetcher.tableRowCount(db)
            index.reserveCapacity(count)
            payload.reserveCapacity(count)
        }
        payload.removeAll()
        journal.reset()
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        let rowsAreItems = journal.rowsAreItems
        var rows: [[ResultsRow<Item>]] = []
        try fetcher.forEachItem(db, ids: nil) { item, keys in
            let id = item.id.rawValue
            payload[id] = item
            guard let bucket = index.appendFetched(id, keys, to: &builder), rowsAreItems else { return }
            if bucket == rows.count { rows.append([]) }
            rows[bucket].append(.item(item))
        }
        for (section, bucket) in index.finishBuild(builder) where rowsAreItems {
            journal.setRows(rows[bucket], for: section)
        }
    }

    // MARK: - Incremental maintenance

    /// Brings the state up to date with one commit (or several merged). Returns false when
    /// the commit cannot have changed the results.
    @discardableResult
    func apply(_ changes: CommittedChanges, _ db: Database) throws -> Bool {
        // Changes announced without row detail (another process's writes) to a table the
        // results read: refetch; the batch is then the identity difference.
        if !changes.invalidatedTables.isDisjoint(with: plan.readTables) {
            try fetchAll(db)
            return true
        }
        journal.beginCommit()
        let changedTables = Set(changes.tables.keys.filter { !changes[$0].isEmpty })
        if !plan.refetchTables.isDisjoint(with: changedTables) {
            try fetchAll(db)
            return true
        }
        var relevant = false
        // 1. Section objects.
        if case .entity(_, let entity, _, _, _) = plan.sectionKind, !plan.sectionTables.isDisjoint(with: changedTables) {
            relevant = true
            if plan.sectionsDependOnOwnRowOnly {
                let ids = changes[entity].all
                journal.invalidate(index.updateSections(try fetcher.sectionObjects(db, ids: ids), ids: ids))
            } else {
                journal.invalidate(index.refreshSections(try fetcher.sectionObjects(db)))
            }
        }
        // 2. Affected items.
        let own = changes[plan.itemEntity]
        var affected = own.inserted.union(own.updated)
        for dependency in plan.dependencies {
            let table = changes[dependency.table]
            if table.isEmpty { continue }
            var ids = table.inserted.union(table.deleted)
            if let columns = dependency.columns {
                if !columns.isDisjoint(with: table.updatedColumns) { ids.formUnion(table.updated) }
            } else {
                ids.formUnion(table.updated)
            }
            if ids.isEmpty { continue }
            affected.formUnion(try fetcher.itemIDs(db, where: dependency.foreignKeyPath, in: ids))
        }
        for join in plan.joinDependencies {
            let links = changes[join.joinTable]
            if !links.isEmpty {
                // A link or unlink: the join row names the item. A join row rewritten in
                // place, or one without recorded values, is not traced: refetch.
                let touched = links.inserted.union(links.deleted)
                guard links.updated.isEmpty, touched.allSatisfy({ links.joinRows[$0]?[join.itemColumn] != nil }) else {
                    try fetchAll(db)
                    return true
                }
                for rowID in touched { affected.insert(links.joinRows[rowID]![join.itemColumn]!) }
            }
            let destinations = changes[join.destination]
            if destinations.isEmpty { continue }
            // Deleted or new destinations (dangling links of a `noAction` rule), and updated
            // ones when the part reads a written column: the items still linked to them.
            var ids = destinations.inserted.union(destinations.deleted)
            if !join.columns.isDisjoint(with: destinations.updatedColumns) { ids.formUnion(destinations.updated) }
            if !ids.isEmpty { affected.formUnion(try fetcher.linkedItemIDs(db, join, to: ids)) }
        }
        if affected.isEmpty && own.deleted.isEmpty { return relevant }
        if policy.refetches(affected: affected.count + own.deleted.count, of: index.records.count) {
            try fetchAll(db)
            return true
        }
        // 3. Remove every affected or deleted item, then insert the re-read ones; journal
        // their places before and after.
        var fetched: [(item: Item, keys: IndexKeys)] = []
        fetched.reserveCapacity(affected.count)
        try fetcher.forEachItem(db, ids: Array(affected)) { fetched.append(($0, $1)) }
        let gone = affected.union(own.deleted)
        guard var rows = journal.takeRowJournal() else {
            for id in gone { remove(id, patch: false) }
            for (item, keys) in fetched { insert(item, keys, patch: false) }
            return true
        }
        let patch = policy.patches(changed: gone.count, sections: index.sections.count)
        for id in gone {
            if let place = index.place(of: id) { rows[id] = RowChange(old: place) }
        }
        for id in gone { remove(id, patch: patch) }
        for (item, keys) in fetched { insert(item, keys, patch: patch) }
        for (item, _) in fetched {
            let id = item.id.rawValue
            if let place = index.place(of: id) { rows[id, default: RowChange()].new = place }
        }
        journal.putRowJournal(rows)
        return true
    }

    private func remove(_ id: Int64, patch: Bool) {
        payload[id] = nil
        guard let removal = index.remove(id) else { return }
        journal.removed(at: removal.index, from: removal.section, patch: patch)
        if removal.sectionRemoved { journal.invalidate([removal.section]) }
    }

    private func insert(_ item: Item, _ keys: IndexKeys, patch: Bool) {
        let id = item.id.rawValue
        payload[id] = item
        guard let place = index.insert(id, keys) else { return }
        journal.inserted(item, at: place.index, in: place.section, patch: patch)
    }

    // MARK: - Snapshots

    /// The current results, with the post-fetch options applied.
    func snapshot() -> ResultsSnapshot<Item, Section> { snapshotAndChanges().snapshot }

    /// The current results, and what changed since the previous call.
    func snapshotAndChanges() -> (snapshot: ResultsSnapshot<Item, Section>, changes: Changes) {
        journal.snapshotAndChanges(index, payload)
    }

    // MARK: - Invariants

    /// Checks every part's invariants (debug builds only).
    func _checkInvariants() {
        #if DEBUG
        index._checkInvariants()
        payload._checkInvariants(against: index)
        journal._checkInvariants(against: index)
        #endif
    }
}
