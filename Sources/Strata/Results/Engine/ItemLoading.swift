import GRDB

/// How a ``ResultsEngine`` holds its items' values, and with them what its index keeps:
/// every value in memory with every key (``EagerLoading``), or values read in pages by the
/// snapshots and keys left in the database (``BatchedLoading``). Chosen once, with the
/// engine's type: the engine's steps are the same for both, and each step's difference is
/// one of these requirements.
protocol ItemLoading<Item> {
    associatedtype Item: StrataEntity
    /// What the index keeps of each item.
    associatedtype Keys: IndexKeyStore

    /// Whether values are read in pages (see ``ResultsLoading``).
    static var isBatched: Bool { get }

    /// Replaces the whole state with a fresh fetch: `index`, the values, and the snapshot's
    /// rows where the journal keeps them.
    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>
    ) throws

    /// Whether a commit that affects `tracked` items of results holding `count` is answered
    /// by a refetch.
    static func refetches(_ tracked: ResultsQueryPlan.TrackedChanges, of count: Int, policy: RefetchPolicy) -> Bool

    /// Before a commit's items are placed (values for older snapshots, key reading).
    mutating func beginCommit<Section>(
        _ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>,
        index: inout SectionedIndex<Section, Keys>
    ) throws
    /// After a commit's items are placed: `leaving` are the items it took out of the results
    /// without deleting them (see ``mayLeave(affected:reread:index:)``).
    mutating func endCommit<Section>(leaving: [Int64], index: inout SectionedIndex<Section, Keys>)

    /// The rows `ids` (in rowid order) read afresh: id, value (nil when values are not
    /// kept), keys.
    func reread<Section>(
        _ ids: [Int64], _ db: Database, fetcher: ResultsFetcher<Item, Section>
    ) throws -> [(id: Int64, item: Item?, keys: IndexKeys)]

    /// Of the `affected` items, those a commit may take out of the results without
    /// deleting them and which must be followed (older snapshots may show them).
    func mayLeave<Section>(
        affected: Set<Int64>, reread: [(id: Int64, item: Item?, keys: IndexKeys)], index: SectionedIndex<Section, Keys>
    ) -> [Int64]

    /// Applies a commit too large to patch row by row in passes over the touched sections,
    /// journaling every row's place before and after in `changedRows`; false when this
    /// loading has no such path (and the commit is applied row by row).
    mutating func replaceInBulk<Section>(
        gone: Set<Int64>, reread: [(id: Int64, item: Item?, keys: IndexKeys)], index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, changedRows: inout [Int64: RowChange], policy: RefetchPolicy
    ) throws -> Bool

    /// The item `id` left the results.
    mutating func removed(_ id: Int64)
    /// The item `id` was read afresh (`item` nil when values are not kept).
    mutating func inserted(_ id: Int64, _ item: Item?)

    /// The snapshot of `index` with these values, and what changed since the last one.
    func snapshotAndChanges<Section>(
        _ journal: inout SnapshotJournal<Item, Section>, _ index: SectionedIndex<Section, Keys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: SnapshotJournal<Item, Section>.Changes)

    /// What a refetch tells the batch builder.
    static var refetched: BatchBuilder.Known { get }

    /// Runs `body` with a read in the state of the last commit applied (batched loading's
    /// pinned reader), to leave this loading; nothing when there is no such state.
    func readInCurrentState(_ body: (Database) throws -> Void) throws

    /// Checks the values against `index` (debug builds only).
    func _checkInvariants<Section>(against index: SectionedIndex<Section, Keys>)
}

// MARK: - Eager

/// Every value in memory (``ItemPayload``), every key in the index (``FullIndexKeys``).
struct EagerLoading<Item: StrataEntity>: ItemLoading {
    typealias Keys = FullIndexKeys
    private(set) var payload = ItemPayload<Item>()

    static var isBatched: Bool { false }
    static var refetched: BatchBuilder.Known { .anything }

    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>
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
        payload.removeAll()
        journal.reset()
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        let rowsAreItems = journal.rowsAreItems
        // Read in table order into the payload (each item's slot is its reading number),
        // then placed in the results' order; each shown item's bucket and slot are kept, and
        // the rows made after the loop, in this function (the per-row closure would look up
        // their types' generic metadata at every row).
        var shown: [(bucket: Int, slot: Int)] = []
        let sortedHere = try fetcher.forEachItemSortedHere(db, capacity: count, read: { payload.append($0.objectID.rawValue, $0) }) {
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
        policy.refetches(affected: tracked.rowCount, of: count)
    }

    func beginCommit<Section>(
        _ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>,
        index: inout SectionedIndex<Section, Keys>
    ) {}

    func endCommit<Section>(leaving: [Int64], index: inout SectionedIndex<Section, Keys>) {}

    func reread<Section>(
        _ ids: [Int64], _ db: Database, fetcher: ResultsFetcher<Item, Section>
    ) throws -> [(id: Int64, item: Item?, keys: IndexKeys)] {
        var fetched: [(id: Int64, item: Item?, keys: IndexKeys)] = []
        fetched.reserveCapacity(ids.count)
        try fetcher.forEachItem(db, ids: ids) { fetched.append(($0.objectID.rawValue, $0, $1)) }
        return fetched
    }

    /// Nothing to follow: no snapshot reads values later.
    func mayLeave<Section>(
        affected: Set<Int64>, reread: [(id: Int64, item: Item?, keys: IndexKeys)], index: SectionedIndex<Section, Keys>
    ) -> [Int64] { [] }

    mutating func replaceInBulk<Section>(
        gone: Set<Int64>, reread fetched: [(id: Int64, item: Item?, keys: IndexKeys)],
        index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>,
        changedRows: inout [Int64: RowChange], policy: RefetchPolicy
    ) throws -> Bool {
        // The touched sections' rows are derived again, and the index is rebuilt where it
        // changed in passes rather than row by row. Values are replaced in place: removing a
        // re-read row first would cost a second probe of the dictionary (and its backward
        // shift) per row.
        var refetched = Set<Int64>(minimumCapacity: fetched.count)
        for row in fetched {
            refetched.insert(row.id)
            if let item = row.item { payload[row.id] = item }
        }
        for id in gone where !refetched.contains(id) { payload[id] = nil }
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
        return true
    }

    mutating func removed(_ id: Int64) { payload[id] = nil }

    mutating func inserted(_ id: Int64, _ item: Item?) {
        if let item { payload[id] = item }
    }

    func snapshotAndChanges<Section>(
        _ journal: inout SnapshotJournal<Item, Section>, _ index: SectionedIndex<Section, Keys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: SnapshotJournal<Item, Section>.Changes) {
        journal.snapshotAndChanges(index, payload)
    }

    /// Values are in memory: there is no other state to read in.
    func readInCurrentState(_ body: (Database) throws -> Void) {}

    func _checkInvariants<Section>(against index: SectionedIndex<Section, Keys>) {
        payload._checkInvariants(against: index)
    }
}

// MARK: - Batched

/// Values read in pages by the snapshots through a reader pinned to the engine's state
/// (``PageLoader``), keys left in the database (``CompactIndexKeys``).
struct BatchedLoading<Item: StrataEntity>: ItemLoading {
    typealias Keys = CompactIndexKeys
    let store: Store
    let path: String
    let pageSize: Int
    let cachedPages: Int
    /// Made by the first fetch.
    private(set) var loader: PageLoader<Item>?

    init(store: Store, path: String, pageSize: Int, cachedPages: Int) {
        self.store = store
        self.path = path
        self.pageSize = pageSize
        self.cachedPages = cachedPages
    }

    static var isBatched: Bool { true }
    /// Values are not loaded to compare: the batch builder reloads.
    static var refetched: BatchBuilder.Known { .refetchedInPages }

    /// Ids and keys only; the snapshots' pages read the values later, through a reader
    /// pinned to this state.
    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>
    ) throws {
        let sectionObjects = try fetcher.sectionObjects(db)
        // An upper bound of the results' size, for the sort's buffers (and the first fetch).
        let (count, ids) = try fetcher.tableExtent(db)
        if index.isEmptyCapacity { index.reserveCapacity(count, ids: ids) }
        if let loader {
            try loader.detach()
        } else {
            loader = try PageLoader(store: store, path: path, pageSize: pageSize, cachedPages: cachedPages)
        }
        journal.reset()
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        try index.appendFetched(from: { try fetcher.forEachRawKey(db, capacity: count, $0) }, to: &builder)
        _ = index.finishBuild(builder)
    }

    /// A compact index has no bulk path: it places each changed row by binary searches that
    /// read keys from the database, and a refetch reads ids and keys only, so it decides with
    /// costs of its own (``RefetchPolicy/batched``), also for the rows the commit wrote itself
    /// (their values are kept for older snapshots).
    static func refetches(_ tracked: ResultsQueryPlan.TrackedChanges, of count: Int, policy: RefetchPolicy) -> Bool {
        policy.refetches(affected: tracked.rowCount, of: count, batched: true)
            || policy.refetches(affected: tracked.own.count, of: count, batched: true)
    }

    /// Keeps, for older snapshots, the values this commit changes, then moves the reader to
    /// its state; the index reads sort keys in it until ``endCommit(leaving:index:)``.
    mutating func beginCommit<Section>(
        _ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>,
        index: inout SectionedIndex<Section, Keys>
    ) throws {
        guard let loader else { preconditionFailure("a commit applied before the first fetch") }
        try loader.commit(changed: tracked.own) { index.contains($0) }
        index.keyReader = { id in try fetcher.sortKeys(db, of: id) }
    }

    func endCommit<Section>(leaving: [Int64], index: inout SectionedIndex<Section, Keys>) {
        index.keyReader = nil
        if let loader, !leaving.isEmpty { loader.left(leaving.filter { !index.contains($0) }) }
    }

    func reread<Section>(
        _ ids: [Int64], _ db: Database, fetcher: ResultsFetcher<Item, Section>
    ) throws -> [(id: Int64, item: Item?, keys: IndexKeys)] {
        var fetched: [(id: Int64, item: Item?, keys: IndexKeys)] = []
        fetched.reserveCapacity(ids.count)
        try fetcher.forEachKeys(db, ids: ids) { fetched.append(($0, nil, $1)) }
        return fetched
    }

    /// The items this commit takes out of the results without deleting them (through their
    /// own rows or a related one: held, and not re-read), which older snapshots may still
    /// show; their values are kept for those snapshots when a later commit changes them. (A
    /// deleted item's value was kept by ``beginCommit(_:_:fetcher:index:)``.) Nothing to look
    /// up when every re-read item is still in the results.
    func mayLeave<Section>(
        affected: Set<Int64>, reread: [(id: Int64, item: Item?, keys: IndexKeys)], index: SectionedIndex<Section, Keys>
    ) -> [Int64] {
        guard reread.count < affected.count else { return [] }
        let ids = Set(reread.lazy.map(\.id))
        return affected.filter { !ids.contains($0) && index.contains($0) }
    }

    func replaceInBulk<Section>(
        gone: Set<Int64>, reread: [(id: Int64, item: Item?, keys: IndexKeys)], index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, changedRows: inout [Int64: RowChange], policy: RefetchPolicy
    ) -> Bool { false }

    func removed(_ id: Int64) {}
    func inserted(_ id: Int64, _ item: Item?) {}

    func snapshotAndChanges<Section>(
        _ journal: inout SnapshotJournal<Item, Section>, _ index: SectionedIndex<Section, Keys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: SnapshotJournal<Item, Section>.Changes) {
        guard let loader else { preconditionFailure("a snapshot made before the first fetch") }
        return journal.batchedSnapshotAndChanges(index, loader.makePages())
    }

    func readInCurrentState(_ body: (Database) throws -> Void) throws {
        try loader?.reader.read(body)
    }

    func _checkInvariants<Section>(against index: SectionedIndex<Section, Keys>) {}
}
