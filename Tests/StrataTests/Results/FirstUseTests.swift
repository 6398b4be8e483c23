import Dispatch
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

/// What a new user meets first, from the docs: comparing updates, finding a section by its
/// typed key, the identity of group rows, and `waitForDeliveries()` where it cannot work.
@Suite("First use")
struct FirstUseTests {
    @Test("updates compare with ==")
    func updatesAreEquatable() throws {
        let harness = try Harness(Note.Fetches.all) { db in try db.note("a") }
        try harness.write { db in try db.note("b") }
        try harness.write { db in try db.note("c") }
        let updates = harness.recorder.updates
        #expect(updates.count == 3)
        #expect(updates[0] == updates[0])
        #expect(updates[1] != updates[2])
        #expect(updates[1] == ResultsUpdate.batch(try #require(updates[1].batch), updates[1].snapshot))
        #expect(updates[0] != ResultsUpdate.batch(ChangeBatch(from: updates[0].snapshot, to: updates[0].snapshot), updates[0].snapshot))
    }

    @Test("a keyed section is found by its typed key: an enumeration, a string")
    func sectionByTypedKey() throws {
        let harness = try Harness(Note.Fetches.byPriority) { db in
            try db.note("a", priority: .high)
            try db.note("b", priority: .low)
            try db.note("c", priority: .normal)
        }
        let snapshot = harness.controller.snapshot
        #expect(snapshot.sections.count == 3)
        for priority in Priority.allCases {
            let index = try #require(snapshot.index(ofSection: SectionID(key: priority)), "\(priority)")
            #expect(snapshot.sections[index].value.object == priority)
            #expect(snapshot.sections[index].id.key(as: Priority.self) == priority)
        }
        #expect(SectionID.single.key(as: Priority.self) == nil)
        let letters = try Harness(
            store: harness.store,
            ResultsRequest<Note, String>(sortedBy: [Note.title.ascending], sections: .firstLetter(of: Note.title)))
        let index = try #require(letters.controller.snapshot.index(ofSection: SectionID(key: "B")))
        #expect(letters.controller.snapshot.sections[index].items.map(\.title) == ["b"])
    }

    @Test("a section's value prints as its key or object, and a keyed section's key is read as key")
    func sectionValueReadsAndPrints() throws {
        let harness = try Harness(Note.Fetches.byPriority) { db in
            try db.note("a", priority: .high)
            try db.note("b", priority: .low)
        }
        let sections = harness.controller.snapshot.sections
        #expect(sections.map(\.value.key) == [.low, .high])
        #expect(sections.map { "\($0.value)" } == ["low", "high"])
        #expect(sections.map(\.value.key) == sections.map(\.value.object))
        #expect("\(SectionValue<Priority>.orphans)" == "orphans")
        #expect(SectionValue<Priority>.orphans.key == nil)
    }

    @Test("a group row's identity is public and stays the same while its section does")
    func groupRowIdentity() throws {
        let harness = try Harness(Note.Fetches.all) { db in
            try db.note("a")
            try db.note("x1")
        }
        harness.controller.options = ResultsOptions(filter: { !$0.title.hasPrefix("x") }, groupFilteredItems: true)
        harness.controller.waitForDeliveries()
        let section = try #require(harness.controller.snapshot.sections.first)
        let ids = section.rows.map { $0.id(in: section.id) }
        #expect(ids == [.item(Note.ID(rawValue: 1)), .group(.single)])
        try harness.write { db in try db.note("x2") }
        let after = try #require(harness.controller.snapshot.sections.first)
        #expect(after.rows.last?.id(in: after.id) == .group(.single))
    }

    // MARK: - waitForDeliveries where it cannot return

    static let waitCaseKey = "STRATA_WAIT_CHILD_CASE"

    /// Runs `executable` with `arguments` (and `environment` added); returns how it ended and
    /// everything it printed.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (reason: Process.TerminationReason, status: Int32, output: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let exit = process.waitForExit()
        return (exit.reason, exit.status, String(decoding: data, as: UTF8.self))
    }

    /// The probe, a command-line tool built beside this test bundle.
    static var probe: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("StrataMainThreadProbe").path
    }

    @Test("waitForDeliveries() on the main thread of a command-line tool with main-queue deliveries: stops with a message naming cause and remedy")
    func waitOnTheMainThread() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.probe), "build the probe first: swift build --build-tests")
        let run = try Self.run(Self.probe, [])
        #expect(run.reason == .uncaughtSignal, "\(run.output.suffix(2_000))")
        #expect(run.output.contains("ResultsController.waitForDeliveries() was called on the main thread"), "\(run.output.suffix(2_000))")
        #expect(run.output.contains("deliveryQueue of its own"))
        #expect(!run.output.contains("returned"))
        // The remedy the message gives works.
        let remedy = try Self.run(Self.probe, ["--own-queue"])
        #expect(remedy.reason == .exit && remedy.status == 0, "\(remedy.output.suffix(2_000))")
        #expect(remedy.output.contains("delivered [\"a\"]"), "\(remedy.output.suffix(2_000))")
    }

    @Test("a main thread blocked on a semaphore while deliveries wait for the main queue: said once, on standard error, with the remedy")
    func mainThreadBlockedOnASemaphore() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.probe), "build the probe first: swift build --build-tests")
        let run = try Self.run(Self.probe, ["--semaphore", "4"], environment: ["STRATA_MAIN_QUEUE_WAIT_WARNING": "1"])
        #expect(run.reason == .exit && run.status == 0, "\(run.output.suffix(2_000))")
        #expect(run.output.contains("timed out"), "\(run.output.suffix(2_000))")
        let warning = "Strata: a ResultsController delivery has waited 1 s for the main queue"
        #expect(run.output.components(separatedBy: warning).count == 2, "said once: \(run.output.suffix(2_000))")
        #expect(run.output.contains("blocked (waiting on a semaphore"))
        #expect(run.output.contains("deliveryQueue: DispatchQueue(label: \"results\")"))
        // Turned off, nothing is said.
        let quiet = try Self.run(Self.probe, ["--semaphore", "3"], environment: ["STRATA_MAIN_QUEUE_WAIT_WARNING": "0"])
        #expect(quiet.output == "timed out\n", "\(quiet.output.suffix(2_000))")
    }

    @Test("a delivery that waits less than the warning's wait: nothing is said; one that waits longer: said once")
    func shortWaitsSayNothing() async throws {
        let said = LockedValue<[String]>([])
        let watch = MainQueueDeliveryWatch(seconds: 1) { message in said.withLock { $0.append(message) } }
        for _ in 0..<3 {
            let ticket = try #require(watch.scheduled(on: .main))
            watch.delivered(ticket)
        }
        #expect(watch.scheduled(on: DispatchQueue(label: "results")) == nil, "other queues are not watched")
        try await Task.sleep(for: .seconds(2))
        #expect(said.withLock { $0 }.isEmpty)
        // Deliveries that never run: said once, however many wait.
        _ = watch.scheduled(on: .main)
        _ = watch.scheduled(on: .main)
        for _ in 0..<100 where said.withLock({ $0 }).isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        _ = watch.scheduled(on: .main)
        try await Task.sleep(for: .seconds(2))
        #expect(said.withLock { $0 }.count == 1)
        #expect(said.withLock { $0 }.first?.hasPrefix("Strata: a ResultsController delivery has waited 1 s for the main queue") == true)
    }

    @Test("waitForDeliveries() inside a delivery (on the controller's delivery queue): stops with a message naming cause and remedy")
    func waitOnTheDeliveryQueue() throws {
        let run = try Self.run(
            CommandLine.arguments[0], CrashTests.childArguments().dropLast(2) + ["--filter", "waitChild"],
            environment: [Self.waitCaseKey: "delivery"])
        #expect(run.reason == .uncaughtSignal, "\(run.output.suffix(2_000))")
        #expect(run.output.contains("ResultsController.waitForDeliveries() was called on this controller's delivery queue"),
            "\(run.output.suffix(2_000))")
        #expect(run.output.contains("deliveryQueue of its own"))
        #expect(!run.output.contains("returned"))
    }

    /// The child: only runs when spawned above.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[waitCaseKey] != nil))
    func waitChild() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let queue = DispatchQueue(label: "strata.tests.wait")
        let controller = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: queue)
        queue.sync { controller.waitForDeliveries() }
        print("returned")
    }
}
