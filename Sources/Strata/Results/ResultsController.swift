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

    /// Guards `pipeline` and `observation`. Commits take the store's writer, then this lock.
    private let lock = NSLock()
    /// Every input goes through it; it returns the next snapshot and its batch.
    private let pipeline: ResultsPipeline<Item, Section>
    /// The commit observation while tracking; nil while paused.
    private var observation: CommitObservation?
    /// The delivered snapshot and every consumer: what the pipeline computes reaches them
    /// only through it, on the delivery queue.
    private let outlet: ResultsOutlet<Item, Section>

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
        outlet = ResultsOutlet(queue: deliveryQueue, mode: mode)
        pipeline = ResultsPipeline(engine: try ResultsEngine.make(
            request: request, schema: store.schema, options: options, loading: loading, store: store))
        try startTracking(deliverReload: false)
        outlet.take(pipeline.computed)
    }

    deinit {
        observation?.cancel()
        outlet.finishAll()
    }

    // MARK: - State

    /// The queue every delivery happens on.
    public var deliveryQueue: DispatchQueue { outlet.queue }

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
        get { outlet.deliveryMode }
        set { locked { outlet.deliveryMode = newValue } }
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
        get { locked { pipeline.options } }
        set { updateOptions { $0 = newValue } }
    }

    /// The post-fetch filter (see ``ResultsOptions/filter``).
    public var filter: (@Sendable (Item) -> Bool)? {
        get { options.filter }
        set { updateOptions { $0.filter = newValue } }
    }

    /// The post-fetch comparator (see ``ResultsOptions/comparator``).
    public var comparator: (@Sendable (Item, Item) -> Bool)? {
        get { options.comparator }
        set { updateOptions { $0.comparator = newValue } }
    }

    /// Whether filtered-out items are shown as one group row per section (see
    /// ``ResultsOptions/groupFilteredItems``).
    public var groupFilteredItems: Bool {
        get { options.groupFilteredItems }
        set { updateOptions { $0.groupFilteredItems = newValue } }
    }

    /// Changes the options in one step under the lock, and sends what the pipeline computes.
    private func updateOptions(_ change: (inout ResultsOptions<Item>) -> Void) {
        locked {
            var options = pipeline.options
            change(&options)
            do {
                let step = try pipeline.setOptions(
                    options, publishing: observation != nil, reloads: outlet.deliveryMode == .reloads)
                if let step { outlet.send(step, from: self) }
            } catch {
                outlet.fail(with: store.typedError(error), from: self)
            }
        }
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
            try store.checkOpen()
            try store.writer.writeWithoutTransaction { db in
                try locked {
                    guard observation == nil else { return }
                    let step = try pipeline.fetch(db, reload: deliverReload)
                    observation = store.observeCommits(reading: { [weak self] changes, db in
                        self?.handle(changes, db)
                    })
                    if let step { outlet.send(step, from: self) }
                }
            }
        } catch {
            throw store.typedError(error)
        }
    }

    // MARK: - Commits

    /// Each commit, on the writer right after it: the pipeline's step goes to the outlet.
    private func handle(_ changes: CommittedChanges, _ db: Database) {
        locked {
            guard observation != nil else { return }
            do {
                if let step = try pipeline.commit(changes, db, reloads: outlet.deliveryMode == .reloads) {
                    outlet.send(step, from: self)
                }
            } catch {
                outlet.fail(with: store.typedError(error), from: self)
            }
        }
    }

    // MARK: - User edits (see ``moveItem(from:to:)-(ItemPath,_)`` and ``deleteItem(at:)-(ItemPath)``)

    /// The request's order as a move reads it, computed on the first move.
    func editOrdering() throws -> OrderedRequest {
        try locked { try pipeline.editOrdering(request: request, schema: store.schema) }
    }

    /// A user edit of the row `id`, at `path` of section `section` of the delivered
    /// snapshot, through the pipeline like a commit: `write` runs in one write transaction
    /// that starts once the store has handed its observers what other connections committed
    /// before it, so that the pipeline's state is the one the edit reads; the pipeline then
    /// builds the edited snapshot and the edit's batch, which the outlet delivers before
    /// this returns. On the delivery queue.
    func edit(
        _ id: Int64, at path: ItemPath, in section: SectionID,
        write: (Database, ResultsFetcher<Item, Section>) throws -> UserEdit<Item>
    ) throws {
        let delivered = snapshot
        var version = 0
        let edit = try store.writeAfterOtherConnections { db in
            let fetcher = locked {
                version = pipeline.beginEdit(of: id, in: section, at: path.item)
                return pipeline.engine.fetcher
            }
            return try write(db, fetcher)
        }
        let (new, batch, touched) = locked { pipeline.edited(edit, of: delivered) }
        outlet.deliverUserEdit(batch, new, touched: touched, before: version, from: self)
        locked {
            guard observation != nil, let settled = pipeline.settled(since: version) else { return }
            outlet.settleUserEdit(to: settled, version: version, from: self)
        }
    }

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
    public var updates: AsyncThrowingStream<ResultsUpdate<Item, Section>, any Error> { outlet.updates() }

    /// Starts applying changes to `coordinatee` (held weakly): at once a ``Coordinatable/reload(_:)``
    /// with the current snapshot, then every change, and tracking failures
    /// (``Coordinatable/fail(with:)``), on the delivery queue.
    public func coordinate<C: Coordinatable>(_ coordinatee: C) where C.Item == Item, C.Section == Section {
        outlet.coordinate(coordinatee)
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
    public func waitForDeliveries() { outlet.waitForDeliveries() }

    static func deliveryDeadlockMessage(_ place: String) -> String {
        "ResultsController.waitForDeliveries() was called \(place): it waits for that queue, which "
            + "cannot run while it waits, so it would never return. Create the controller with a "
            + "deliveryQueue of its own (ResultsController(store:request:deliveryQueue: DispatchQueue(label: \"results\"))), "
            + "or let the queue run instead of waiting (dispatchMain(), RunLoop.main.run(), or await in an async main)."
    }

    // MARK: - Invariants

    /// Checks the controller's internal state (debug builds only; does nothing in release):
    /// sections ordered and indexed, items ordered inside their sections with the in-memory
    /// SQLite ordering, every shown item in exactly one section, and the last computed
    /// snapshot well formed. Traps on violation. For tests.
    public func _checkInvariants() {
        #if DEBUG
        locked { pipeline._checkInvariants() }
        #endif
    }

    // MARK: - Internals

    /// Tests set this to check the engine's invariants and every batch after every change.
    var checksInvariants: Bool {
        get { locked { pipeline.checksInvariants } }
        set { locked { pipeline.checksInvariants = newValue } }
    }

    var engineForTesting: any AnyResultsEngine<Item, Section> { locked { pipeline.engine } }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
