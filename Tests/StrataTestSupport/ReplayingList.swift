import Dispatch
import Foundation
import Strata

/// A list view's model in a test: shows a controller's first snapshot, then replays each batch
/// on the snapshot shown before it, as a table view applies it. Every batch must lead to its
/// snapshot, and at the end the list must show what a fresh fetch gives (``problems(_:store:)``).
public final class ReplayingList<Item: StrataEntity, Section: Hashable & Sendable>: Coordinatable, @unchecked Sendable {
    private let lock = NSLock()
    private var _shown: ResultsSnapshot<Item, Section>?
    private var _failures: [String] = []
    private var _batches = 0

    public init() {}

    /// The snapshot the list shows.
    public var shown: ResultsSnapshot<Item, Section>? { lock.withLock { _shown } }
    /// What went wrong so far: batches that do not replay, or a tracking failure.
    public var failures: [String] { lock.withLock { _failures } }
    /// The batches applied.
    public var batches: Int { lock.withLock { _batches } }

    public func reload(_ snapshot: ResultsSnapshot<Item, Section>) {
        lock.withLock { _shown = snapshot }
    }

    public func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Item, Section>) {
        lock.withLock {
            _batches += 1
            guard let old = _shown else {
                _failures.append("a batch before the first snapshot")
                return
            }
            do {
                let replayed = try batch.apply(to: old, reading: snapshot)
                if replayed != snapshot { _failures.append("batch \(_batches) does not replay to its snapshot") }
            } catch {
                _failures.append("batch \(_batches) is invalid: \(error)")
            }
            _shown = snapshot
        }
    }

    public func fail(with error: any Error) {
        lock.withLock { _failures.append("tracking failed: \(error)") }
    }

    /// Once `controller` delivered everything: what is wrong with the list, empty when every
    /// batch replayed and the list shows what a fresh controller on the same request fetches
    /// from `store` now.
    public func problems(_ controller: ResultsController<Item, Section>, store: Store) throws -> [String] {
        controller.waitForDeliveries()
        let fresh = try ResultsController(
            store: store, request: controller.request, deliveryQueue: DispatchQueue(label: "strata.tests.fresh"))
        return lock.withLock {
            _failures + (_shown == fresh.snapshot ? [] : ["the list differs from a fresh fetch"])
        }
    }
}

extension ResultsController {
    /// A controller on its own queue whose deliveries a ``ReplayingList`` replays, from the
    /// first snapshot on.
    public static func replaying(
        store: Store, request: ResultsRequest<Item, Section>
    ) throws -> (ResultsController<Item, Section>, ReplayingList<Item, Section>) {
        let controller = try ResultsController(
            store: store, request: request, deliveryQueue: DispatchQueue(label: "strata.tests.replaying"))
        let list = ReplayingList<Item, Section>()
        controller.coordinate(list)
        controller.waitForDeliveries()
        return (controller, list)
    }
}
