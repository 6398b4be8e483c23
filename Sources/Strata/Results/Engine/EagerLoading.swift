import GRDB

/// Every value in memory, held once, in the snapshot journal's item rows (whose chunks the
/// snapshots share; see ``SnapshotJournal``), every key in the index (``FullIndexKeys``).
struct EagerLoading<Item: StrataEntity>: ItemLoading {
    typealias Keys = FullIndexKeys

    static var refetched: BatchBuilder.Known { .anything }

    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>
    ) throws {
        try fetchAll(db, fetcher: fetcher, index: &index, journal: &journal, keeping: nil)
    }

    /// Given the rows a commit wrote (`written`), the last snapshot's state is kept to compute
    /// the batch by id, and the rows not written are given to the sort in their last order.
    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, afterWriting written: CommittedChanges.TableChanges
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
        // The first fetch: room for every row of the table, so that the tables are not
        // copied while they grow, which would raise peak memory by a third. Refetches keep
        // the capacity they had.
        if index.isEmptyCapacity { index.reserveCapacity(count, ids: ids) }
        // A commit's refetch keeps the last snapshot's ids and values, so that its batch is
        // computed by id (``RefetchedRows``), and gives its sort the rows the commit did not
        // write in their last order (not when it wrote nearly every row). When the commit
        // wrote some columns only, the values held are laid out by id on another thread
        // while the rows are read (``HeldValues``); once they are, each row's value is taken
        // from there with those columns read again, instead of decoded whole.
        let writtenRows: WrittenRows?
        var held: HeldValues<Item>?
        var reread: [Int32] = []
        if let written {
            let writtenCount: Int = written.inserted.count + written.updated.count + written.deleted.count
            journal.beginRefetch(index)
            writtenRows = index.count > 0 && writtenCount < index.count * 9 / 10 ? WrittenRows(written, ids: ids) : nil
            if let columns = Self.columnsToReread(written) {
                held = journal.heldValues(range: ids)
                reread = columns
                if waitsForHeldValues { held?.waitUntilLaidOut() }
            }
        } else {
            journal.reset()
            writtenRows = nil
        }
        let patch: ((Int64, EntityColumns) throws -> Item?)? = held.map { [reread] held in
            { id, columns in
                guard held.isReady, var item = held.take(id) else { return nil }
                for position in reread { try item.strataRead(columns, at: position) }
                return item
            }
        }
        // Read in table order (each item's slot is its reading number), then placed in the
        // results' order; each shown item's bucket and slot are kept, and the rows made after
        // the loop, in this function (the per-row closure would look up their types' generic
        // metadata at every row). The values read are dropped once placed. A commit's refetch
        // compares them with the last snapshot's on another thread meanwhile
        // (``SnapshotJournal/compareRefetched(with:)``).
        var read = ItemPayload<Item>()
        read.reserveCapacity(count, ids: ids)
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        var shown: [(bucket: Int, slot: Int)] = []
        let sortedHere = try fetcher.forEachItemSortedHere(
            db, capacity: count, patching: patch, read: { read.append($0.objectID.rawValue, $0) },
            afterReading: { journal.compareRefetched(with: read) },
            // The rows not written keep their order: the sort takes them in runs.
            leading: { writtenRows.map { journal.keptOrder(in: read, besides: $0) } ?? [] }
        ) {
            id, keys, slot in
            guard let bucket = index.appendFetched(id, keys, to: &builder) else { return }
            shown.append((bucket, slot))
        }
        if !sortedHere {
            // A sort key with integers and reals both: SQLite sorts, the items read in its order.
            read.removeAll()
            shown.removeAll()
            builder = index.beginBuild(sectionObjects: sectionObjects)
            var slot = 0
            try fetcher.forEachItem(db, ids: nil) { item, keys in
                read.append(item.objectID.rawValue, item)
                defer { slot += 1 }
                guard let bucket = index.appendFetched(item.objectID.rawValue, keys, to: &builder) else { return }
                shown.append((bucket, slot))
            }
            journal.compareRefetched(with: read)
        }
        let sections = index.finishBuild(builder)
        // A commit's refetch matches the last snapshot's rows with these by id on another
        // thread while the rows are made (``SnapshotJournal/matchRefetched(_:)``).
        journal.matchRefetched(index)
        var rows: [RowChunks<ResultsRow<Item>>] = []
        for (bucket, slot) in shown {
            if bucket == rows.count { rows.append(RowChunks()) }
            rows[bucket].append(.item(read.value(atSlot: slot)))
        }
        var placed = 0
        for (section, bucket) in sections {
            journal.setRows(rows[bucket], for: section)
            placed += rows[bucket].count
        }
        shown = []
        rows = []
        // Hidden items (their section is not shown) keep their values beside the rows.
        if placed < index.count {
            read.forEach { id, item in
                if index.keys.section(of: id) == .some(nil) { journal.keepUnplaced(id, item) }
            }
        }
    }

    /// Tests: a commit's refetch waits for the values held to be laid out before it reads,
    /// so that every row it can take from them is taken (see ``HeldValues``).
    var waitsForHeldValues = false

    init() {}

    /// The positions in `Item.strataColumnNames` of the columns the commit may have written
    /// (`updatedColumns`, a superset); nil when a refetch should decode every row whole: the
    /// entity is decoded from rows, or the commit may have written its key or more than half
    /// of its columns.
    static func columnsToReread(_ written: CommittedChanges.TableChanges) -> [Int32]? {
        let names = Item.strataColumnNames.map { $0.lowercased() }
        // Rows updated without the columns named: any column may have changed.
        guard !names.isEmpty, written.updated.isEmpty || !written.updatedColumns.isEmpty else { return nil }
        var positions: [Int32] = []
        for column in written.updatedColumns {
            // A column the entity does not store cannot change its value.
            guard let position = names.firstIndex(of: column.lowercased()) else { continue }
            guard position > 0 else { return nil }
            positions.append(Int32(position))
        }
        guard positions.count * 2 <= names.count - 1 else { return nil }
        return positions.sorted()
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
        // The values of gone items that no section's rows hold (hidden ones) go; a re-read
        // item that is hidden now keeps its value beside the rows.
        for id in gone { journal.forgetUnplaced(id) }
        defer {
            for row in fetched where index.keys.section(of: row.id) == .some(nil) {
                if let item = row.item { journal.keepUnplaced(row.id, item) }
            }
        }
        var changedRows = journal.takeRowJournal()
        if var rows = changedRows, !policy.patches(changed: gone.count, sections: index.sections.count) {
            let refetched = Set(fetched.lazy.map(\.id))
            try Self.replaceInBulk(
                gone: gone, reread: fetched, refetched: refetched, index: &index, journal: &journal, changedRows: &rows,
                policy: policy)
            journal.putRowJournal(rows)
            return
        }
        try CommitRows.replaceOneByOne(gone: gone, reread: fetched, index: &index, journal: &journal, changedRows: &changedRows)
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
        var byID: [Int64: Item]?
        journal.replaced(
            in: replaced.touched, removals: replaced.removedIndexes, arrivals: replaced.arrivals,
            items: { fetched[$0].item }, sectionItems: { sections[$0]?.items }
        ) { id in
            // Rows placed one by one (rare): their values by id.
            if byID == nil { byID = Dictionary(fetched.lazy.compactMap { row in row.item.map { (row.id, $0) } }) { $1 } }
            return byID![id]
        }
        changedRows.reserveCapacity(changedRows.count + replaced.old.count + replaced.new.count)
        for (id, place) in replaced.old { changedRows[id] = RowChange(old: place) }
        for (id, place) in replaced.new { changedRows[id, default: RowChange()].new = place }
    }

    func snapshotAndChanges<Section>(
        _ journal: inout SnapshotJournal<Item, Section>, _ index: SectionedIndex<Section, Keys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: SnapshotJournal<Item, Section>.Changes) {
        journal.snapshotAndChanges(index)
    }

    /// The engine itself: its values are in memory already.
    func loadingEagerly<Section>(_ engine: any AnyResultsEngine<Item, Section>) -> any AnyResultsEngine<Item, Section> {
        engine
    }

    func _checkInvariants<Section>(against index: SectionedIndex<Section, Keys>, journal: SnapshotJournal<Item, Section>) {
        journal._checkValues(against: index)
    }
}
