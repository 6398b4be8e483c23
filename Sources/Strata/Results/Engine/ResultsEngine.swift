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
    let fetcher: ResultsFetcher<Item, Section>
    private(set) var index: SectionedIndex<Section>
    private(set) var payload = ItemPayload<Item>()
    private var journal: SnapshotJournal<Item, Section>
    var policy = RefetchPolicy()
    /// Batched loading: what it needs to start (nil when eager), and its loader once started.
    private var batching: (store: Store, path: String, pageSize: Int, cachedPages: Int)?
    private(set) var loader: PageLoader<Item>?
    /// The request's window, if any.
    private let window: (limit: Int?, offset: Int)?
    /// The start of the statement a compact index reads sort keys with.
    private var sortKeysBase: SQL?

    /// Whether values are loaded in pages (see ``ResultsLoading``).
    var isBatched: Bool { batching != nil }

    var plan: ResultsQueryPlan { fetcher.plan }

    var options: ResultsOptions<Item> {
        get { journal.options }
        set { journal.options = newValue }
    }

    init(
        request: ResultsRequest<Item, Section>, schema: SchemaDescriptor, options: ResultsOptions<Item>,
        loading: ResultsLoading = .eager, store: Store? = nil
    ) throws {
        let plan = try ResultsQueryPlan(request: request, schema: schema)
        if case .none = plan.sectionKind {
            guard NoSection() is Section else { throw ResultsError.sectionTypeMismatch(String(describing: Section.self)) }
        }
        fetcher = ResultsFetcher(plan: plan)
        journal = SnapshotJournal(options: options)
        window = request.isWindowed ? (request.limit, request.offset) : nil
        if case .batched(let pageSize, let cachedPages) = loading, let store, let path = store.path,
            options.filter == nil && options.comparator == nil
        {
            batching = (store, path, pageSize, cachedPages)
        }
        index = SectionedIndex(kind: plan.sectionKind, itemDescending: plan.itemDescending, compact: batching != nil)
    }

    /// Leaves batched loading (a filter or comparator was set): every value is read, in the
    /// state of the last commit applied, through the pinned reader.
    func loadEagerly() throws {
        guard batching != nil, let loader else {
            batching = nil
            return
        }
        let ids = index.ids
        let values = try loader.reader.read { db in try PageLoader<Item>.fetch(ids, db) }
        payload.reserveCapacity(values.count)
        for (id, item) in values { payload[id] = item }
        for id in ids where payload[id] == nil { throw ResultsError.itemUnavailable(id) }
        // The index keeps the keys from now on: they are read once, in the same state.
        var full = SectionedIndex<Section>(kind: plan.sectionKind, itemDescending: plan.itemDescending)
        full.reserveCapacity(ids.count)
        let sectionObjects = try loader.reader.read { db in try fetcher.sectionObjects(db) }
        var builder = full.beginBuild(sectionObjects: sectionObjects)
        try loader.reader.read { db in
            try fetcher.forEachKeys(db, ids: nil) { id, keys in _ = full.appendFetched(id, keys, to: &builder) }
        }
        _ = full.finishBuild(builder)
        index = full
        batching = nil
        self.loader = nil
        journal.reset()
    }

    // MARK: - Fetching

    /// Replaces the whole state with a fresh fetch, in one pass over the rows: index,
    /// payload, and (without post-fetch options, where rows are items) the snapshot's rows.
    func fetchAll(_ db: Database) throws {
        if let batching {
            try fetchKeys(db, batching)
            return
        }
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
        var rows: [RowChunks<ResultsRow<Item>>] = []
        try fetcher.forEachItem(db, ids: nil) { item, keys in
            let id = item.objectID.rawValue
            payload[id] = item
            guard let bucket = index.appendFetched(id, keys, to: &builder), rowsAreItems else { return }
            if bucket == rows.count { rows.append(RowChunks()) }
            rows[bucket].append(.item(item))
        }
        for (section, bucket) in index.finishBuild(builder) where rowsAreItems {
            journal.setRows(rows[bucket], for: section)
        }
    }

    /// The batched fetch: ids and keys only; the snapshots' pages read the values later,
    /// through a reader pinned to this state.
    private func fetchKeys(_ db: Database, _ batching: (store: Store, path: String, pageSize: Int, cachedPages: Int)) throws {
        let sectionObjects = try fetcher.sectionObjects(db)
        if index.isEmptyCapacity { index.reserveCapacity(try fetcher.tableRowCount(db)) }
        if let loader {
            try loader.detach()
        } else {
            loader = try PageLoader(
                store: batching.store, path: batching.path, pageSize: batching.pageSize, cachedPages: batching.cachedPages)
        }
        journal.reset()
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        try fetcher.forEachRawKey(db) { id, key, keyOrder in index.appendFetched(id, rawKey: key, keyOrder: keyOrder, to: &builder) }
        _ = index.finishBuild(builder)
    }

    // MARK: - Incremental maintenance

    /// Brings the state up to date with one commit (or several merged). Returns false when
    /// the commit cannot have changed the results.
    ///
    /// The commit is traced once (``ResultsQueryPlan/effect(of:_:fetcher:)``); a refetch is
    /// then decided in one place — the commit cannot be traced, or it touches too many rows
    /// for patching to pay (``RefetchPolicy``) — before anything is changed.
    @discardableResult
    func apply(_ changes: CommittedChanges, _ db: Database) throws -> Bool {
        let tracked: ResultsQueryPlan.TrackedChanges
        switch try plan.effect(of: changes, db, fetcher: fetcher) {
        case .unaffected:
            return false
        case .refetch:
            try fetchAll(db)
            return true
        case .items(let changes):
            tracked = changes
        }
        // Batched: a commit too large to patch is refetched, the reader staying in the old
        // state for the snapshots made before it.
        if policy.refetches(affected: tracked.rowCount, of: index.count, batched: isBatched)
            || (isBatched && policy.refetches(affected: tracked.own.count, of: index.count, batched: true))
        {
            try fetchAll(db)
            return true
        }
        journal.beginCommit()
        if let loader {
            // Keep, for older snapshots, the values this commit changes, then read its state.
            try loader.commit(changed: tracked.own) { index.contains($0) }
            let base = try sortKeysBase ?? fetcher.sortKeysBase()
            sortKeysBase = base
            let fetcher = self.fetcher
            index.keyReader = { id in try fetcher.sortKeys(db, of: id, base: base) }
        }
        defer { index.keyReader = nil }
        // 1. Section objects.
        if let ids = tracked.sectionObjects {
            if ids.isEmpty {
                journal.invalidate(try index.refreshSections(try fetcher.sectionObjects(db)))
            } else {
                journal.invalidate(try index.updateSections(try fetcher.sectionObjects(db, ids: ids), ids: ids))
            }
        }
        // 2. Affected items.
        let affected = tracked.affected
        if affected.isEmpty && tracked.deleted.isEmpty { return true }
        // 3. Remove every affected or deleted item, then insert the re-read ones; journal
        // their places before and after.
        var fetched: [(id: Int64, item: Item?, keys: IndexKeys)] = []
        fetched.reserveCapacity(affected.count)
        // In rowid order: each statement's ids are then a range of the table, which SQLite
        // reads from fewer pages than ids spread over all of it.
        let ids = affected.sorted()
        if isBatched {
            try fetcher.forEachKeys(db, ids: ids) { fetched.append(($0, nil, $1)) }
        } else {
            try fetcher.forEachItem(db, ids: ids) { fetched.append(($0.objectID.rawValue, $0, $1)) }
        }
        let gone = affected.union(tracked.deleted)
        // Batched: the items this commit takes out of the results without deleting them
        // (through their own rows or a related one: held, and not re-read), which older
        // snapshots may still show; their values are kept for those snapshots when a later
        // commit changes them. (A deleted item's value was kept by `commit` above.) Nothing
        // to look up when every re-read item is still in the results.
        var leaving: [Int64] = []
        if loader != nil && fetched.count < affected.count {
            let reread = Set(fetched.lazy.map(\.id))
            leaving = affected.filter { !reread.contains($0) && index.contains($0) }
        }
        defer { if let loader, !leaving.isEmpty { loader.left(leaving.filter { !index.contains($0) }) } }
        guard var changedRows = journal.takeRowJournal() else {
            for id in gone { try remove(id, patch: false) }
            for row in fetched { try insert(row.id, row.item, row.keys, patch: false) }
            return true
        }
        let patch = policy.patches(changed: gone.count, sections: index.sections.count)
        if !patch && !isBatched {
            // Too many rows to patch the derived sections: those touched are derived again,
            // and the index is rebuilt where it changed in passes rather than row by row.
            // Values are replaced in place: removing a re-read row first would cost a
            // second probe of the dictionary (and its backward shift) per row.
            var refetched = Set<Int64>(minimumCapacity: fetched.count)
            for row in fetched {
                refetched.insert(row.id)
                if let item = row.item { payload[row.id] = item }
            }
            for id in gone where !refetched.contains(id) { payload[id] = nil }
            let replaced = try index.replaceInBulk(gone: gone, fetched: fetched.map { ($0.id, $0.keys) }, refetched: refetched,
                parallelMinimum: policy.parallelMergeMinimum)
            // The snapshot's rows of the touched sections follow the same merge.
            let sections = index.sections
            journal.replaced(
                in: replaced.touched, removals: replaced.removedIndexes, arrivals: replaced.arrivals,
                items: { fetched[$0].item }, counts: { sections[$0]?.items.count })
            changedRows.reserveCapacity(changedRows.count + replaced.old.count + replaced.new.count)
            for (id, place) in replaced.old { changedRows[id] = RowChange(old: place) }
            for (id, place) in replaced.new { changedRows[id, default: RowChange()].new = place }
            journal.putRowJournal(changedRows)
            return true
        }
        for id in gone {
            if let place = try index.place(of: id) { changedRows[id] = RowChange(old: place) }
        }
        for id in gone { try remove(id, patch: patch) }
        for row in fetched { try insert(row.id, row.item, row.keys, patch: patch) }
        for row in fetched {
            if let place = try index.place(of: row.id) { changedRows[row.id, default: RowChange()].new = place }
        }
        journal.putRowJournal(changedRows)
        return true
    }

    private func remove(_ id: Int64, patch: Bool) throws {
        payload[id] = nil
        guard let removal = try index.remove(id) else { return }
        journal.removed(at: removal.index, from: removal.section, patch: patch)
        if removal.sectionRemoved { journal.invalidate([removal.section]) }
    }

    /// Places the item `id` read afresh (`item` is nil in batched mode: no values are kept).
    private func insert(_ id: Int64, _ item: Item?, _ keys: IndexKeys, patch: Bool) throws {
        if let item { payload[id] = item }
        guard let place = try index.insert(id, keys) else { return }
        if let item {
            journal.inserted(item, at: place.index, in: place.section, patch: patch)
        } else {
            journal.invalidate([place.section])
        }
    }

    // MARK: - Snapshots

    /// The current results, with the post-fetch options applied.
    func snapshot() -> ResultsSnapshot<Item, Section> { snapshotAndChanges().snapshot }

    /// The current results, and what is known to have changed since the previous call, for
    /// ``BatchBuilder`` to build the batch from.
    func snapshotAndChanges() -> (snapshot: ResultsSnapshot<Item, Section>, changes: BatchBuilder.Known) {
        let (snapshot, changes) =
            if let loader {
                journal.batchedSnapshotAndChanges(index, loader.makePages())
            } else {
                journal.snapshotAndChanges(index, payload)
            }
        // A refetch: batched values are not loaded to compare.
        let refetched: BatchBuilder.Known = isBatched ? .refetchedInPages : .anything
        guard let window else {
            switch changes {
            case .rows(let rows): return (snapshot, .rows(rows))
            case .sections(let sections): return (snapshot, .sections(sections))
            case .all: return (snapshot, refetched)
            }
        }
        // The whole results are kept up to date; the window is cut from them, and its
        // difference computed, in time proportional to the window.
        if case .all = changes { return (snapshot.window(limit: window.limit, offset: window.offset), refetched) }
        return (snapshot.window(limit: window.limit, offset: window.offset), .anything)
    }

    // MARK: - Invariants

    /// Checks every part's invariants (debug builds only).
    func _checkInvariants() {
        #if DEBUG
        index._checkInvariants()
        if !isBatched { payload._checkInvariants(against: index) }
        journal._checkInvariants(against: index)
        #endif
    }
}
