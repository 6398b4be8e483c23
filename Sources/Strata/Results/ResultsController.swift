import Dispatch
import Foundation
import GRDB

/// Live sectioned results of a ``ResultsRequest``: fetched once, then kept up to date commit
/// by commit, every change reported as one ``ChangeBatch`` that a list UI can apply directly.
///
/// One type serves requests without sections (`Section == NoSection`), with keyed sections
/// (`Note.Fetches.byPriority`) and with entity sections (`Note.Fetches.byNotebook`, where
/// every notebook is a section, empty ones included, and the section carries the notebook).
///
/// ```swift
/// let store = try Store(schema: StrataModel.schema)
/// let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook)
/// print(controller.snapshot.sections.map { $0.value.object?.name })
///
/// for await update in controller.updates {          // or a delegate, or coordinate(_:)
///     switch update {
///     case .reload(let snapshot): show(snapshot)
///     case .batch(let batch, let snapshot): animate(batch, to: snapshot)
///     }
/// }
///
/// controller.options.filter = { !$0.body.isEmpty }   // emits a batch, not a reload
/// controller.pause()                                   // stop tracking during a bulk import
/// try controller.resume()                              // refetch, deliver a reload
/// ```
///
/// ## How changes are tracked
///
/// The controller fetches in one SQL query (items with their sort-key and section-key
/// values; for entity sections a second query for the section objects). After each commit
/// it re-reads, on the store's writer and before any later write, only the affected rows by
/// id — the changed items, and the items whose predicate, sort or section key reads a changed
/// related row through a to-one relationship — and places them by binary search with
/// ``DatabaseValueOrdering``, which orders exactly as SQLite's `ORDER BY`. Links and unlinks
/// of a many-to-many relationship the predicate reads (`ANY tags.name == $x`) re-read the
/// items they name. Other predicates over to-many relationships, and commits that touch a
/// large share of the results, make it refetch instead. Either way the state after every commit equals a fresh fetch. The batch
/// of an incremental commit is built from the places the changed rows left and took, in
/// time that grows with the change, not with the results, and rows the commit did not touch
/// never move. After a refetch, or with post-fetch options, it is the identity difference
/// between the previous and the new snapshot.
///
/// ## User edits
///
/// For a request ordered by an ordered relationship (`sort: [list.@position]`),
/// ``moveItem(from:to:)-(ItemPath,_)`` and ``deleteItem(at:)-(ItemPath)`` turn a drag or a swipe that a list view
/// reports into one write, and deliver it, marked ``ChangeBatch/userEdit``, before they
/// return; later batches are relative to the edited snapshot. See <doc:OrderedLists>.
///
/// ## Isolation
///
/// The controller is `Sendable`: its state is behind a lock and is computed on the store's
/// writer right after each commit. Everything it reports — delegate callbacks, coordinators,
/// ``updates`` elements — is delivered in order on its *delivery queue* (the main queue by
/// default; pass another `DispatchQueue` for background consumers and tests). ``snapshot``
/// is the last delivered snapshot, so a data source that reads it on the delivery queue
/// always agrees with the batch being applied.
public final class ResultsController<Item: StrataEntity, Section: Hashable & Sendable>: @unchecked Sendable {
    /// How changes are delivered.
    public enum DeliveryMode: Hashable, Sendable {
        /// A ``ChangeBatch`` per commit (or per options change).
        case batches
        /// A whole snapshot per change, for consumers that do not animate.
        case reloads
    }

    /// The store the results come from.
    public let store: Store
    /// The request, as given.
    public let request: ResultsRequest<Item, Section>
    /// The queue every delivery happens on.
    public let deliveryQueue: DispatchQueue
    /// Marks the delivery queue (see ``waitForDeliveries()``): the value of
    /// `deliveryQueueKey` on it, shared by every controller that delivers there.
    private let deliveryQueueToken: Int

    /// The token of `queue`, set on it the first time a controller delivers there.
    private static func token(of queue: DispatchQueue) -> Int {
        deliveryQueueTokens.withLock { next in
            if let token = queue.getSpecific(key: deliveryQueueKey) { return token }
            next += 1
            queue.setSpecific(key: deliveryQueueKey, value: next)
            return next
        }
    }

    // Guarded by `lock`: the engine, the last computed snapshot, tracking.
    private let lock = NSRecursiveLock()
    private var engine: any AnyResultsEngine<Item, Section>
    private var computed: ResultsSnapshot<Item, Section>
    private var observation: CommitObservation?
    private var needsRefetch = false
    private var _deliveryMode: DeliveryMode
    /// Incremented by every ``publish(reload:)``: the version of the snapshot it computes.
    private var publishedVersion = 0
    /// Tests set this to check the engine's invariants after every change.
    var checksInvariants = false

    /// The delivered snapshot and every consumer: what the controller computes reaches them
    /// only through it, on the delivery queue.
    private let outlet = ResultsOutlet<Item, Section>()
    /// Set by a user edit (``moveItem(from:to:)``, ``deleteItem(at:)``) that changed the
    /// delivered snapshot before its commit was delivered: updates computed before the edit's
    /// commit (`version` lower) are folded into the next one, which is delivered as the
    /// difference from the delivered snapshot. `touched`: the sections whose rows those
    /// updates and the edit changed (nil: any).
    /// `batch`: the edit's own batch while no update was skipped; an update from the
    /// snapshot before the edit that is this very batch then leads to the edited snapshot.
    private var pendingEdit: (version: Int, touched: Set<SectionID>?, batch: ChangeBatch?)?
    /// The request's order as user moves read it, once computed (delivery queue only).
    var editOrderingCache: OrderedRequest?

    private typealias Event = ResultsOutlet<Item, Section>.Event
    private typealias Subscriber = ResultsOutlet<Item, Section>.Subscriber

    /// Fetches the results of `request` from `store` and starts tracking its commits.
    ///
    /// - Parameters:
    ///   - store: the store to read and track.
    ///   - request: what to fetch: a generated fetch (`Note.Fetches.byNotebook`) or a
    ///     ``ResultsRequest`` of your own.
    ///   - options: a post-fetch filter, comparator, and group rows (see ``ResultsOptions``).
    ///   - mode: ``DeliveryMode/batches`` (default) or ``DeliveryMode/reloads``.
    ///   - loading: ``ResultsLoading/eager`` (default) reads every value up front;
    ///     ``ResultsLoading/batched(pageSize:cachedPages:)`` reads ids and keys, and values a
    ///     page at a time when rows are read.
    ///   - deliveryQueue: where deliveries happen; the main queue by default.
    /// - Throws: a database error, ``QueryError`` for a request that does not fit the store's
    ///   schema, or ``ResultsError`` for a `Section` type that does not fit the sectioning.
    public init(
        store: Store, request: ResultsRequest<Item, Section>, options: ResultsOptions<Item> = ResultsOptions(),
        mode: DeliveryMode = .batches, loading: ResultsLoading = .eager, deliveryQueue: DispatchQueue = .main
    ) throws {
        self.store = store
        self.request = request
        self.deliveryQueue = deliveryQueue
        deliveryQueueToken = Self.token(of: deliveryQueue)
        self._deliveryMode = mode
        engine = try ResultsEngine.make(request: request, schema: store.schema, options: options, loading: loading, store: store)
        computed = .empty
        try startTracking(deliverReload: false)
        outlet.take(computed)
    }

    deinit {
        observation?.cancel()
        outlet.finishAll()
    }

    // MARK: - State

    /// The last delivered snapshot. Read it on the delivery queue to stay in step with the
    /// batches; right after `init` it is the initial fetch.
    public var snapshot: ResultsSnapshot<Item, Section> { outlet.snapshot }

    /// The delegate, called on the delivery queue. Held weakly.
    public var delegate: (any ResultsControllerDelegate<Item, Section>)? {
        get { outlet.delegate }
        set { outlet.delegate = newValue }
    }

    /// How changes are delivered; may change at any time.
    public var deliveryMode: DeliveryMode {
        get { locked { _deliveryMode } }
        set { locked { _deliveryMode = newValue } }
    }

    /// The post-fetch filter, comparator and group-row option. Setting it delivers one batch
    /// that turns the current results into the new ones (sections that become empty or
    /// non-empty included); it never refetches. While the controller is paused, setting it
    /// delivers nothing: the reload that ``resume()`` delivers applies the options then in
    /// effect.
    ///
    /// On a batched controller (see ``ResultsLoading``), a filter or comparator reads every
    /// value once, in the state of the last snapshot, and the controller loads eagerly from
    /// then on. If that read fails, the options stay as they were and the error goes to
    /// every consumer, as a failed commit's does.
    public var options: ResultsOptions<Item> {
        get { locked { engine.options } }
        set {
            locked {
                if engine.isBatched && (newValue.filter != nil || newValue.comparator != nil) {
                    do {
                        engine = try engine.loadingEagerly()
                    } catch {
                        let error = store.typedError(error)
                        scheduleDelivery { [self] in deliver(.failure(error)) }
                        return
                    }
                }
                engine.options = newValue
                if observation != nil { publish(reload: false) }
            }
        }
    }

    /// The post-fetch filter (see ``ResultsOptions/filter``).
    public var filter: (@Sendable (Item) -> Bool)? {
        get { options.filter }
        set { locked { options.filter = newValue } }
    }

    /// The post-fetch comparator (see ``ResultsOptions/comparator``).
    public var comparator: (@Sendable (Item, Item) -> Bool)? {
        get { options.comparator }
        set { locked { options.comparator = newValue } }
    }

    /// Whether filtered-out items are shown as one group row per section (see
    /// ``ResultsOptions/groupFilteredItems``).
    public var groupFilteredItems: Bool {
        get { options.groupFilteredItems }
        set { locked { options.groupFilteredItems = newValue } }
    }

    // MARK: - Pause and resume

    /// True between ``pause()`` and ``resume()``.
    public var isPaused: Bool { locked { observation == nil } }

    /// Stops tracking commits: nothing is delivered until ``resume()``. Use it around bulk
    /// imports.
    public func pause() {
        locked {
            observation?.cancel()
            observation = nil
        }
    }

    /// Refetches, resumes tracking, and delivers the new state as a reload. Does nothing when
    /// not paused.
    public func resume() throws {
        try startTracking(deliverReload: true)
    }

    /// Fetches everything and subscribes to commits, on the writer, so that no commit falls
    /// between the two. The writer is taken before the lock, as commit handlers do.
    private func startTracking(deliverReload: Bool) throws {
        do {
            try fetchAndTrack(deliverReload: deliverReload)
        } catch {
            throw store.typedError(error)
        }
    }

    private func fetchAndTrack(deliverReload: Bool) throws {
        try store.checkOpen()
        try store.writer.writeWithoutTransaction { db in
            try locked {
                guard observation == nil else { return }
                try engine.fetchAll(db)
                needsRefetch = false
                observation = store.observeCommits(reading: { [weak self] changes, db in
                    self?.handle(changes, db)
                })
                if deliverReload {
                    publish(reload: true)
                } else {
                    computed = engine.snapshot()
                }
                checkInvariants()
            }
        }
    }

    // MARK: - Commits

    private func handle(_ changes: CommittedChanges, _ db: Database) {
        locked {
            guard observation != nil else { return }
            do {
                if needsRefetch {
                    try engine.fetchAll(db)
                    needsRefetch = false
                } else {
                    guard try engine.apply(changes, db) else { return }
                }
                checkInvariants()
                publish(reload: false)
            } catch {
                needsRefetch = true
                let error = store.typedError(error)
                scheduleDelivery { [self] in deliver(.failure(error)) }
            }
        }
    }

    private func checkInvariants() {
        #if DEBUG
        if checksInvariants {
            engine._checkInvariants()
            computed._checkInvariants()
        }
        #endif
    }

    /// Computes the new snapshot and schedules its delivery (with the lock held, so deliveries
    /// keep the order of changes).
    private func publish(reload: Bool) {
        let old = computed
        let (new, changes) = engine.snapshotAndChanges()
        computed = new
        publishedVersion += 1
        let version = publishedVersion
        if reload || _deliveryMode == .reloads {
            if !reload && old == new { return deliverUnchanged(new, version: version) }
            scheduleDelivery { [self] in deliver(.update(.reload(new)), version: version, touched: nil) }
            return
        }
        guard let batch = BatchBuilder.batch(from: old, to: new, known: changes) else {
            // A refetch of batched results: values are not loaded to compare, so a reload.
            scheduleDelivery { [self] in deliver(.update(.reload(new))) }
            return
        }
        #if DEBUG
        if checksInvariants { BatchBuilder._check(batch, from: old, to: new, known: changes) }
        #endif
        if batch.isEmpty { return deliverUnchanged(new, version: version) }
        let touched = batch.touchedSections(from: old, to: new)
        scheduleDelivery { [self] in deliver(.update(.batch(batch, new)), version: version, touched: touched) }
    }

    // MARK: - Delivery (on the delivery queue)

    /// An update computed by `publish` (the `version`th), after a user edit: skipped when it
    /// was computed before the edit's commit, otherwise rebased on the delivered snapshot.
    private func deliver(_ event: Event, version: Int, touched: Set<SectionID>?) {
        guard case .update(let update) = event, let edit = pendingEdit else { return deliver(event) }
        let touched = edit.touched.flatMap { mine in touched.map { mine.union($0) } }
        if version < edit.version {
            // Computed before the edit's commit: its changes reach consumers with the next update.
            pendingEdit = (edit.version, touched, nil)
            return
        }
        pendingEdit = nil
        guard case .batch(let commitBatch, let new) = update else {
            // A reload (reload mode): nothing more when it is what the edit showed.
            if update.snapshot == snapshot { return }
            return deliver(event)
        }
        var userBatch = edit.batch
        userBatch?.userEdit = nil
        if let userBatch, userBatch == commitBatch {
            // The edit's commit did exactly what the edit showed: nothing to deliver, and no
            // difference to compute (a list of 100k rows would take milliseconds).
            outlet.take(new)
            return
        }
        deliverDifference(to: new, touched: touched)
    }

    /// Delivers the difference from the delivered snapshot to `new` (rows of `touched`
    /// sections only), or, when there is none, just takes `new` as delivered.
    private func deliverDifference(to new: ResultsSnapshot<Item, Section>, touched: Set<SectionID>?) {
        if deliveryMode == .reloads {
            // Consumers that asked for reloads get one, when anything differs.
            if new == snapshot {
                outlet.take(new)
                return
            }
            return deliver(.update(.reload(new)))
        }
        // (Never nil: only a refetch of batched results builds no batch.)
        let batch = BatchBuilder.batch(from: snapshot, to: new, known: .sinceUserEdit(touched: touched))!
        if batch.isEmpty {
            outlet.take(new)
            return
        }
        deliver(.update(.batch(batch, new)))
    }

    /// A commit that changed nothing the consumers see: nothing to deliver, unless a user
    /// edit waits for it (its own commit), which then resolves against `new`.
    private func deliverUnchanged(_ new: ResultsSnapshot<Item, Section>, version: Int) {
        scheduleDelivery { [self] in
            guard let edit = pendingEdit, version >= edit.version else { return }
            pendingEdit = nil
            deliverDifference(to: new, touched: edit.touched)
        }
    }

    /// Delivers a user edit's batch now (on the delivery queue, before the edit returns):
    /// `snapshot` becomes `new`, and later updates are rebased on it (see `pendingEdit`).
    /// `version` is ``publishedVersion`` read inside the edit's write transaction: the
    /// updates up to it were computed before the edit's commit.
    func deliverUserEdit(
        _ batch: ChangeBatch, _ new: ResultsSnapshot<Item, Section>, touched: Set<SectionID>, before version: Int
    ) {
        dispatchPrecondition(condition: .onQueue(deliveryQueue))
        var all: Set<SectionID>? = touched
        if let edit = pendingEdit { all = edit.touched.map { $0.union(touched) } }
        pendingEdit = (version + 1, all, pendingEdit == nil ? batch : nil)
        #if DEBUG
        if checksInvariants { BatchBuilder._checkUserEdit(batch, from: snapshot, to: new) }
        #endif
        // Consumers that asked for reloads get the edited snapshot as one.
        deliver(.update(deliveryMode == .reloads ? .reload(new) : .batch(batch, new)))
    }

    /// Called by a user edit once its write returned, with the version read inside its
    /// transaction. When nothing was computed since (the edit wrote nothing — another writer
    /// had already made the move — or nothing the request reads), no update will resolve the
    /// edit: the last computed snapshot, the store's state at the edit's commit, does. Updates
    /// skipped before it are folded in, as for any update after the edit.
    func settleUserEdit(publishedBefore version: Int) {
        locked {
            // A failed commit refetches on the next one, which then resolves the edit.
            guard publishedVersion == version, observation != nil, !needsRefetch else { return }
            let new = computed
            scheduleDelivery { [self] in
                guard let edit = pendingEdit, edit.version == version + 1 else { return }
                pendingEdit = nil
                deliverDifference(to: new, touched: edit.touched)
            }
        }
    }

    /// Hands `event` to every consumer (see ``ResultsOutlet``).
    private func deliver(_ event: Event) { outlet.deliver(event, from: self) }

    // MARK: - Consumers

    /// The changes as an asynchronous sequence: first a ``ResultsUpdate/reload(_:)`` with the
    /// current snapshot, then every change. Each access makes a new sequence.
    ///
    /// When tracking fails (see ``ResultsControllerDelegate/controller(_:didFailWith:)``:
    /// a storage error, or a row the generated type cannot read), the sequence throws the
    /// error and ends, as GRDB's `ValueObservation` values do. The controller goes on: it
    /// refetches on the next commit, and iterating ``updates`` again starts from a reload of
    /// the last good snapshot. The sequence also ends, without error, when the controller is
    /// deinitialised or the iterating task is cancelled.
    ///
    /// ```swift
    /// do {
    ///     for try await update in controller.updates { show(update) }
    /// } catch {
    ///     showError(error)   // then iterate controller.updates again to go on
    /// }
    /// ```
    ///
    /// To wait for the batch of one change, take the sequence first, then write, then leave
    /// the loop at the batch. This works in a program's top-level code too, where Swift 6
    /// refuses `try await iterator.next()` on an iterator kept in a top-level variable:
    ///
    /// ```swift
    /// let updates = controller.updates             // a reload first, then a batch per commit
    /// try store.insert(Note(title: "Milk", updatedAt: Date()))
    /// for try await update in updates {
    ///     if let batch = update.batch { print(batch); break }
    /// }
    /// ```
    public var updates: AsyncThrowingStream<ResultsUpdate<Item, Section>, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ResultsUpdate<Item, Section>, any Error>.makeStream()
        let key = UUID()
        let finished = LockedValue(false)
        scheduleDelivery { [weak self] in
            guard let self else {
                continuation.finish()
                return
            }
            outlet.subscribe(Subscriber(
                key: key, isAlive: { !finished.withLock { $0 } },
                receive: { event in
                    switch event {
                    case .update(let update):
                        continuation.yield(update)
                    case .failure(let error):
                        finished.withLock { $0 = true }
                        continuation.finish(throwing: error)
                    }
                },
                finish: { continuation.finish() }))
            continuation.yield(.reload(snapshot))
        }
        continuation.onTermination = { [weak self] _ in
            finished.withLock { $0 = true }
            guard let self else { return }
            deliveryQueue.async { self.outlet.unsubscribe(key) }
        }
        return stream
    }

    /// Starts applying changes to `coordinatee` (held weakly): at once a ``Coordinatable/reload(_:)``
    /// with the current snapshot, then every change, and tracking failures
    /// (``Coordinatable/fail(with:)``), on the delivery queue.
    public func coordinate<C: Coordinatable>(_ coordinatee: C) where C.Item == Item, C.Section == Section {
        weak let weakCoordinatee = coordinatee
        nonisolated(unsafe) let subscriber = Subscriber(
            key: UUID(), isAlive: { weakCoordinatee != nil },
            receive: { event in
                guard let coordinatee = weakCoordinatee else { return }
                switch event {
                case .update(.reload(let snapshot)): coordinatee.reload(snapshot)
                case .update(.batch(let batch, let snapshot)): coordinatee.apply(batch, snapshot: snapshot)
                case .failure(let error): coordinatee.fail(with: error)
                }
            })
        scheduleDelivery { [self] in
            outlet.subscribe(subscriber)
            subscriber.receive(.update(.reload(snapshot)))
        }
    }

    /// Waits until every change computed so far has been delivered. For tests and
    /// command-line tools.
    ///
    /// It waits for the delivery queue to run, so it must not be called *on* that queue: on
    /// the main thread when deliveries go to the main queue (the default), or inside a
    /// delivery. Such a call could never return; it stops the program with a message that
    /// says so, instead of dispatch's bare trap or a hang. A command-line tool that blocks its
    /// main thread passes its own `deliveryQueue` (`DispatchQueue(label: "results")`), or lets
    /// the main queue run (`dispatchMain()`, `RunLoop.main.run()`, `await` in an async `main`).
    public func waitForDeliveries() {
        // (`DispatchQueue.main` is not always the same object: compare labels too.)
        let deliversOnMain = deliveryQueue === DispatchQueue.main || deliveryQueue.label == DispatchQueue.main.label
        if Thread.isMainThread && deliversOnMain {
            preconditionFailure(Self.deliveryDeadlockMessage(
                "on the main thread, and this controller delivers on the main queue (the default)"))
        }
        if DispatchQueue.getSpecific(key: deliveryQueueKey) == deliveryQueueToken {
            preconditionFailure(Self.deliveryDeadlockMessage("on this controller's delivery queue"))
        }
        deliveryQueue.sync {}
    }

    static func deliveryDeadlockMessage(_ place: String) -> String {
        "ResultsController.waitForDeliveries() was called \(place): it waits for that queue, which "
            + "cannot run while it waits, so it would never return. Create the controller with a "
            + "deliveryQueue of its own (ResultsController(store:request:deliveryQueue: DispatchQueue(label: \"results\"))), "
            + "or let the queue run instead of waiting (dispatchMain(), RunLoop.main.run(), or await in an async main)."
    }

    /// The request's fetcher (stateless), for user edits that read the request's order.
    var fetcherForEdits: ResultsFetcher<Item, Section> { locked { engine.fetcher } }

    /// The version of the last computed snapshot (see ``publish(reload:)``).
    var currentPublishedVersion: Int { locked { publishedVersion } }

    /// Inside a user edit's write: the edited row `id` is at `index` of `section` in the
    /// delivered snapshot, which the next commit (the edit's own) checks before searching.
    func hintEditedRow(_ id: Int64, in section: SectionID, at index: Int) {
        locked { engine.hintPlace(of: id, in: section, at: index) }
    }

    // MARK: - Invariants

    /// Checks the controller's internal state (debug builds only; does nothing in release):
    /// sections ordered and indexed, items ordered inside their sections with the in-memory
    /// SQLite ordering, every shown item in exactly one section, and the last computed
    /// snapshot well formed. Traps on violation. For tests.
    public func _checkInvariants() {
        #if DEBUG
        locked {
            engine._checkInvariants()
            computed._checkInvariants()
        }
        #endif
    }

    // MARK: - Internals for tests

    var engineForTesting: any AnyResultsEngine<Item, Section> { engine }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// The key under which a results controller marks its delivery queue.
private let deliveryQueueKey = DispatchSpecificKey<Int>()
/// The last token given to a delivery queue.
private let deliveryQueueTokens = LockedValue(0)
