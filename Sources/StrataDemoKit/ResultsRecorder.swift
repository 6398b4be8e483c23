import Foundation
import Strata

/// Everything a ``ResultsController`` delivers, recorded in order: it is both the
/// controller's delegate (FRC-style callbacks) and a ``Coordinatable`` (batch + snapshot).
///
/// Deliveries happen on the controller's delivery queue; the demo drains them on its own
/// thread after `waitForDeliveries()`.
final class ResultsRecorder: ResultsControllerDelegate, Coordinatable, @unchecked Sendable {
    typealias Item = Note
    typealias Section = Notebook

    /// One delivery: a batch (with the delegate's callbacks for it) or a reload.
    struct Delivery {
        var update: ResultsUpdate<Note, Notebook>
        var callbacks: [Callback] = []
    }

    /// A delegate callback for a section or a row.
    enum Callback {
        case section(ResultsChangeType, index: Int, newIndex: Int?, ResultsSection<Note, Notebook>)
        case row(ResultsChangeType, path: ItemPath?, newPath: ItemPath?, ResultsRow<Note>)
    }

    private let lock = NSLock()
    private var deliveries: [Delivery] = []
    private var failures: [String] = []

    /// The deliveries since the last call, and the tracking failures.
    func drain() -> (deliveries: [Delivery], failures: [String]) {
        lock.lock()
        defer {
            deliveries = []
            failures = []
            lock.unlock()
        }
        return (deliveries, failures)
    }

    private func record(_ body: () -> Void) {
        lock.lock()
        body()
        lock.unlock()
    }

    // MARK: - Coordinatable

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) {
        record { deliveries.append(Delivery(update: .batch(batch, snapshot))) }
    }

    func reload(_ snapshot: ResultsSnapshot<Note, Notebook>) {
        record { deliveries.append(Delivery(update: .reload(snapshot))) }
    }

    // MARK: - ResultsControllerDelegate (called after the coordinatees, for the same batch)

    func controller(
        _ controller: ResultsController<Note, Notebook>, didChange section: ResultsSection<Note, Notebook>,
        atSectionIndex index: Int, for type: ResultsChangeType, newSectionIndex: Int?
    ) {
        record {
            guard !deliveries.isEmpty else { return }
            deliveries[deliveries.count - 1].callbacks.append(.section(type, index: index, newIndex: newSectionIndex, section))
        }
    }

    func controller(
        _ controller: ResultsController<Note, Notebook>, didChange row: ResultsRow<Note>, at indexPath: ItemPath?,
        for type: ResultsChangeType, newIndexPath: ItemPath?
    ) {
        record {
            guard !deliveries.isEmpty else { return }
            deliveries[deliveries.count - 1].callbacks.append(.row(type, path: indexPath, newPath: newIndexPath, row))
        }
    }

    func controller(_ controller: ResultsController<Note, Notebook>, didFailWith error: any Error) {
        record { failures.append("\(error)") }
    }
}
