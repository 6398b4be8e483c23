import Dispatch
import Foundation

/// The outlet of a ``ResultsController``: it owns delivery. It holds the last delivered
/// snapshot and every consumer of its changes — the subscribers (coordinators, held weakly,
/// and `updates` sequences) and the delegate, to which it translates each batch into the
/// fetched-results family's callbacks — and hands them each step of the
/// ``ResultsPipeline``, in order, failures included, on the delivery queue.
///
/// After a user edit it rebases the steps on the snapshot the edit delivered (see
/// ``deliverUserEdit(_:_:touched:before:from:)``): steps computed before the edit's
/// commit are folded into the next one, which is delivered as the difference from the
/// delivered snapshot, or not at all when the store agrees with the edit.
///
/// Confined to the delivery queue, except ``snapshot``, ``delegate`` and ``deliveryMode``,
/// which are read and set anywhere under its lock, and the methods that schedule work on
/// the queue.
final class ResultsOutlet<Item: StrataEntity, Section: Hashable & Sendable>: @unchecked Sendable {
    typealias Controller = ResultsController<Item, Section>

    /// What a subscriber receives.
    enum Event {
        case update(ResultsUpdate<Item, Section>)
        case failure(any Error)
    }

    struct Subscriber {
        let key: UUID
        /// False once the subscriber is gone (a released coordinator); it is then removed.
        let isAlive: () -> Bool
        let receive: (Event) -> Void
        /// Called when the controller goes away (ends `updates` sequences).
        var finish: () -> Void = {}
    }

    /// The queue every delivery happens on.
    let queue: DispatchQueue
    /// Marks the delivery queue (see ``waitForDeliveries()``): the value of
    /// `deliveryQueueKey` on it, shared by every outlet that delivers there.
    private let queueToken: Int

    private let lock = NSLock()
    private var delivered: ResultsSnapshot<Item, Section> = .empty
    private weak var _delegate: (any ResultsControllerDelegate<Item, Section>)?
    private var _deliveryMode: Controller.DeliveryMode
    /// Every consumer but the delegate, in subscription order (delivery queue only).
    private var subscribers: [Subscriber] = []
    /// Set by a user edit that changed the delivered snapshot before its commit was
    /// delivered (delivery queue only): steps computed before the edit's commit (`version`
    /// lower) are folded into the next one, which is delivered as the difference from the
    /// delivered snapshot. `touched`: the sections whose rows those steps and the edit
    /// changed (nil: any). `batch`: the edit's own batch while no step was skipped; a step
    /// from the snapshot before the edit that is this very batch then leads to the edited
    /// snapshot.
    private var pendingEdit: (version: Int, touched: Set<SectionID>?, batch: ChangeBatch?)?

    init(queue: DispatchQueue, mode: Controller.DeliveryMode) {
        self.queue = queue
        queueToken = Self.token(of: queue)
        _deliveryMode = mode
    }

    /// The token of `queue`, set on it the first time an outlet delivers there.
    private static func token(of queue: DispatchQueue) -> Int {
        deliveryQueueTokens.withLock { next in
            if let token = queue.getSpecific(key: deliveryQueueKey) { return token }
            next += 1
            queue.setSpecific(key: deliveryQueueKey, value: next)
            return next
        }
    }

    /// The last delivered snapshot.
    var snapshot: ResultsSnapshot<Item, Section> {
        lock.lock()
        defer { lock.unlock() }
        return delivered
    }

    /// Held weakly.
    var delegate: (any ResultsControllerDelegate<Item, Section>)? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return _delegate
        }
        set {
            lock.lock()
            _delegate = newValue
            lock.unlock()
        }
    }

    /// How changes are delivered; may change at any time.
    var deliveryMode: Controller.DeliveryMode {
        get {
            lock.lock()
            defer { lock.unlock() }
            return _deliveryMode
        }
        set {
            lock.lock()
            _deliveryMode = newValue
            lock.unlock()
        }
    }

    /// Takes `snapshot` as delivered without telling anyone (the consumers already show it).
    func take(_ snapshot: ResultsSnapshot<Item, Section>) {
        lock.lock()
        delivered = snapshot
        lock.unlock()
    }

    /// Ends every subscriber (the controller goes away), on the delivery queue after what is
    /// scheduled there: `subscribers` is the queue's alone (the controller's `deinit` runs on
    /// whatever thread let it go, while the queue may be adding or removing a subscriber).
    func finishAll() {
        scheduleDelivery { [self] in
            let ended = subscribers
            subscribers.removeAll()
            for subscriber in ended { subscriber.finish() }
        }
    }

    // MARK: - Steps (scheduled on the delivery queue, in the order they are sent)

    /// Schedules the delivery of `step`. Called under the controller's lock, so that
    /// deliveries keep the order of the steps.
    func send(_ step: ResultsStep<Item, Section>, from controller: Controller) {
        let new = step.snapshot, version = step.version
        switch step.change {
        case .unchanged:
            deliverUnchanged(new, version: version, from: controller)
        case .update(let update, let touched):
            scheduleDelivery { [self] in deliver(.update(update), version: version, touched: touched, from: controller) }
        case .refetchedInPages:
            scheduleDelivery { [self] in deliver(.update(.reload(new)), from: controller) }
        }
    }

    /// Schedules the delivery of a failure to every consumer.
    func fail(with error: any Error, from controller: Controller) {
        scheduleDelivery { [self] in deliver(.failure(error), from: controller) }
    }

    /// A step computed by the pipeline (the `version`th), after a user edit: skipped when it
    /// was computed before the edit's commit, otherwise rebased on the delivered snapshot.
    private func deliver(_ event: Event, version: Int, touched: Set<SectionID>?, from controller: Controller) {
        guard case .update(let update) = event, let edit = pendingEdit else { return deliver(event, from: controller) }
        let touched = edit.touched.flatMap { mine in touched.map { mine.union($0) } }
        if version < edit.version {
            // Computed before the edit's commit: its changes reach consumers with the next step.
            pendingEdit = (edit.version, touched, nil)
            return
        }
        pendingEdit = nil
        guard case .batch(let commitBatch, let new) = update else {
            // A reload (reload mode): nothing more when it is what the edit showed.
            if update.snapshot == snapshot { return }
            return deliver(event, from: controller)
        }
        var userBatch = edit.batch
        userBatch?.userEdit = nil
        if let userBatch, userBatch == commitBatch {
            // The edit's commit did exactly what the edit showed: nothing to deliver, and no
            // difference to compute (a list of 100k rows would take milliseconds).
            take(new)
            return
        }
        deliverDifference(to: new, touched: touched, from: controller)
    }

    /// Delivers the difference from the delivered snapshot to `new` (rows of `touched`
    /// sections only), or, when there is none, just takes `new` as delivered.
    private func deliverDifference(to new: ResultsSnapshot<Item, Section>, touched: Set<SectionID>?, from controller: Controller) {
        if deliveryMode == .reloads {
            // Consumers that asked for reloads get one, when anything differs.
            if new == snapshot {
                take(new)
                return
            }
            return deliver(.update(.reload(new)), from: controller)
        }
        // (Never nil: only a refetch of batched results builds no batch.)
        let batch = BatchBuilder.batch(from: snapshot, to: new, known: .sinceUserEdit(touched: touched))!
        if batch.isEmpty {
            take(new)
            return
        }
        deliver(.update(.batch(batch, new)), from: controller)
    }

    /// A step that changed nothing the consumers see: nothing to deliver, unless a user edit
    /// waits for it (its own commit), which then resolves against `new`.
    private func deliverUnchanged(_ new: ResultsSnapshot<Item, Section>, version: Int, from controller: Controller) {
        scheduleDelivery { [self] in
            guard let edit = pendingEdit, version >= edit.version else { return }
            pendingEdit = nil
            deliverDifference(to: new, touched: edit.touched, from: controller)
        }
    }

    // MARK: - User edits

    /// Delivers a user edit's batch now (on the delivery queue, before the edit returns):
    /// ``snapshot`` becomes `new`, and later steps are rebased on it (see `pendingEdit`).
    /// `version` is the pipeline's version read inside the edit's write transaction: the
    /// steps up to it were computed before the edit's commit.
    func deliverUserEdit(
        _ batch: ChangeBatch, _ new: ResultsSnapshot<Item, Section>, touched: Set<SectionID>, before version: Int,
        from controller: Controller
    ) {
        dispatchPrecondition(condition: .onQueue(queue))
        var all: Set<SectionID>? = touched
        if let edit = pendingEdit { all = edit.touched.map { $0.union(touched) } }
        pendingEdit = (version + 1, all, pendingEdit == nil ? batch : nil)
        // Consumers that asked for reloads get the edited snapshot as one.
        deliver(.update(deliveryMode == .reloads ? .reload(new) : .batch(batch, new)), from: controller)
    }

    /// Schedules the resolution of the user edit whose write left the pipeline at `version`
    /// with `new` computed (see ``ResultsPipeline/settled(since:)``): no step will resolve it.
    /// Steps skipped before it are folded in, as for any step after the edit.
    func settleUserEdit(to new: ResultsSnapshot<Item, Section>, version: Int, from controller: Controller) {
        scheduleDelivery { [self] in
            guard let edit = pendingEdit, edit.version == version + 1 else { return }
            pendingEdit = nil
            deliverDifference(to: new, touched: edit.touched, from: controller)
        }
    }

    // MARK: - Consumers

    /// Every subscriber, then the delegate (called with `controller`), gets `event`, in order.
    private func deliver(_ event: Event, from controller: Controller) {
        let previous = snapshot
        lock.lock()
        if case .update(let update) = event { delivered = update.snapshot }
        let delegate = _delegate
        lock.unlock()
        subscribers.removeAll { !$0.isAlive() }
        for subscriber in subscribers { subscriber.receive(event) }
        guard let delegate else { return }
        switch event {
        case .update(.reload(let snapshot)):
            delegate.controller(controller, didReload: snapshot)
        case .update(.batch(let batch, let snapshot)):
            Self.report(batch, from: previous, to: snapshot, to: delegate, of: controller)
        case .failure(let error):
            delegate.controller(controller, didFailWith: error)
        }
    }

    /// A new sequence of the changes: first a reload of the delivered snapshot, then every
    /// change; it throws a failure and ends (see ``ResultsController/updates``).
    func updates() -> AsyncThrowingStream<ResultsUpdate<Item, Section>, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ResultsUpdate<Item, Section>, any Error>.makeStream()
        let key = UUID()
        let finished = LockedValue(false)
        scheduleDelivery { [weak self] in
            guard let self else {
                continuation.finish()
                return
            }
            subscribers.append(Subscriber(
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
            queue.async { self.subscribers.removeAll { $0.key == key } }
        }
        return stream
    }

    /// Subscribes `coordinatee` (held weakly): at once a reload of the delivered snapshot,
    /// then every change and failure.
    func coordinate<C: Coordinatable>(_ coordinatee: C) where C.Item == Item, C.Section == Section {
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
            subscribers.append(subscriber)
            subscriber.receive(.update(.reload(snapshot)))
        }
    }

    /// Waits until everything scheduled so far has been delivered (see
    /// ``ResultsController/waitForDeliveries()``); stops the program when that could never
    /// return.
    func waitForDeliveries() {
        // (`DispatchQueue.main` is not always the same object: compare labels too.)
        let deliversOnMain = queue === DispatchQueue.main || queue.label == DispatchQueue.main.label
        if Thread.isMainThread && deliversOnMain {
            preconditionFailure(Controller.deliveryDeadlockMessage(
                "on the main thread, and this controller delivers on the main queue (the default)"))
        }
        if DispatchQueue.getSpecific(key: deliveryQueueKey) == queueToken {
            preconditionFailure(Controller.deliveryDeadlockMessage("on this controller's delivery queue"))
        }
        queue.sync {}
    }

    /// The batch as the fetched-results family's callbacks: will change, each section and
    /// item change in the batch's order, the batch itself, did change.
    private static func report(
        _ batch: ChangeBatch, from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>,
        to delegate: any ResultsControllerDelegate<Item, Section>, of controller: Controller
    ) {
        delegate.controllerWillChangeContent(controller)
        for index in batch.sectionDeletes {
            delegate.controller(controller, didChange: old.sections[index], atSectionIndex: index, for: .delete, newSectionIndex: nil)
        }
        for index in batch.sectionInserts {
            delegate.controller(controller, didChange: new.sections[index], atSectionIndex: index, for: .insert, newSectionIndex: nil)
        }
        for move in batch.sectionMoves {
            delegate.controller(
                controller, didChange: new.sections[move.to], atSectionIndex: move.from, for: .move, newSectionIndex: move.to)
        }
        if !batch.sectionUpdates.isEmpty {
            for index in batch.sectionUpdates {
                let id = old.sections[index].id
                let section = new.index(ofSection: id).map { new.sections[$0] } ?? old.sections[index]
                delegate.controller(controller, didChange: section, atSectionIndex: index, for: .update, newSectionIndex: nil)
            }
        }
        for path in batch.itemDeletes {
            delegate.controller(controller, didChange: old[path], at: path, for: .delete, newIndexPath: nil)
        }
        for path in batch.itemInserts {
            delegate.controller(controller, didChange: new[path], at: nil, for: .insert, newIndexPath: path)
        }
        for move in batch.itemMoves {
            delegate.controller(controller, didChange: new[move.to], at: move.from, for: .move, newIndexPath: move.to)
        }
        if !batch.itemUpdates.isEmpty {
            let newPaths = Self.newPaths(of: batch.itemUpdates, in: old, new)
            for (path, newPath) in zip(batch.itemUpdates, newPaths) {
                delegate.controller(controller, didChange: new[newPath], at: path, for: .update, newIndexPath: nil)
            }
        }
        delegate.controller(controller, didChange: batch, snapshot: new)
        delegate.controllerDidChangeContent(controller)
    }

    /// Where the rows at `paths` of `old` are in `new` (updated rows stay in their section, so
    /// only those sections are searched).
    private static func newPaths(
        of paths: [ItemPath], in old: ResultsSnapshot<Item, Section>, _ new: ResultsSnapshot<Item, Section>
    ) -> [ItemPath] {
        var newSectionIndex: [SectionID: Int] = [:]
        for (index, section) in new.sections.enumerated() { newSectionIndex[section.id] = index }
        var wanted: [Int: [ResultsRowID<Item.ID>: Int]] = [:]
        for (index, path) in paths.enumerated() {
            let id = old.sections[path.section].id
            guard let s = newSectionIndex[id] else { continue }
            wanted[s, default: [:]][old[path].key(in: id)] = index
        }
        var result = paths
        for (s, keys) in wanted {
            let section = new.sections[s]
            for (r, row) in section.rows.enumerated() {
                if let index = keys[row.key(in: section.id)] { result[index] = ItemPath(section: s, item: r) }
            }
        }
        return result
    }
}

/// The key under which a results outlet marks its delivery queue.
private let deliveryQueueKey = DispatchSpecificKey<Int>()
/// The last token given to a delivery queue.
private let deliveryQueueTokens = LockedValue(0)
