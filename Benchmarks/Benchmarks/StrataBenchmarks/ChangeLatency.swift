import Benchmark
import Dispatch
import Foundation
import GRDB
import Strata

/// One-row changes, each timed from the commit to the delivery of its change batch.
enum Change: String, CaseIterable {
    /// A note's title changes, so that it moves inside its section.
    case update = "update (move in section)"
    /// A note is inserted into a random notebook.
    case insert
    /// The note inserted just before is deleted.
    case delete

    /// The metric of its commit → batch latency.
    var metric: BenchmarkMetric {
        switch self {
        case .update: latency("update")
        case .insert: latency("insert")
        case .delete: latency("delete")
        }
    }
}

/// Records when a commit happened and when its batch arrived.
///
/// Its commit handler is registered before any controller or baseline, so it runs first
/// among the store's commit handlers: right after SQLite's commit returned.
final class LatencyProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var committedAt: UInt64 = 0
    private var deliveredAt: UInt64 = 0
    /// The last update: a batch, or nil for a reload (see ``reloadDidArrive()``).
    private var batch: ChangeBatch?
    private let arrived = DispatchSemaphore(value: 0)
    private var observation: CommitObservation?

    init(store: Store) {
        observation = store.observeCommits { [weak self] _ in self?.commitDidHappen() }
    }

    private func commitDidHappen() {
        let time = now()
        lock.withLock { committedAt = time }
    }

    /// Called on the delivery queue with each batch.
    func batchDidArrive(_ batch: ChangeBatch) {
        let time = now()
        lock.withLock {
            deliveredAt = time
            self.batch = batch
        }
        arrived.signal()
    }

    /// Called on the delivery queue with a reload that answered a commit (a batched
    /// controller's refetch is delivered as a reload: values are not loaded to compare).
    func reloadDidArrive() {
        let time = now()
        lock.withLock {
            deliveredAt = time
            batch = nil
        }
        arrived.signal()
    }

    /// Waits up to `seconds` for a batch; false when none came.
    func waitForAnyBatch(seconds: Double) -> Bool {
        arrived.wait(timeout: .now() + seconds) == .success
    }

    /// Waits for the batch of the last commit: its commit→delivery latency, and the batch.
    func waitForBatch() -> (nanoseconds: UInt64, batch: ChangeBatch) {
        let (nanoseconds, batch) = waitForUpdate()
        guard let batch else { fatalError("a reload was delivered where a batch was expected") }
        return (nanoseconds, batch)
    }

    /// Waits for the update of the last commit: its commit→delivery latency, and the batch
    /// (nil: a reload).
    func waitForUpdate() -> (nanoseconds: UInt64, batch: ChangeBatch?) {
        guard arrived.wait(timeout: .now() + 120) == .success else { fatalError("no update delivered within 120 s") }
        return lock.withLock { (deliveredAt - committedAt, batch) }
    }
}

/// Hands the controller's batches to the probe.
final class BatchForwarder: Coordinatable, @unchecked Sendable {
    typealias Item = Note
    typealias Section = Notebook
    let probe: LatencyProbe
    init(probe: LatencyProbe) { self.probe = probe }
    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) { probe.batchDidArrive(batch) }
    func reload(_ snapshot: ResultsSnapshot<Note, Notebook>) {}
}

/// Makes one-row changes to the store and times each until its batch arrives.
struct ChangeDriver {
    let database: NotesDatabase
    let probe: LatencyProbe

    /// One update, one insert and one delete, each timed from its commit to its batch. Every
    /// batch is checked to be the one-row change.
    func oneRound() throws -> [(Change, UInt64)] {
        let store = database.store
        var latencies: [(Change, UInt64)] = []

        let id = database.randomNoteID(), title = database.newTitle()
        try store.write { db in
            try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: [title, id])
        }
        latencies.append((.update, try check(probe.waitForBatch(), .update)))

        let notebook = database.randomNotebookID(), newTitle = database.newTitle()
        let inserted = try store.write { db -> Int64 in
            try db.execute(
                sql: "INSERT INTO Note (title, updatedAt, notebookID) VALUES (?, ?, ?)",
                arguments: [newTitle, Date(timeIntervalSince1970: 1_780_000_000), notebook])
            return db.lastInsertedRowID
        }
        latencies.append((.insert, try check(probe.waitForBatch(), .insert)))

        try store.write { db in try db.execute(sql: "DELETE FROM Note WHERE id = ?", arguments: [inserted]) }
        latencies.append((.delete, try check(probe.waitForBatch(), .delete)))
        return latencies
    }

    private func check(_ delivery: (nanoseconds: UInt64, batch: ChangeBatch), _ change: Change) throws -> UInt64 {
        let batch = delivery.batch
        let sectionsUntouched = batch.sectionDeletes.isEmpty && batch.sectionInserts.isEmpty
            && batch.sectionMoves.isEmpty && batch.sectionUpdates.isEmpty
        let expected: Bool
        switch change {
        case .update:
            // The note moves; or, when it swaps places with a neighbour, the neighbour may be
            // the one reported as moved and the note as updated in place; or, rarely, its new
            // random title falls in the same place and it is only updated.
            let updates = batch.itemUpdates.count + batch.movedAndUpdatedItems.count
            expected = batch.itemMoves.count <= 1 && updates <= 1 && batch.itemMoves.count + updates >= 1
                && batch.itemInserts.isEmpty && batch.itemDeletes.isEmpty
        case .insert:
            expected = batch.itemInserts.count == 1 && batch.itemMoves.isEmpty && batch.itemDeletes.isEmpty
        case .delete:
            expected = batch.itemDeletes.count == 1 && batch.itemMoves.isEmpty && batch.itemInserts.isEmpty
        }
        guard expected && sectionsUntouched else { throw BenchmarkError.unexpectedBatch("\(change): \(batch)") }
        return delivery.nanoseconds
    }
}

enum BenchmarkError: Error, CustomStringConvertible {
    case unexpectedBatch(String)
    case resultsDiffer(String)
    case missingWriter(String)

    var description: String {
        switch self {
        case .unexpectedBatch(let text): "unexpected batch for a one-row change: \(text)"
        case .resultsDiffer(let text): "results differ from a plain refetch: \(text)"
        case .missingWriter(let text): "StrataHistoryWriter not found next to this executable: \(text)"
        }
    }
}
