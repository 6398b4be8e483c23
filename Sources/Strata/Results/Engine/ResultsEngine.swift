import Foundation
import GRDB

/// The synchronous state machine behind ``ResultsController``: fetches, applies commits
/// incrementally, and derives snapshots. Not thread-safe; its owner serialises access.
///
/// It composes four parts, each with its own invariants:
/// - ``ResultsFetcher``: every read (stateless, `Sendable`);
/// - ``SectionedIndex``: where each item is, by id and keys alone;
/// - the `Loading` (``ItemLoading``): how the items' values are held, in memory (``EagerLoading``,
///   once, in the journal's item rows) or in pages (``BatchedLoading``), and with them what the
///   index keeps of each item;
/// - ``SnapshotJournal``: the options, each section's item rows (eager values, shared with the
///   snapshots), the rows derived by post-fetch options, and what changed since the last one;
///
/// and a ``CommitTracker`` that takes every refetch decision. Commits re-read only affected
/// rows by id and place them by binary search with ``DatabaseValueOrdering``, which orders
/// exactly as SQLite's `ORDER BY`.
///
/// ``ResultsPipeline`` drives it: every input (a fetch, a commit, an options change, a user
/// edit) goes through the pipeline, which asks this engine for the state and the changes,
/// and turns them into the next snapshot and its batch.
///
/// The loading is chosen once, with the engine's type; results that must leave batched
/// loading (a filter was set) replace their engine with ``loadingEagerly()``'s.
final class ResultsEngine<Item, Section: Hashable & Sendable, Loading: ItemLoading<Item>>: AnyResultsEngine {
    let fetcher: ResultsFetcher<Item, Section>
    private(set) var index: SectionedIndex<Section, Loading.Keys>
    private(set) var loading: Loading
    private var journal: SnapshotJournal<Item, Section>
    /// Every refetch decision.
    private(set) var tracker = CommitTracker()
    /// The request's window, if any.
    private let window: (limit: Int?, offset: Int)?

    var plan: ResultsQueryPlan { fetcher.plan }

    var policy: RefetchPolicy {
        get { tracker.policy }
        set { tracker.policy = newValue }
    }

    var needsRefetch: Bool { tracker.needsRefetch }

    var options: ResultsOptions<Item> {
        get { journal.options }
        set { journal.options = newValue }
    }

    init(fetcher: ResultsFetcher<Item, Section>, options: ResultsOptions<Item>, window: (limit: Int?, offset: Int)?, loading: Loading) {
        self.fetcher = fetcher
        journal = SnapshotJournal(options: options, comparesByID: window == nil)
        self.window = window
        self.loading = loading
        index = SectionedIndex(kind: fetcher.plan.sectionKind, itemDescending: fetcher.plan.itemDescending)
    }

    // MARK: - Fetching

    /// Replaces the whole state with a fresh fetch, in one pass over the rows: index,
    /// values, and (without post-fetch options, where rows are items) the snapshot's rows.
    func fetchAll(_ db: Database) throws {
        try fetchAll(db, afterWriting: nil)
    }

    /// A fresh fetch where, when `written` is given, only those rows of the item table
    /// changed since the last state (a commit's refetch, see
    /// ``ItemLoading/fetchAll(_:fetcher:index:journal:afterWriting:)``).
    private func fetchAll(_ db: Database, afterWriting written: CommittedChanges.TableChanges?) throws {
        index.placeHints.removeAll()
        do {
            if let written {
                try loading.fetchAll(db, fetcher: fetcher, index: &index, journal: &journal, afterWriting: written)
            } else {
                try loading.fetchAll(db, fetcher: fetcher, index: &index, journal: &journal)
            }
        } catch {
            tracker.failed()
            throw error
        }
        tracker.fetched()
    }

    /// The item `id` is at `index` of `section` in the last snapshot: the next commit's
    /// search for it starts there (see ``SectionedIndex/placeHints``).
    func hintPlace(of id: Int64, in section: SectionID, at index: Int) {
        self.index.placeHints[id] = (section, index)
    }

    // MARK: - Incremental maintenance

    /// Brings the state up to date with one commit (or several merged). Returns false when
    /// the commit cannot have changed the results.
    ///
    /// The ``CommitTracker`` decides first, before anything is changed: nothing to do, a
    /// refetch, or the rows to re-read. A failure leaves the tracker asking for a refetch
    /// on the next commit.
    @discardableResult
    func apply(_ changes: CommittedChanges, _ db: Database) throws -> Bool {
        defer { if !index.placeHints.isEmpty { index.placeHints.removeAll() } }
        let decision: CommitTracker.Decision
        do {
            decision = try tracker.decide(changes, db, fetcher: fetcher, results: index.count, loading: Loading.self)
        } catch {
            tracker.failed()
            throw error
        }
        switch decision {
        case .unaffected:
            return false
        case .refetch(let written):
            // (Batched: the reader stays in the old state for the snapshots made before.)
            try fetchAll(db, afterWriting: written)
            return true
        case .items(let tracked):
            do {
                try apply(tracked, db)
            } catch {
                tracker.failed()
                throw error
            }
            return true
        }
    }

    /// Applies a commit's traced rows, the way the loading takes them (see
    /// ``ItemLoading/apply(_:_:fetcher:index:journal:policy:)``).
    private func apply(_ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database) throws {
        journal.beginCommit()
        try loading.apply(tracked, db, fetcher: fetcher, index: &index, journal: &journal, policy: policy)
    }

    // MARK: - Snapshots

    /// The current results, with the post-fetch options applied.
    func snapshot() -> ResultsSnapshot<Item, Section> { snapshotAndChanges().snapshot }

    /// The current results, and what is known to have changed since the previous call, for
    /// ``BatchBuilder`` to build the batch from.
    func snapshotAndChanges() -> (snapshot: ResultsSnapshot<Item, Section>, changes: BatchBuilder.Known) {
        let (snapshot, changes) = loading.snapshotAndChanges(&journal, index)
        guard let window else {
            switch changes {
            case .rows(let rows): return (snapshot, .rows(rows))
            case .sections(let sections): return (snapshot, .sections(sections))
            case .all: return (snapshot, Loading.refetched)
            case .refetched(let kept): return (snapshot, .refetched(kept))
            }
        }
        // The whole results are kept up to date; the window is cut from them, and its
        // difference computed, in time proportional to the window.
        switch changes {
        case .all, .refetched: return (snapshot.window(limit: window.limit, offset: window.offset), Loading.refetched)
        case .rows, .sections: break
        }
        return (snapshot.window(limit: window.limit, offset: window.offset), .anything)
    }

    /// This engine if it loads eagerly, else a new one loading eagerly in its state (the last
    /// commit applied): every value and every key read once, in that state. This engine is
    /// left as it was. The loading decides (``ItemLoading/loadingEagerly(_:)``).
    func loadingEagerly() throws -> any AnyResultsEngine<Item, Section> {
        try loading.loadingEagerly(self)
    }

    /// A new engine loading eagerly, with this one's items, options and tracker: `read` runs
    /// the read of every value and key with a database in the state to copy (it may run it
    /// never, leaving the copy empty, when there is no state yet).
    func eagerCopy(
        readingWith read: (_ body: (Database) throws -> Void) throws -> Void
    ) throws -> any AnyResultsEngine<Item, Section> {
        let eager = ResultsEngine<Item, Section, EagerLoading<Item>>(
            fetcher: fetcher, options: options, window: window, loading: EagerLoading())
        eager.tracker = tracker
        let ids = index.ids
        try read { db in try eager.load(ids, db) }
        return eager
    }

    // MARK: - Invariants

    /// Checks every part's invariants (debug builds only).
    func _checkInvariants() {
        #if DEBUG
        index._checkInvariants()
        loading._checkInvariants(against: index, journal: journal)
        journal._checkInvariants(against: index)
        #endif
    }
}

extension ResultsEngine {
    /// An engine for `request` with the loading asked for: batched only for a store with a
    /// file and without post-fetch filter or comparator (which read every value).
    static func make(
        request: ResultsRequest<Item, Section>, schema: SchemaDescriptor, options: ResultsOptions<Item>,
        loading: ResultsLoading = .eager, store: Store? = nil
    ) throws -> any AnyResultsEngine<Item, Section> where Loading == EagerLoading<Item> {
        let plan = try ResultsQueryPlan(request: request, schema: schema)
        if case .none = plan.sectionKind {
            guard NoSection() is Section else { throw ResultsError.sectionTypeMismatch(String(describing: Section.self)) }
        }
        let fetcher = ResultsFetcher<Item, Section>(plan: plan)
        let window = request.isWindowed ? (request.limit, request.offset) : nil
        if case .batched(let pageSize, let cachedPages) = loading, let store, let path = store.path,
            options.filter == nil && options.comparator == nil
        {
            return ResultsEngine<Item, Section, BatchedLoading<Item>>(
                fetcher: fetcher, options: options, window: window,
                loading: BatchedLoading(store: store, path: path, pageSize: pageSize, cachedPages: cachedPages))
        }
        return ResultsEngine(fetcher: fetcher, options: options, window: window, loading: EagerLoading())
    }
}

extension ResultsEngine where Loading == EagerLoading<Item> {
    /// Loads the items `ids` and builds the index from a read of every item's keys.
    fileprivate func load(_ ids: [Int64], _ db: Database) throws {
        let values = try PageLoader<Item>.fetch(ids, db)
        let range = ids.min().map { $0...ids.max()! }
        var payload = ItemPayload<Item>()
        payload.reserveCapacity(ids.count, ids: range)
        for id in ids {
            guard let item = values[id] else { throw ResultsError.itemUnavailable(id) }
            payload.append(id, item)
        }
        index.reserveCapacity(ids.count, ids: range)
        var builder = index.beginBuild(sectionObjects: try fetcher.sectionObjects(db))
        try fetcher.forEachKeys(db, ids: nil) { id, keys in _ = index.appendFetched(id, keys, to: &builder) }
        _ = index.finishBuild(builder)
        // The next snapshot makes every section's rows from these values.
        journal.reset(values: payload)
    }
}
