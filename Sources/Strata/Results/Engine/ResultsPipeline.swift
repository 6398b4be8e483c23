import GRDB

/// The engine's entry: every input of live results goes in here — a fetch, a commit, an
/// options change, a user edit — and the next snapshot comes out, with what changed since
/// the last one (a ``ResultsStep``, which ``ResultsOutlet`` delivers).
///
/// In the order the code runs for a commit:
/// 1. ``commit(_:_:reloads:)``, on the store's writer right after the commit: the engine's
///    ``CommitTracker`` decides (nothing to do, a refetch, or the rows to re-read), and the
///    engine applies it (``ResultsEngine/apply(_:_:)``);
/// 2. the engine derives the new snapshot and says what is known to have changed
///    (``ResultsEngine/snapshotAndChanges()``);
/// 3. ``BatchBuilder`` turns that into the batch from the last computed snapshot;
/// 4. the step is numbered (``ResultsStep/version``), so that the outlet can tell the steps
///    computed before a user edit's commit from those after.
///
/// A user edit enters the same way: ``beginEdit(of:in:at:)`` inside the edit's write (its
/// commit is the next one this pipeline sees), then ``edited(_:of:)`` builds the edited
/// snapshot and the edit's batch from the delivered snapshot, and ``settled(since:)``
/// resolves an edit that wrote nothing.
///
/// Not thread-safe: its owner (``ResultsController``) serialises every call under its lock.
final class ResultsPipeline<Item: StrataEntity, Section: Hashable & Sendable> {
    /// The state: index, values, journal, tracker. Replaced once when batched results turn
    /// eager (see ``setOptions(_:publishing:reloads:)``).
    private(set) var engine: any AnyResultsEngine<Item, Section>
    /// The last computed snapshot.
    private(set) var computed: ResultsSnapshot<Item, Section> = .empty
    /// The version of ``computed``: the number of steps computed so far.
    private(set) var version = 0
    /// Tests set this to check the engine's invariants and every batch after every change.
    var checksInvariants = false
    /// The request's order as user moves read it, once computed.
    private var editOrderingCache: OrderedRequest?

    init(engine: any AnyResultsEngine<Item, Section>) {
        self.engine = engine
    }

    var options: ResultsOptions<Item> { engine.options }

    // MARK: - Inputs

    /// Reads everything afresh: without `reload`, the first fetch (its snapshot is taken as
    /// delivered, no step); with it, a step that delivers the new state as a reload.
    func fetch(_ db: Database, reload: Bool) throws -> ResultsStep<Item, Section>? {
        try engine.fetchAll(db)
        guard reload else {
            computed = engine.snapshot()
            checkInvariants()
            return nil
        }
        let step = step(reload: true, reloads: true)
        checkInvariants()
        return step
    }

    /// One commit (or several merged); nil when it cannot have changed the results.
    /// `reloads`: the consumers asked for reloads (``ResultsController/DeliveryMode/reloads``).
    func commit(_ changes: CommittedChanges, _ db: Database, reloads: Bool) throws -> ResultsStep<Item, Section>? {
        guard try engine.apply(changes, db) else { return nil }
        checkInvariants()
        return step(reload: false, reloads: reloads)
    }

    /// New post-fetch options; their step when `publishing` (the results are tracked).
    /// A filter or a comparator reads every value: the engine loads eagerly from then on
    /// (``ResultsEngine/loadingEagerly()``, itself when it does already); when that read
    /// fails, the options stay as they were and the error is thrown.
    func setOptions(_ options: ResultsOptions<Item>, publishing: Bool, reloads: Bool) throws -> ResultsStep<Item, Section>? {
        if options.filter != nil || options.comparator != nil {
            engine = try engine.loadingEagerly()
        }
        engine.options = options
        return publishing ? step(reload: false, reloads: reloads) : nil
    }

    /// Inside a user edit's write, before it writes: the edited row `id` is at `index` of
    /// `section` in the delivered snapshot, which the edit's commit checks before searching.
    /// Returns the version of the last step computed before the edit's commit.
    func beginEdit(of id: Int64, in section: SectionID, at index: Int) -> Int {
        engine.hintPlace(of: id, in: section, at: index)
        return version
    }

    /// The snapshot with `edit` made to `delivered` (what the list view shows), its batch,
    /// and the sections it touches. Reads no row.
    func edited(
        _ edit: UserEdit<Item>, of delivered: ResultsSnapshot<Item, Section>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, batch: ChangeBatch, touched: Set<SectionID>) {
        let new = edit.applied(to: delivered)
        let batch = BatchBuilder.batch(from: delivered, to: new, edit: edit)
        #if DEBUG
        if checksInvariants { BatchBuilder._checkUserEdit(batch, from: delivered, to: new) }
        #endif
        return (new, batch, edit.touchedSections(of: delivered))
    }

    /// After a user edit's write, with the version ``beginEdit(of:in:at:)`` returned: when no
    /// step was computed since (the edit wrote nothing — another writer had already made the
    /// move — or nothing the request reads) and the state is known, the last computed
    /// snapshot, which is the store's state at the edit's commit. Otherwise nil: a step
    /// resolves the edit (a failed commit refetches on the next one, which then does).
    func settled(since version: Int) -> ResultsSnapshot<Item, Section>? {
        guard self.version == version, !engine.needsRefetch else { return nil }
        return computed
    }

    /// The request's order as a move reads it, computed on the first move.
    func editOrdering(request: ResultsRequest<Item, Section>, schema: SchemaDescriptor) throws -> OrderedRequest {
        if let editOrderingCache { return editOrderingCache }
        let ordering = try OrderedRequest(request: request, schema: schema)
        editOrderingCache = ordering
        return ordering
    }

    // MARK: - Steps

    /// Derives the next snapshot and what reaches consumers.
    private func step(reload: Bool, reloads: Bool) -> ResultsStep<Item, Section> {
        let old = computed
        let (new, known) = engine.snapshotAndChanges()
        computed = new
        version += 1
        if reload || reloads {
            if !reload && old == new { return ResultsStep(snapshot: new, version: version, change: .unchanged) }
            return ResultsStep(snapshot: new, version: version, change: .update(.reload(new), touched: nil))
        }
        guard let batch = BatchBuilder.batch(from: old, to: new, known: known) else {
            // A refetch of batched results: values are not loaded to compare, so a reload.
            return ResultsStep(snapshot: new, version: version, change: .refetchedInPages)
        }
        #if DEBUG
        if checksInvariants { BatchBuilder._check(batch, from: old, to: new, known: known) }
        #endif
        if batch.isEmpty { return ResultsStep(snapshot: new, version: version, change: .unchanged) }
        let touched = batch.touchedSections(from: old, to: new)
        return ResultsStep(snapshot: new, version: version, change: .update(.batch(batch, new), touched: touched))
    }

    // MARK: - Invariants

    private func checkInvariants() {
        #if DEBUG
        if checksInvariants { _checkInvariants() }
        #endif
    }

    /// Checks the engine's parts and the last computed snapshot (debug builds only).
    func _checkInvariants() {
        #if DEBUG
        engine._checkInvariants()
        computed._checkInvariants()
        #endif
    }
}
