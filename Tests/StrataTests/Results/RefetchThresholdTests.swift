import Foundation
import GRDB
import Testing
@testable import Strata

/// When a commit is answered by re-reading its rows, and when by a refetch (Decisions.md,
/// "Incremental or refetch: whichever costs less, as measured"), through a controller: above
/// each loading's calibrated break-even share of the results (``RefetchPolicy/Costs``), and
/// above 64 items either way. The decision alone is tested in `RefetchPolicyTests`.
@Suite("Refetch threshold")
struct RefetchThresholdTests {
    private static let count = 1_000

    /// Retitles the first `share` of the notes (by id) in one commit.
    private func retitle(_ store: Store, share: Double, round: Int) throws {
        let ids = try store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Note ORDER BY id") }
        try store.write { db in
            for id in ids.prefix(Int(Double(ids.count) * share)) {
                try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: ["r\(round) \(id)", id])
            }
        }
    }

    private func makeStore(_ directory: TemporaryDirectory) throws -> Store {
        let store = try Store(schema: NotesModel.schema, path: directory.path("notes.sqlite"))
        try store.write { db in
            for index in 0..<Self.count { _ = try db.note(String(format: "n%04d", (index * 7919) % Self.count)) }
        }
        return store
    }

    @Test("an eager controller re-reads a commit under its break-even share, and refetches one over it")
    func eager() throws {
        let breakEven = RefetchPolicy.eagerCosts.breakEven
        try #require(breakEven > 0.15 && breakEven < 0.75, "the shares below assume a break-even between 15 % and 75 %")
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory)
        let trace = store.traceStatements()
        let h = try Harness(store: store, Note.Fetches.all)
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        trace.removeAll()
        try retitle(store, share: breakEven - 0.08, round: 1)
        h.controller.waitForDeliveries()
        #expect(reads.fullFetches(in: trace.statements) == 0, "under the break-even: re-read, not refetched")
        try retitle(store, share: breakEven + 0.08, round: 2)
        h.controller.waitForDeliveries()
        #expect(reads.fullFetches(in: trace.statements) == 1, "over the break-even: refetched")
        try h.check()
    }

    @Test("a batched controller refetches (a reload) a commit over its minimum and its break-even share")
    func batched() throws {
        // 40 rows are under the minimum (64), 120 over it and over the break-even (under 1 %).
        try #require(RefetchPolicy.batchedCosts.breakEven < 0.3)
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory)
        let recorder = DeliveryRecorder<Note, NoSection>()
        let controller = try ResultsController(
            store: store, request: Note.Fetches.all, loading: .batched(pageSize: 16),
            deliveryQueue: DispatchQueue(label: "strata.tests.threshold"))
        controller.coordinate(recorder)
        controller.waitForDeliveries()
        #expect(recorder.updates.count == 1)
        try retitle(store, share: 0.04, round: 1)
        controller.waitForDeliveries()
        guard case .batch = recorder.updates.last else {
            Issue.record("40 rows: expected a batch, got \(String(describing: recorder.updates.last))")
            return
        }
        try retitle(store, share: 0.12, round: 2)
        controller.waitForDeliveries()
        guard case .reload = recorder.updates.last else {
            Issue.record("120 rows: expected a reload, got a batch")
            return
        }
        let fresh = try ResultsController(store: store, request: Note.Fetches.all)
        #expect(controller.snapshot.items.map(\.title) == fresh.snapshot.items.map(\.title))
    }
}
