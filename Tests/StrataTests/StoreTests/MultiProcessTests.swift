import Foundation
import StrataTestSupport
import GRDB
import Testing
@testable import Strata

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Real processes on one file: this test binary runs again as a writer (``historyChild()``,
/// selected by an environment variable, as ``CrashTests`` does), while controllers in this
/// process receive the writers' commits through the change history. After quiescence every
/// controller equals a fresh fetch, and every batch it delivered was valid and replayed
/// exactly. Waits have generous timeouts; nothing here measures speed.
@Suite("Other processes' commits")
struct MultiProcessTests {
    static let roleKey = "STRATA_HISTORY_CHILD_ROLE"
    static let pathKey = "STRATA_HISTORY_CHILD_PATH"
    static let seedKey = "STRATA_HISTORY_CHILD_SEED"
    static let countKey = "STRATA_HISTORY_CHILD_COUNT"

    /// A running child: its output is collected as it comes.
    final class Child: @unchecked Sendable {
        let process = Process()
        /// How the child ended, once ``finish()`` returned.
        private(set) var exit: (reason: Process.TerminationReason, status: Int32)?
        private let lock = NSLock()
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(role: String, path: String, seed: UInt64 = 0, count: Int = 0) throws {
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = CrashTests.childArguments().dropLast(2) + ["--filter", "historyChild"]
            process.environment = ProcessInfo.processInfo.environment.merging([
                MultiProcessTests.roleKey: role, MultiProcessTests.pathKey: path,
                MultiProcessTests.seedKey: "\(seed)", MultiProcessTests.countKey: "\(count)",
            ]) { $1 }
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    lock.lock()
                    data.append(chunk)
                    lock.unlock()
                }
                done.signal()
            }
        }

        /// The complete lines written so far.
        var lines: [String] {
            lock.lock()
            defer { lock.unlock() }
            let text = String(decoding: data, as: UTF8.self)
            guard let end = text.lastIndex(of: "\n") else { return [] }
            return text[..<end].split(separator: "\n").map(String.init)
        }

        /// How many commits the child reported.
        var committed: Int { lines.filter { $0.hasPrefix("committed ") }.count }

        /// Waits (60 s at most) until `condition` holds.
        func wait(until condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(60)
            while !condition() && Date() < deadline { usleep(5_000) }
        }

        /// Waits for the child to exit; returns its output.
        @discardableResult
        func finish() -> [String] {
            exit = process.waitForExit()
            _ = done.wait(timeout: .now() + 60)
            return lines
        }
    }

    /// Waits (60 s at most) until every controller shows what a fresh fetch shows, without
    /// asking the store to check: the timer delivers.
    /// Waits (60 s at most) until every controller shows what a fresh controller on the same
    /// store shows, without asking the store to check: its timer delivers. Returns how many
    /// rounds it took (each made a fresh controller for the first harness, at least).
    @discardableResult
    static func waitForQuiescence(_ harnesses: [any QuiescenceCheck]) throws -> Int {
        let deadline = Date().addingTimeInterval(60)
        var rounds = 0
        while Date() < deadline {
            rounds += 1
            if try harnesses.allSatisfy({ try $0.isCurrent() }) { return rounds }
            usleep(10_000)
        }
        Issue.record("the controllers did not catch up within 60 s")
        return rounds
    }

    /// The commits delivered to `recorder` and the history rows that name the notes on which
    /// a harness's controller and a fresh fetch disagree.
    static func trail(store: Store, recorder: CommitRecorder, harnesses: [any QuiescenceCheck]) throws -> String {
        try trail(store: store, recorder: recorder, table: "Note", differing: harnesses.flatMap { try $0.differingNotes() })
            + "\n" + trail(store: store, recorder: recorder, table: "Notebook", differing: harnesses.flatMap { try $0.differingSections() })
    }

    static func trail(store: Store, recorder: CommitRecorder, table: String = "Note", differing ids: [Int64]) throws -> String {
        var lines = ["rows of \(table) that differ: \(ids.sorted())"]
        for (index, commit) in recorder.commits.enumerated() {
            let notes = commit[table]
            for id in ids where notes.inserted.contains(id) || notes.updated.contains(id) || notes.deleted.contains(id) {
                let kind = notes.inserted.contains(id) ? "inserted" : notes.deleted.contains(id) ? "deleted" : "updated"
                lines.append("delivery \(index): token \(commit.token.map { "\($0.rawValue)" } ?? "nil") \(commit.origin) \(kind) \(id)")
            }
            if !commit.invalidatedTables.isEmpty { lines.append("delivery \(index): invalidated \(commit.invalidatedTables.sorted())") }
        }
        for transaction in try store.changes(since: .beginning).transactions {
            let notes = transaction.changes[table]
            for id in ids where notes.inserted.contains(id) || notes.updated.contains(id) || notes.deleted.contains(id) {
                let kind = notes.inserted.contains(id) ? "inserted" : notes.deleted.contains(id) ? "deleted" : "updated"
                lines.append("history: token \(transaction.token.rawValue) \(transaction.author ?? "-") \(kind) \(id)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func options(interval: Duration?) -> Store.Options {
        Store.Options(externalCommitInterval: interval)
    }

    // MARK: - Tests

    @Test("random writes in two writer processes and in this one: controllers here follow incrementally and end equal to a fresh fetch")
    func writersAndReader() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path, options: Self.options(interval: .milliseconds(10)))
        let trace = store.traceStatements()
        let byNotebook = try Harness(store: store, Note.Fetches.byNotebook)
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        let byPriority = try Harness(store: store, Note.Fetches.byPriority)
        let pinned = try Harness(store: store, Note.Fetches.pinned)
        // Incremental however many commits one check finds, so that the trace tells.
        byNotebook.controller.engineForTesting.policy = .never
        trace.removeAll()
        let recorder = CommitRecorder(store)

        let writers = try [Child(role: "writer", path: path, seed: 41, count: 40), Child(role: "writer", path: path, seed: 42, count: 40)]
        var random = SeededGenerator(seed: 43)
        var counter = 1_000
        for _ in 0..<20 {
            try ResultsPropertyTests.randomCommit(
                store, writes: Int.random(in: 1...3, using: &random), kinds: 0..<15, titles: ["a", "b", "c"],
                counter: &counter, random: &random)
            usleep(UInt32.random(in: 0...5_000, using: &random))
        }
        for writer in writers {
            let lines = writer.finish()
            #expect(lines.last == "done", "\(lines.suffix(3))")
        }
        // Each round of the wait fetched byNotebook once afresh; the controller itself, never.
        let rounds = try Self.waitForQuiescence([byNotebook, byPriority, pinned])
        #expect(reads.fullFetches(in: trace.statements) == rounds)
        // (After counting the full fetches: the check below makes more.)
        let harnesses: [any QuiescenceCheck] = [byNotebook, byPriority, pinned]
        if try !harnesses.allSatisfy({ try $0.isCurrent() }) {
            // What every commit delivered here said of the notes a controller disagrees on,
            // and what the file's history says of them: for finding a lost change.
            Issue.record(Comment(rawValue: try Self.trail(store: store, recorder: recorder, harnesses: harnesses)))
        }
        try byNotebook.check()
        try byPriority.check()
        try pinned.check()
        let external = recorder.commits.filter { $0.origin == .otherConnections }
        #expect(!external.isEmpty && !external.contains(where: \.missedHistory))
        #expect(external.flatMap(\.authors).allSatisfy { $0 == "writer 41" || $0 == "writer 42" })
        #expect(recorder.commits.compactMap(\.token).max() == (try store.historyToken()))
    }

    @Test("a writer killed with SIGKILL mid-stream: every commit it made reaches the controller, and the file goes on")
    func killedWriter() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path, options: Self.options(interval: .milliseconds(10)))
        let harness = try Harness(store: store, Note.Fetches.byNotebook)
        let writer = try Child(role: "endless", path: path, seed: 51)
        writer.wait { writer.committed >= 40 }
        kill(writer.process.processIdentifier, SIGKILL)
        writer.finish()
        #expect(writer.exit?.reason == .uncaughtSignal)
        #expect(writer.committed >= 40, "\(writer.lines.suffix(3))")
        try Self.waitForQuiescence([harness])
        try harness.check()
        // The last commit the writer reported is in the history this store read.
        let tokens = writer.lines.compactMap { $0.split(separator: " ").last.flatMap { Int64($0) } }
        #expect(try store.changes(since: .beginning).transactions.map(\.token.rawValue).contains(tokens.max() ?? -1))
        // The file takes writes again, from here and from another process.
        try harness.write { db in try db.note("after") }
        let next = try Child(role: "writer", path: path, seed: 52, count: 5)
        #expect(next.finish().last == "done")
        try Self.waitForQuiescence([harness])
        try harness.check()
    }

    @Test("the history pruned while this process is behind: its controller refetches once and says so, then goes on incrementally")
    func prunedWhileBehind() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path, options: Self.options(interval: nil))
        let trace = store.traceStatements()
        let harness = try Harness(store: store, Note.Fetches.byNotebook)
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        trace.removeAll()
        let recorder = CommitRecorder(store)

        #expect(try Child(role: "pruner", path: path, seed: 61, count: 20).finish().last == "done")
        try store.checkForExternalCommits()
        #expect(recorder.commits.map(\.missedHistory) == [true])
        #expect(reads.fullFetches(in: trace.statements) == 1)
        try harness.check()

        // One row changed by another process: re-read alone, no refetch.
        trace.removeAll()
        let lines = try Child(role: "touch", path: path).finish()
        let touched = try #require(lines.first { $0.hasPrefix("touched ") }.flatMap { Int64($0.dropFirst(8)) }, "\(lines)")
        try store.checkForExternalCommits()
        #expect(recorder.commits.map(\.missedHistory) == [true, false])
        #expect(recorder.commits.last?.origin == .otherConnections)
        #expect(reads.fullFetches(in: trace.statements) == 0)
        #expect(reads.rowReads(in: trace.statements) == [[touched]])
        try harness.check()
    }

    @Test("a writer still running the older model while this process migrates the file: its commits reach the new model's controllers")
    func olderModelWriter() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        try Store(schema: NotesModel.schema, path: path).close()
        let writer = try Child(role: "slowWriter", path: path, seed: 71, count: 60)
        writer.wait { writer.committed >= 10 }
        // Migrates (a new optional attribute rebuilds the Note table) while the writer writes.
        let store = try Store(
            schema: ChangeHistoryTests.notesWithSubtitle, path: path, options: Self.options(interval: .milliseconds(10)))
        #expect(try store.read { db in try db.columns(in: "Note").map(\.name) }.contains("subtitle"))
        let harness = try Harness(store: store, Note.Fetches.byNotebook)
        let lines = writer.finish()
        #expect(lines.last == "done", "\(lines.suffix(3))")
        #expect(writer.committed == 60)
        try Self.waitForQuiescence([harness])
        try harness.check()
        // The older writer's transactions after the migration are in the history.
        let history = try store.changes(since: .beginning)
        #expect(history.transactions.contains { $0.author == "strata.migration" })
        #expect(history.transactions.last?.author == "slowWriter 71")
    }

    // MARK: - The child

    /// The child's work; only runs when spawned by a test of this suite.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[roleKey] != nil))
    func historyChild() throws {
        let environment = ProcessInfo.processInfo.environment
        let role = try #require(environment[Self.roleKey])
        let path = try #require(environment[Self.pathKey])
        let seed = UInt64(environment[Self.seedKey] ?? "") ?? 0
        let count = Int(environment[Self.countKey] ?? "") ?? 0
        func report(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        let store = try Store(
            schema: NotesModel.schema, path: path, options: Store.Options(externalCommitInterval: nil, author: "\(role) \(seed)"))
        var random = SeededGenerator(seed: seed)
        var counter = Int(seed) * 10_000
        func commit() throws {
            try ResultsPropertyTests.randomCommit(
                store, writes: Int.random(in: 1...3, using: &random), kinds: 0..<15, titles: ["a", "b", "c", "d"],
                counter: &counter, random: &random)
            report("committed \(try store.historyToken().rawValue)")
        }
        do {
            switch role {
            case "writer":
                for _ in 0..<count {
                    try commit()
                    usleep(UInt32.random(in: 0...3_000, using: &random))
                }
            case "slowWriter":
                for _ in 0..<count {
                    try commit()
                    usleep(15_000)
                }
            case "endless":
                while true { try commit() }
            case "pruner":
                for _ in 0..<count { try commit() }
                try store.pruneHistory(through: try store.historyToken())
            case "touch":
                try store.write { db in
                    let id = try #require(try Int64.fetchOne(db, sql: "SELECT MIN(id) FROM Note"))
                    try db.execute(sql: "UPDATE Note SET title = title || '!' WHERE id = ?", arguments: [id])
                    report("touched \(id)")
                }
            default:
                report("unknown role \(role)")
                return
            }
            try store.close()
            report("done")
        } catch {
            report("failed \(error)")
        }
    }
}

/// A controller whose delivered state can be compared with a fresh fetch.
protocol QuiescenceCheck {
    func isCurrent() throws -> Bool
    /// The ids of the notes on which the controller and a fresh fetch disagree.
    func differingNotes() throws -> [Int64]
    /// The ids of the section objects (notebooks) that one of them shows and the other not.
    func differingSections() throws -> [Int64]
}

extension Harness: QuiescenceCheck {
    func differingNotes() throws -> [Int64] {
        controller.waitForDeliveries()
        let fresh = try ResultsController(
            store: store, request: controller.request, options: controller.options,
            deliveryQueue: DispatchQueue(label: "strata.tests.differing"))
        let shown = controller.snapshot.items, current = fresh.snapshot.items
        var ids = Set(shown.map(\.id.rawValue)).symmetricDifference(current.map(\.id.rawValue))
        for note in shown where current.contains(where: { $0.id == note.id && $0 != note }) { ids.insert(note.id.rawValue) }
        return ids.sorted()
    }

    func differingSections() throws -> [Int64] {
        controller.waitForDeliveries()
        let fresh = try ResultsController(
            store: store, request: controller.request, options: controller.options,
            deliveryQueue: DispatchQueue(label: "strata.tests.differing"))
        func objects(_ snapshot: ResultsSnapshot<Note, Section>) -> Set<Int64> {
            Set(snapshot.sections.compactMap { if case .object(let id) = $0.id { id } else { nil } })
        }
        return objects(controller.snapshot).symmetricDifference(objects(fresh.snapshot)).sorted()
    }

    func isCurrent() throws -> Bool {
        controller.waitForDeliveries()
        let fresh = try ResultsController(
            store: store, request: controller.request, options: controller.options,
            deliveryQueue: DispatchQueue(label: "strata.tests.quiescence"))
        return controller.snapshot == fresh.snapshot
    }
}
