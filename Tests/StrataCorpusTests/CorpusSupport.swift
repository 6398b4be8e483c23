import Dispatch
import Foundation
import Strata
import Testing

/// A store file in a fresh temporary folder, removed with the folder at the end.
final class CorpusFile {
    let folder: URL
    var path: String { folder.appendingPathComponent("store.sqlite").path }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }
}

/// Records every delivery of a controller, and replays each batch on the snapshot before
/// it: the state a list view would show must be the controller's.
final class ReplayingList<Item: StrataEntity, Section: Hashable & Sendable>: Coordinatable, @unchecked Sendable {
    private let lock = NSLock()
    private var shown: ResultsSnapshot<Item, Section>?
    private var failures: [String] = []
    private(set) var batches = 0

    func reload(_ snapshot: ResultsSnapshot<Item, Section>) {
        lock.withLock { shown = snapshot }
    }

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Item, Section>) {
        lock.withLock {
            batches += 1
            guard let old = shown else {
                failures.append("a batch before the first snapshot")
                return
            }
            do {
                let replayed = try batch.apply(to: old, reading: snapshot)
                if replayed != snapshot { failures.append("batch \(batches) does not replay to its snapshot") }
            } catch {
                failures.append("batch \(batches) is invalid: \(error)")
            }
            shown = snapshot
        }
    }

    func fail(with error: any Error) {
        lock.withLock { failures.append("tracking failed: \(error)") }
    }

    /// Checks that every batch replayed, and that the list shows what a fresh controller on
    /// the same request fetches now.
    func check(
        _ controller: ResultsController<Item, Section>, store: Store, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        controller.waitForDeliveries()
        let fresh = try ResultsController(
            store: store, request: controller.request, deliveryQueue: DispatchQueue(label: "strata.corpus.fresh"))
        lock.withLock {
            #expect(failures.isEmpty, "\(failures)", sourceLocation: sourceLocation)
            #expect(shown == fresh.snapshot, "the list differs from a fresh fetch", sourceLocation: sourceLocation)
        }
    }
}

extension ResultsController {
    /// A controller on its own queue whose deliveries a ``ReplayingList`` replays.
    static func replaying(
        store: Store, request: ResultsRequest<Item, Section>
    ) throws -> (ResultsController<Item, Section>, ReplayingList<Item, Section>) {
        let controller = try ResultsController(
            store: store, request: request, deliveryQueue: DispatchQueue(label: "strata.corpus.controller"))
        let list = ReplayingList<Item, Section>()
        controller.coordinate(list)
        controller.waitForDeliveries()
        return (controller, list)
    }
}

/// A fixed instant, so that dates compare exactly after a round trip.
func day(_ n: Int) -> Date { Date(timeIntervalSince1970: 1_767_225_600 + Double(n) * 86_400) }
