import Foundation
import GRDB
import Testing

@testable import Strata

/// The tracker on its own (``CommitTracker``), given real commits of a store and asked what a
/// results engine must do with each, as its doc comment says it decides: a refetch after a
/// failed input (until the next fetch), when the commit cannot be traced row by row, or when
/// its rows cost more than a refetch; nothing for a commit the request does not read; else
/// the rows to re-read and those deleted.
@Suite("Commit tracker, alone")
struct CommitTrackerTests {
    /// The decision `tracker` takes, for results of `count` notes sorted by title, on the
    /// commit that `write` makes; "no commit" when the store delivered none.
    static func decision(
        _ tracker: CommitTracker, results count: Int = 10, batched: Bool = false, store: Store,
        _ write: (Database) throws -> Void
    ) throws -> String {
        let fetcher = ResultsFetcher<Note, NoSection>(plan: try ResultsQueryPlan(request: Note.Fetches.all, schema: store.schema))
        let answer = LockedValue<String?>(nil)
        let observation = store.observeCommits(reading: { changes, db in
            let text: String
            do {
                let decision =
                    batched
                    ? try tracker.decide(changes, db, fetcher: fetcher, results: count, loading: BatchedLoading<Note>.self)
                    : try tracker.decide(changes, db, fetcher: fetcher, results: count, loading: EagerLoading<Note>.self)
                switch decision {
                case .unaffected: text = "unaffected"
                case .refetch: text = "refetch"
                case .items(let tracked): text = "items \(tracked.affected.sorted()) deleted \(tracked.deleted.sorted())"
                }
            } catch {
                text = "error \(error)"
            }
            answer.withLock { $0 = text }
        })
        defer { observation.cancel() }
        try store.write(write)
        return answer.withLock { $0 } ?? "no commit"
    }

    @Test("a commit the request does not read: nothing to do")
    func unaffected() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        #expect(try Self.decision(CommitTracker(), store: store) { db in _ = try db.notebook("Work") } == "unaffected")
    }

    @Test("a traced commit names the rows to re-read and the rows deleted")
    func tracedRows() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let tracker = CommitTracker()
        #expect(try Self.decision(tracker, store: store) { db in _ = try db.note("a") } == "items [1] deleted []")
        #expect(
            try Self.decision(tracker, store: store) { db in
                var a = try db.note(titled: "a")
                a.title = "b"
                try a.update(db)
            } == "items [1] deleted []")
        #expect(try Self.decision(tracker, store: store) { db in _ = try Note.deleteAll(db) } == "items [] deleted [1]")
    }

    @Test("a commit that cannot be traced row by row: a refetch")
    func untraceable() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let answer = LockedValue<String?>(nil)
        let fetcher = ResultsFetcher<Note, NoSection>(plan: try ResultsQueryPlan(request: Note.Fetches.all, schema: store.schema))
        let observation = store.observeCommits(reading: { changes, db in
            let decision = try? CommitTracker().decide(changes, db, fetcher: fetcher, results: 10, loading: EagerLoading<Note>.self)
            if case .refetch = decision { answer.withLock { $0 = "refetch" } } else { answer.withLock { $0 = "other" } }
        })
        defer { observation.cancel() }
        try store.notifyExternalChanges(in: ["Note"])
        #expect(answer.withLock { $0 } == "refetch")
    }

    @Test("after a failed input every commit refetches, whatever it changed, until a fetch")
    func failureAsksForARefetch() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        var tracker = CommitTracker()
        #expect(!tracker.needsRefetch)
        tracker.failed()
        #expect(tracker.needsRefetch)
        #expect(try Self.decision(tracker, store: store) { db in _ = try db.notebook("Work") } == "refetch")
        #expect(try Self.decision(tracker, store: store) { db in _ = try db.note("a") } == "refetch")
        tracker.fetched()
        #expect(!tracker.needsRefetch)
        #expect(try Self.decision(tracker, store: store) { db in _ = try db.notebook("Home") } == "unaffected")
    }

    @Test("the size of a commit decides with the policy's costs, for each loading")
    func sizeFollowsThePolicy() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        var always = CommitTracker()
        always.policy = .always
        #expect(try Self.decision(always, store: store) { db in _ = try db.note("a") } == "refetch")
        #expect(try Self.decision(always, batched: true, store: store) { db in _ = try db.note("b") } == "refetch")
        var never = CommitTracker()
        never.policy = .never
        let many = try Self.decision(never, results: 100, store: store) { db in
            for i in 0..<100 { _ = try db.note("n\(i)") }
        }
        #expect(many.hasPrefix("items ["), "\(many)")
        // The default policy: a commit of every row of large results refetches, one row does not.
        let calibrated = CommitTracker()
        #expect(try Self.decision(calibrated, results: 1_000, store: store) { db in
            var n = try db.note(titled: "n1")
            n.title = "n1'"
            try n.update(db)
        }.hasPrefix("items ["))
        #expect(
            try Self.decision(calibrated, results: 150, store: store) { db in
                try db.execute(sql: "UPDATE Note SET body = 'x'")
            } == "refetch")
    }

    /// A commit whose written rows alone cost more than a refetch is answered by one before it
    /// is traced, and such a decision is never taken where tracing would not refetch: with a
    /// row and a result costing the same, a commit refetches exactly when the rows its
    /// tracing re-reads and deletes outnumber the results, for inserts, updates and deletes
    /// mixed (the tracing's count read from a tracker that never refetches, on a copy).
    @Test("the rows a commit wrote decide before tracing only when tracing could not change the answer")
    func writtenRowsDecideFirst() throws {
        var tracker = CommitTracker()
        tracker.policy = RefetchPolicy(minimum: 0, eager: .init(changedRow: 1, resultRow: 1), batched: .init(changedRow: 1, resultRow: 1))
        let cases = [(5, 4, 0), (5, 5, 1), (6, 5, 0), (0, 0, 10), (0, 0, 11), (10, 0, 0), (11, 0, 0), (3, 8, 0), (0, 11, 0)]
        var refetched = 0
        for (updates, deletes, inserts) in cases {
            for batched in [false, true] {
                func commit(_ tracker: CommitTracker) throws -> String {
                    let store = try Store.inMemory(schema: NotesModel.schema)
                    try store.write { db in for i in 0..<20 { _ = try db.note("n\(i)") } }
                    return try Self.decision(tracker, results: 10, batched: batched, store: store) { db in
                        try db.execute(sql: "UPDATE Note SET body = 'x' WHERE id <= ?", arguments: [updates])
                        try db.execute(sql: "DELETE FROM Note WHERE id > 20 - ?", arguments: [deletes])
                        for i in 0..<inserts { _ = try db.note("new\(i)") }
                    }
                }
                var never = CommitTracker()
                never.policy = .never
                let traced = try commit(never)
                let rows = traced.split(whereSeparator: { !$0.isNumber }).count
                let expected = rows > 10 ? "refetch" : "items"
                if rows > 10 { refetched += 1 }
                let decision = try commit(tracker)
                #expect(
                    decision.hasPrefix(expected),
                    "\(updates) updated, \(deletes) deleted, \(inserts) inserted (batched: \(batched)), traced \(traced): \(decision)")
            }
        }
        #expect(refetched >= 8, "cases on both sides of the break-even")
    }
}
