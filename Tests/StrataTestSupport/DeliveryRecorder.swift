import Foundation
import Strata

/// Records what a results controller delivers, in order, so that a test can assert the whole
/// sequence: as a coordinator (``ResultsController/coordinate(_:)``) or as the delegate (its
/// `didReload`, `didChange batch` and `didFailWith` callbacks; the per-row and per-section
/// callbacks are not recorded). Deliveries may come on any queue.
///
/// A recorder of failures alone (`recording: .failures`) keeps no snapshot alive: a batched
/// controller keeps values for every snapshot still alive, so a test that only looks at the
/// errors does not make it keep more than it would.
public final class DeliveryRecorder<Item: StrataEntity, Section: Hashable & Sendable>: Coordinatable, ResultsControllerDelegate,
    @unchecked Sendable
{
    /// One delivery.
    public enum Delivery {
        /// Show the snapshot as is (a coordinator's first delivery, after `resume()`, or in
        /// the reloads mode).
        case reload(ResultsSnapshot<Item, Section>)
        /// The batch, and the snapshot it leads to.
        case batch(ChangeBatch, ResultsSnapshot<Item, Section>)
        /// Tracking failed.
        case failure(any Error)
    }

    /// Which deliveries a recorder keeps.
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static var reloads: Kinds { Kinds(rawValue: 1) }
        public static var batches: Kinds { Kinds(rawValue: 2) }
        public static var failures: Kinds { Kinds(rawValue: 4) }
        public static var all: Kinds { [.reloads, .batches, .failures] }
    }

    private let lock = NSLock()
    private let kinds: Kinds
    private var recorded: [Delivery] = []

    /// A recorder of the deliveries of `kinds` (all of them by default).
    public init(recording kinds: Kinds = .all) { self.kinds = kinds }

    /// Every delivery recorded, in order.
    public var deliveries: [Delivery] { lock.withLock { recorded } }

    /// The reloads and batches, in order (as a controller's `updates` sequence gives them).
    public var updates: [ResultsUpdate<Item, Section>] {
        deliveries.compactMap { delivery in
            switch delivery {
            case .reload(let snapshot): .reload(snapshot)
            case .batch(let batch, let snapshot): .batch(batch, snapshot)
            case .failure: nil
            }
        }
    }

    /// The failures, in order.
    public var errors: [any Error] {
        deliveries.compactMap { delivery in
            if case .failure(let error) = delivery { return error }
            return nil
        }
    }

    /// Each delivery recorded, as `describe` writes it.
    public func events(_ describe: (Delivery) -> String) -> [String] { deliveries.map(describe) }

    private func record(_ delivery: Delivery, _ kind: Kinds) {
        guard kinds.contains(kind) else { return }
        lock.withLock { recorded.append(delivery) }
    }

    // MARK: - Coordinatable

    public func reload(_ snapshot: ResultsSnapshot<Item, Section>) { record(.reload(snapshot), .reloads) }

    public func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Item, Section>) { record(.batch(batch, snapshot), .batches) }

    public func fail(with error: any Error) { record(.failure(error), .failures) }

    // MARK: - ResultsControllerDelegate

    public func controller(_ controller: ResultsController<Item, Section>, didReload snapshot: ResultsSnapshot<Item, Section>) {
        reload(snapshot)
    }

    public func controller(
        _ controller: ResultsController<Item, Section>, didChange batch: ChangeBatch, snapshot: ResultsSnapshot<Item, Section>
    ) {
        apply(batch, snapshot: snapshot)
    }

    public func controller(_ controller: ResultsController<Item, Section>, didFailWith error: any Error) { fail(with: error) }
}
