import GRDB

/// Every value in memory (``ItemPayload``), every key in the index (``FullIndexKeys``).
struct EagerLoading<Item: StrataEntity>: ItemLoading {
    typealias Keys = FullIndexKeys
    private(set) var payload = ItemPayload<Item>()

    static var refetched: BatchBuilder.Known { .anything }

    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>
    ) throws {
        try fetchAll(db, fetcher: fetcher, index: &index, journal: &journal, keeping: nil)
    }

    /// Given the rows a commit wrote (`written`), the other items' values are taken from the
    /// payload as the rows are read, not decoded again (a commit of many rows refetches; the
    /// rows it did not write are most of the others).
    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, keepingValuesBesides written: CommittedChanges.TableChanges
    ) throws {
        try fetchAll(db, fetcher: fetcher, index: &index, journal: &journal, keeping: written)
    }

    private mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, keeping written: CommittedChanges.TableChanges?
    ) throws {
        let sectionObjects = try fetcher.sectionObjects(db)
        // An upper bound of the results' size, for the sort's buffers (and the first fetch).
        let (count, ids) = try fetcher.tableExtent(db)
        if index.isEmptyCapacity {
            // The first fetch: room for every row of the table, so that the dictionaries are
            // not copied while they grow, which would raise peak memory by a third.
            // Refetches keep the capacity they had.
            index.reserveCapacity(count, ids: ids)
            payload.reserveCapacity(count, ids: ids)
        }
        // The values held, for the rows not written (the copy keeps them while the payload is
        // rebuilt in a buffer of its own); not when nearly every row was written, where the
        // look-ups and the copy would cost more than the few rows they spare.
        let keepsValues = written.map {
            !payload.isEmptyCapacity && $0.inserted.count + $0.updated.count + $0.deleted.count < index.count * 9 / 10
        } ?? false
        let held = keepsValues ? payload : nil
        let reuse: ((Int64) -> Item?)? = held.map { held in
            { id in written!.updated.contains(id) || written!.inserted.contains(id) || written!.deleted.contains(id) ? nil : held[id] }
        }
        // A commit's refetch keeps the last snapshot's ids and values, so that its batch is
        // computed by id (``RefetchedRows``).
        if written != nil { journal.beginRefetch(index, values: payload) } else { journal.reset() }
        payload.removeAll()
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        let rowsAreItems = journal.rowsAreItems
        // Read in table order into the payload (each item's slot is its reading number),
        // then placed in the results' order; each shown item's bucket and slot are kept, and
        // the rows made after the loop, in this function (the per-row closure would look up
        // their types' generic metadata at every row).
        var shown: [(bucket: Int, slot: Int)] = []
        let sortedHere = try fetcher.forEachItemSortedHere(
            db, capacity: count, reusing: reuse, read: { payload.append($0.objectID.rawValue, $0) }
        ) {
            id, keys, slot in
            guard let bucket = index.appendFetched(id, keys, to: &builder), rowsAreItems else { return }
            shown.append((bucket, slot))
        }
        if !sortedHere {
            // A sort key with integers and reals both: SQLite sorts, the items read in its order.
            payload.removeAll()
            builder = index.beginBuild(sectionObjects: sectionObjects)
            var slot = 0
            try fetcher.forEachItem(db, ids: nil) { item, keys in
                payload.append(item.objectID.rawValue, item)
                defer { slot += 1 }
                guard let bucket = index.appendFetched(item.objectID.rawValue, keys, to: &builder), rowsAreItems else { return }
                shown.append((bucket, slot))
            }
        }
        var rows: [RowChunks<ResultsRow<Item>>] = []
        for (bucket, slot) in shown {
            if bucket == rows.count { rows.append(RowChunks()) }
            rows[bucket].append(.item(payload.value(atSlot: slot)))
        }
        shown = []
        for (section, bucket) in index.finishBuild(builder) where rowsAreItems {
            journal.setRows(rows[bucket], for: section)
        }
    }

    init() {}

    /// The values of results that were held in batched loading, read in one state.
    init(values: [Int64: Item]) {
        payload.reserveCapacity(values.count, ids: values.keys.min().map { $0...values.keys.max()! })
        for (id, item) in values { payload[id] = item }
    }

    static func refetches(_ tracked: ResultsQueryPlan.TrackedChanges, of count: Int, policy: RefetchPolicy) -> Bool {
        policy.refetches(affected: tracked.rowCount, of: count, costs: policy.eager)
    }

    static func refetches(written: Int, of count: Int, policy: RefetchPolicy) -> Bool {
        policy.refetches(affected: written, of: count, costs: policy.eager)
    }

    /// Re-reads the affected rows with their values; above the patch limit, merges them in
    /// passes over the touched sections (``SectionedIndex/replaceInBulk(gone:fetched:refetched:parallelMinimum:)``),
    /// else places them one at a time.
    mutating func apply<Section>(
        _ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>,
        index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>, policy: RefetchPolicy
    ) throws {
        try CommitRows.updateSections(tracked, db, fetcher: fetcher, index: &index, journal: &journal)
        let affected = tracked.affected
        if affected.isEmpty && tracked.deleted.isEmpty { return }
        var fetched: [CommitRows.Reread<Item>] = []
        fetched.reserveCapacity(affected.count)
        try fetcher.forEachItem(db, ids: affected.sorted()) { fetched.append(($0.objectID.rawValue, $0, $1)) }
        let gone = affected.union(tracked.deleted)
        // Values are replaced in place: removing a re-read row first would cost a second
        // probe of the dictionary (and its backward shift) per row.
        var refetched = Set<Int64>(minimumCapacity: fetched.count)
        for row in fetched {
            refetched.insert(row.id)
            if let item = row.item { payload[row.id] = item }
        }
        for id in gone where !refetched.contains(id) { payload[id] = nil }
        var changedRows = journal.takeRowJournal()
        if var rows = changedRows, !policy.patches(changed: gone.count, sections: index.sections.count) {
            try Self.replaceInBulk(
                gone: gone, reread: fetched, refetched: refetched, index: &index, journal: &journal, changedRows: &rows,
                policy: policy)
            journal.putRowJournal(rows)
            return
        }
        let patch = changedRows != nil
        try CommitRows.replaceOneByOne(
            gone: gone, reread: fetched, patch: patch, index: &index, journal: &journal, changedRows: &changedRows)
        if let changedRows { journal.putRowJournal(changedRows) }
    }

    /// A commit too large to patch row by row: the touched sections' rows are derived again,
    /// and the index is rebuilt where it changed in passes rather than row by row; every
    /// row's place before and after goes to `changedRows`.
    private static func replaceInBulk<Section>(
        gone: Set<Int64>, reread fetched: [CommitRows.Reread<Item>], refetched: Set<Int64>,
        index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>,
        changedRows: inout [Int64: RowChange], policy: RefetchPolicy
    ) throws {
        let replaced = try index.replaceInBulk(
            gone: gone, fetched: fetched.map { ($0.id, $0.keys) }, refetched: refetched,
            parallelMinimum: policy.parallelMergeMinimum)
        // The snapshot's rows of the touched sections follow the same merge.
        let sections = index.sections
        journal.replaced(
            in: replaced.touched, removals: replaced.removedIndexes, arrivals: replaced.arrivals,
            items: { fetched[$0].item }, counts: { sections[$0]?.items.count })
        changedRows.reserveCapacity(changedRows.count + replaced.old.count + replaced.new.count)
        for (id, place) in replaced.old { changedRows[id] = RowChange(old: place) }
        for (id, place) in replaced.new { changedRows[id, default: RowChange()].new = place }
    }

    func snapshotAndChanges<Section>(
        _ journal: inout SnapshotJournal<Item, Section>, _ index: SectionedIndex<Section, Keys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: SnapshotJournal<Item, Section>.Changes) {
        journal.snapshotAndChanges(index, payload)
    }

    /// The engine itself: its values are in memory already.
    func loadingEagerly<Section>(_ engine: any AnyResultsEngine<Item, Section>) -> any AnyResultsEngine<Item, Section> {
        engine
    }

    func _checkInvariants<Section>(against index: SectionedIndex<Section, Keys>) {
        payload._checkInvariants(against: index)
    }
}
