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

/// A child process (this test binary, running ``crashChildWriter()`` only) writes in a loop
/// and reports each commit on stdout; the parent kills it with SIGKILL mid-loop, reopens the
/// store and checks that the file is sound and holds every reported transaction, whole.
@Suite("Store crash safety")
struct CrashTests {
    static let childEnvironmentKey = "STRATA_CRASH_CHILD_STORE"
    static let durabilityEnvironmentKey = "STRATA_CRASH_CHILD_DURABILITY"

    /// With either durability: `.normal` (the default) syncs only at checkpoints, which a
    /// power loss can tell from `.full`, but a killed process cannot.
    @Test(
        "a store killed with SIGKILL while writing reopens intact with every commit",
        arguments: [Store.Durability.full, .normal])
    func killWhileWriting(_ durability: Store.Durability) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("crash.sqlite")
        // Create the store first so the child only writes.
        try Store(schema: NotesModel.schema, path: path).close()

        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = Self.childArguments()
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childEnvironmentKey] = path
        environment[Self.durabilityEnvironmentKey] = durability == .normal ? "normal" : "full"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()

        // Read progress until enough commits are reported (or time runs out), then kill.
        var output = Data()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            output.append(chunk)
            if Self.lastCommitted(output) ?? -1 >= 300 { break }
        }
        kill(process.processIdentifier, SIGKILL)
        let exit = process.exit(within: .seconds(60))
        output.append(pipe.fileHandleForReading.readDataToEndOfFile())
        #expect(exit?.reason == .uncaughtSignal)
        let last = try #require(Self.lastCommitted(output), "the child reported no commit")
        // The child's writer ran with the durability asked for.
        #expect(String(decoding: output, as: UTF8.self).hasPrefix("synchronous \(durability == .normal ? 1 : 2)\n"))
        #expect(last >= 50)

        let store = try Store(schema: NotesModel.schema, path: path)
        let integrity = try store.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == ["ok"])
        let foreignKeys = try store.read { db in try GRDB.Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count }
        #expect(foreignKeys == 0)
        let titles = Set(try store.read { db in try String.fetchAll(db, sql: "SELECT title FROM Note") })
        for index in 0...last { #expect(titles.contains("t\(index)"), "transaction \(index) was reported committed") }
        // Each transaction wrote a note, a tag and their link: all or nothing.
        let counts = try store.read { db in [try db.count("Note"), try db.count("Tag"), try db.count("Note_tags")] }
        #expect(Set(counts).count == 1, "\(counts)")
        #expect(counts[0] >= last + 1)
    }

    /// The child's loop; only runs when spawned by ``killWhileWriting()``.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childEnvironmentKey] != nil))
    func crashChildWriter() throws {
        let path = try #require(ProcessInfo.processInfo.environment[Self.childEnvironmentKey])
        let normal = ProcessInfo.processInfo.environment[Self.durabilityEnvironmentKey] == "normal"
        let store = try Store(schema: NotesModel.schema, path: path, options: Store.Options(durability: normal ? .normal : .full))
        // Told to the parent, which checks it (a failure here would go unseen).
        let synchronous = try store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
        FileHandle.standardOutput.write(Data("synchronous \(synchronous)\n".utf8))
        for index in 0..<1_000_000 {
            try store.write { db in
                let note = try db.insert(Note(title: "t\(index)", updatedAt: Date()))
                let tag = try db.insert(Tag(name: "t\(index)"))
                try db.link(note.id, Note.tags, tag.id)
            }
            FileHandle.standardOutput.write(Data("committed \(index)\n".utf8))
        }
    }

    /// This process's arguments (which locate the tests, e.g. for `swiftpm-testing-helper`)
    /// with the filters replaced by the child's test.
    static func childArguments() -> [String] {
        var arguments: [String] = []
        var iterator = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            if argument == "--filter" || argument == "--skip" {
                _ = iterator.next()
            } else if !argument.hasPrefix("--filter=") && !argument.hasPrefix("--skip=") {
                arguments.append(argument)
            }
        }
        if !arguments.contains("--testing-library") { arguments += ["--testing-library", "swift-testing"] }
        return arguments + ["--filter", "crashChildWriter"]
    }

    static func lastCommitted(_ data: Data) -> Int? {
        let text = String(decoding: data, as: UTF8.self)
        // Only complete lines count.
        guard let end = text.lastIndex(of: "\n") else { return nil }
        return text[..<end].split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("committed ") else { return nil }
            return Int(line.dropFirst("committed ".count))
        }.last
    }
}
