import Foundation

/// The outlet of a ``ResultsController``: the last delivered snapshot, and every consumer of
/// its changes — the subscribers (coordinators, held weakly, and `updates` sequences) and the
/// delegate — which get each event in the same order, failures included. Confined to the
/// controller's delivery queue, except ``snapshot`` and ``delegate``, which are read and set
/// anywhere under its lock.
final class ResultsOutlet<Item: StrataEntity, Section: Hashable & Sendable>: @unchecked Sendable {
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

    private let lock = NSLock()
    private var delivered: ResultsSnapshot<Item, Section> = .empty
    private weak var _delegate: (any ResultsControllerDelegate<Item, Section>)?
    /// Every consumer but the delegate, in subscription order.
    private var subscribers: [Subscriber] = []

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

    /// Takes `snapshot` as delivered without telling anyone (the consumers already show it).
    func take(_ snapshot: ResultsSnapshot<Item, Section>) {
        lock.lock()
        delivered = snapshot
        lock.unlock()
    }

    /// Ends every subscriber (the controller goes away).
    func finishAll() {
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Every subscriber, then the delegate (called with `controller`), gets `event`, in order.
    func deliver(_ event: Event, from controller: ResultsController<Item, Section>) {
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

    func subscribe(_ subscriber: Subscriber) {
        subscribers.append(subscriber)
    }

    func unsubscribe(_ key: UUID) {
        subscribers.removeAll { $0.key == key }
    }

    /// The batch as the fetched-results family's callbacks: will change, each section and
    /// item change in the batch's order, the batch itself, did change.
    private static func report(
        _ batch: ChangeBatch, from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>,
        to delegate: any ResultsControllerDelegate<Item, Section>, of controller: ResultsController<Item, Section>
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
