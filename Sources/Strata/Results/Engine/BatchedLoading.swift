import GRDB

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
        policy.refetches(affected: tracked.rowCount, of: count, costs: policy.batched)
            || policy.refetches(affected: tracked.own.count, of: count, costs: policy.batched)
    }

    static func refetches(written: Int, of count: Int, policy: RefetchPolicy) -> Bool {
        policy.refetches(affected: written, of: count, costs: policy.batched)
    }

    /// Keeps, for older snapshots, the values this commit changes, then moves the reader to
    /// its state; the index reads sort keys in it while the commit is applied. Re-reads the
    /// affected rows' keys only and places them one at a time (a compact index has no bulk
    /// path); the items the commit takes out of the results without deleting them are
    /// followed for the older snapshots that may show them.
    mutating func apply<Section>(
        _ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>,
        index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>, policy: RefetchPolicy
    ) throws {
        guard let loader else { preconditionFailure("a commit applied before the first fetch") }
        try loader.commit(changed: tracked.own) { index.contains($0) }
        index.keyReader = { id in try fetcher.sortKeys(db, of: id) }
        var leaving: [Int64] = []
        defer {
            index.keyReader = nil
            if !leaving.isEmpty { loader.left(leaving.filter { !index.contains($0) }) }
        }
        try CommitRows.updateSections(tracked, db, fetcher: fetcher, index: &index, journal: &journal)
        let affected = tracked.affected
        if affected.isEmpty && tracked.deleted.isEmpty { return }
        var fetched: [CommitRows.Reread<Item>] = []
        fetched.reserveCapacity(affected.count)
        try fetcher.forEachKeys(db, ids: affected.sorted()) { fetched.append(($0, nil, $1)) }
        let gone = affected.union(tracked.deleted)
        leaving = Self.leaving(affected: affected, reread: fetched, index: index)
        var changedRows = journal.takeRowJournal()
        try CommitRows.replaceOneByOne(gone: gone, reread: fetched, index: &index, journal: &journal, changedRows: &changedRows)
        if let changedRows { journal.putRowJournal(changedRows) }
    }

    /// The items a commit takes out of the results without deleting them (through their own
    /// rows or a related one: held, and not re-read), which older snapshots may still show;
    /// their values are kept for those snapshots when a later commit changes them. (A deleted
    /// item's value was kept by the loader's commit.) Nothing to look up when every re-read
    /// item is still in the results.
    private static func leaving<Section>(
        affected: Set<Int64>, reread: [CommitRows.Reread<Item>], index: SectionedIndex<Section, Keys>
    ) -> [Int64] {
        guard reread.count < affected.count else { return [] }
        let ids = Set(reread.lazy.map(\.id))
        return affected.filter { !ids.contains($0) && index.contains($0) }
    }

    func snapshotAndChanges<Section>(
        _ journal: inout SnapshotJournal<Item, Section>, _ index: SectionedIndex<Section, Keys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: SnapshotJournal<Item, Section>.Changes) {
        guard let loader else { preconditionFailure("a snapshot made before the first fetch") }
        return journal.batchedSnapshotAndChanges(index, loader.makePages())
    }

    /// A copy loading eagerly, its values read with the pinned reader: the state of the last
    /// commit applied, whatever was committed since.
    func loadingEagerly<Section>(_ engine: any AnyResultsEngine<Item, Section>) throws -> any AnyResultsEngine<Item, Section> {
        try engine.eagerCopy { body in try loader?.reader.read(body) }
    }

    /// Outside a commit the index reads no key; once fetched, a loader serves the pages.
    func _checkInvariants<Section>(against index: SectionedIndex<Section, Keys>, journal: SnapshotJournal<Item, Section>) {
        #if DEBUG
        precondition(index.keyReader == nil, "a key reader left set after a commit")
        precondition(loader != nil || index.count == 0, "items indexed without a loader for their pages")
        #endif
    }
}
