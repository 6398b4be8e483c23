import Foundation
import GRDB
import Testing
@testable import Strata

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rounds of random work on one file by several processes at once: writer processes (one of
/// them killed with SIGKILL mid-stream), random commits here, controllers opened, paused and
/// resumed here at random moments, and a thread keeping a core busy beside. After each
/// round, once every process is done and the store's timer has delivered, every controller
/// equals a fresh fetch, every batch it delivered replayed exactly, and a commit observer's
/// mirror of the notes equals the table.
///
/// `STRATA_SOAK_ROUNDS` sets the number of rounds (2 by default); `STRATA_SOAK_SEED` the
/// first round's seed (printed on failure).
@Suite("Other processes' commits, soaked")
struct ExternalCommitSoakTests {
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["STRATA_SOAK_ROUNDS"] ?? "") ?? 2 }
    static var firstSeed: UInt64 {
        UInt64(ProcessInfo.processInfo.environment["STRATA_SOAK_SEED"] ?? "") ?? UInt64.random(in: 1...1_000_000)
    }

    @Test("random writers, local writes, controllers opened and resumed at random, a killed writer, a busy core: every view converges")
    func soak() throws {
        let first = Self.firstSeed
        for round in 0..<Self.rounds {
            let seed = first + UInt64(round)
            let issues = try Self.round(seed: seed)
            if issues > 0 {
                Issue.record("round \(round) of seed \(seed) ended diverged (STRATA_SOAK_SEED=\(seed) STRATA_SOAK_ROUNDS=1 repeats it)")
                return
            }
        }
        print("external commit soak: \(Self.rounds) rounds from seed \(first) converged")
    }

    /// Protocol-erased controller checks.
    private struct Views {
        var checks: [any QuiescenceCheck] = []
        var verify: [() throws -> Void] = []
        var pausers: [(pause: () -> Void, resume: () throws -> Void)] = []

        mutating func add<Section>(_ harness: Harness<Section>) {
            checks.append(harness)
            verify.append { try harness.check() }
            let controller = harness.controller
            pausers.append((controller.pause, controller.resume))
        }
    }

    /// One round; returns the number of issues it recorded.
    static func round(seed: UInt64) throws -> Int {
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path, options: Store.Options(externalCommitInterval: .milliseconds(5)))
        try store.write { db in
            try db.notebook("Work")
            var tag = Tag(name: "t1")
            try tag.insert(db)
        }
        let mirror = try ExposureOrderTests.NoteMirror(store)
        var views = Views()
        func open(_ kind: Int) throws {
            switch kind % 6 {
            case 0: views.add(try Harness(store: store, Note.Fetches.byNotebook))
            case 1: views.add(try Harness(store: store, Note.Fetches.byPriority))
            case 2: views.add(try Harness(store: store, Note.Fetches.all.limit(3, offset: 1)))
            case 3: views.add(try Harness(store: store, ResultsRequest<Note, NoSection>(
                where: ExposureOrderTests.work, sortedBy: [Note.title.ascending])))
            case 4: views.add(try Harness(store: store, ResultsRequest<Note, NoSection>(
                where: ExposureOrderTests.tagged, sortedBy: [Note.title.ascending])))
            default: views.add(try Harness(store: store, Note.Fetches.pinned))
            }
        }
        try open(0)
        try open(3)

        // A busy core beside the processes, for the round's length.
        let busy = LockedValue(true)
        Thread.detachNewThread {
            var x = 0
            while busy.withLock({ $0 }) { for i in 0..<10_000 { x &+= i } }
            _ = x
        }
        defer { busy.withLock { $0 = false } }

        let writers = try (0..<2).map { index in
            try MultiProcessTests.Child(role: "writer", path: path, seed: seed &* 10 &+ UInt64(index), count: 25)
        }
        let doomed = try MultiProcessTests.Child(role: "endless", path: path, seed: seed &* 10 &+ 7)
        var counter = 100_000
        var killed = false
        for step in 0..<30 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                try ResultsPropertyTests.randomCommit(
                    store, writes: Int.random(in: 1...3, using: &random), kinds: 0..<15, titles: ["a", "b", "c"],
                    counter: &counter, random: &random)
            case 5, 6:
                try open(Int.random(in: 0..<6, using: &random))
            case 7:
                try store.write { db in
                    // Link or unlink the tag, so that the tagged view's join table changes.
                    if let note = try Int64.fetchOne(db, sql: "SELECT id FROM Note ORDER BY random() LIMIT 1") {
                        try db.execute(sql: "DELETE FROM Note_tags WHERE noteID = ?", arguments: [note])
                        if Bool.random(using: &random) {
                            try db.execute(sql: "INSERT INTO Note_tags (noteID, tagID) SELECT ?, id FROM Tag", arguments: [note])
                        }
                    }
                }
            default:
                let pauser = views.pausers.randomElement(using: &random)!
                pauser.pause()
                usleep(UInt32.random(in: 0...4_000, using: &random))
                try pauser.resume()
            }
            usleep(UInt32.random(in: 0...3_000, using: &random))
            if step == 15 {
                kill(doomed.process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        if !killed { kill(doomed.process.processIdentifier, SIGKILL) }
        doomed.finish()
        for writer in writers {
            let lines = writer.finish()
            #expect(lines.last == "done", "seed \(seed): \(lines.suffix(3))")
        }
        var issues = 0
        try MultiProcessTests.waitForQuiescence(views.checks)
        for check in views.checks where try !check.isCurrent() {
            issues += 1
            Issue.record("seed \(seed): a controller differs from a fresh fetch on notes \(try check.differingNotes()) and notebooks \(try check.differingSections())")
        }
        for verify in views.verify { try verify() }
        let table = Set(try store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Note") })
        if mirror.current != table {
            issues += 1
            Issue.record("seed \(seed): the commit observer's notes differ from the table on \(mirror.current.symmetricDifference(table).sorted())")
        }
        try store.close()
        return issues
    }
}
