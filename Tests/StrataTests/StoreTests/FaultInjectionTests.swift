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

/// Storage failures: a full disk (SQLite's size limit in process, and a real full file
/// system in a private mount namespace where the machine allows one), a file system that
/// turns read-only mid-session (a faulty VFS in a child process), a corrupted page.
/// Each must surface as a typed ``StorageError`` naming the store, never a trap, and lose
/// nothing that was committed. (A writer killed mid-write is ``CrashTests``.)
@Suite("Store fault injection")
struct FaultInjectionTests {
    static let childEnvironmentKey = "STRATA_DISK_FULL_CHILD_STORE"

    /// Writes notes with a large body until the store refuses one; returns how many were
    /// committed and the error that stopped it.
    static func fillUntilRefused(_ store: Store, limit: Int = 100_000) -> (committed: Int, error: (any Error)?) {
        let body = String(repeating: "x", count: 8_000)
        for index in 0..<limit {
            do {
                try store.write { db in
                    try db.insert(Note(title: "n\(index)", body: body, updatedAt: Date()))
                    try db.insert(Tag(name: "t\(index)"))
                }
            } catch {
                return (index, error)
            }
        }
        return (limit, nil)
    }

    @Test("disk full (SQLite's size limit): a typed error, the transaction rolled back, every commit kept, the store usable")
    func diskFullThroughThePageLimit() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("full.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path)
        let queue = DispatchQueue(label: "full")
        let controller = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: queue)
        let pages = try store.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        try store.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA max_page_count = \(pages + 40)")
        }

        let (committed, error) = Self.fillUntilRefused(store)
        let storageError = try #require(error as? StorageError, "\(String(describing: error))")
        #expect(storageError.kind == .full && storageError.path == path)
        #expect(storageError.description.contains(path) && storageError.description.contains("disk is full"))
        #expect(committed > 5)

        // Nothing of the refused transaction, everything before it, note and tag together.
        let counts = try store.read { db in [try db.count("Note"), try db.count("Tag")] }
        #expect(counts == [committed, committed])
        controller.waitForDeliveries()
        #expect(controller.snapshot.sections.flatMap(\.items) == (try store.fetchAll(Note.Fetches.all)))

        // With room again, the same store goes on; a reopened one has every commit.
        try store.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        try store.insert(Note(title: "after", updatedAt: Date()))
        controller.waitForDeliveries()
        #expect(controller.snapshot.sections.flatMap(\.items).count == committed + 1)
        try store.close()
        let reopened = try Store(schema: NotesModel.schema, path: path)
        #expect(try reopened.read { db in try db.count("Note") } == committed + 1)
        #expect(try reopened.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") } == ["ok"])
    }

    /// Runs the test `name` of this test binary in a child process with `environment` added
    /// (through `launcher`, given the shell-quoted command, when set); returns its output.
    static func runChild(
        _ name: String, environment: [String: String], launcher: ((String) -> [String])? = nil
    ) throws -> String {
        let command = [CommandLine.arguments[0]] + CrashTests.childArguments().dropLast(2) + ["--filter", name]
        let arguments = launcher.map { launch in
            launch(command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " "))
        } ?? command
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        _ = process.waitForExit()
        return output
    }

    /// Whether this machine lets an unprivileged process mount a tmpfs in a private mount
    /// namespace (`unshare -rm`); CI containers may not.
    static let canMountPrivately: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs \"$d\""]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        return process.waitForExit().status == 0
    }()

    @Test(
        "a real full file system: a typed error, every commit kept (tmpfs in a private mount namespace)",
        .enabled(if: canMountPrivately, "needs unshare -rm and tmpfs mounts"))
    func diskFullOnARealFileSystem() throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let output = try Self.runChild(
            "diskFullChild", environment: [Self.childEnvironmentKey: mountPoint + "/full.sqlite"],
            launcher: { test in
                ["/usr/bin/unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs '\(mountPoint)' && exec \(test)"]
            })
        let lines = output.split(separator: "\n")
        let committed = try #require(lines.first { $0.hasPrefix("committed ") }.flatMap { Int($0.dropFirst(10)) }, "\(output)")
        #expect(committed > 5)
        #expect(lines.contains { $0.hasPrefix("error full ") }, "\(output)")
        #expect(lines.contains("verified \(committed) \(committed) ok"), "\(output)")
    }

    /// The child of ``diskFullOnARealFileSystem()``: fills a 1 MiB tmpfs, then checks the
    /// store it left, still inside the namespace (the tmpfs goes with it).
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childEnvironmentKey] != nil))
    func diskFullChild() throws {
        let path = try #require(ProcessInfo.processInfo.environment[Self.childEnvironmentKey])
        let store = try Store(schema: NotesModel.schema, path: path)
        let (committed, error) = Self.fillUntilRefused(store)
        var report = "committed \(committed)\n"
        if let error = error as? StorageError {
            report += "error \(error.kind) \(error)\n"
        } else {
            report += "error other \(String(describing: error))\n"
        }
        let counts = try store.read { db in [try db.count("Note"), try db.count("Tag")] }
        let integrity = try store.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        report += "verified \(counts[0]) \(counts[1]) \(integrity.joined(separator: ","))\n"
        FileHandle.standardOutput.write(Data(report.utf8))
    }

    static let readOnlyChildKey = "STRATA_READ_ONLY_CHILD_STORE"

    @Test("a file system that turns read-only mid-session: a typed error, reads go on, every commit kept")
    func readOnlyMidSession() throws {
        let directory = try TemporaryDirectory()
        let output = try Self.runChild("readOnlyChild", environment: [Self.readOnlyChildKey: directory.path("readonly.sqlite")])
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("committed 40"), "\(output)")
        #expect(lines.contains { $0.hasPrefix("refused io ") || $0.hasPrefix("refused readOnly ") }, "\(output)")
        #expect(lines.contains("read while read-only 40"), "\(output)")
        #expect(lines.contains("controller 40"), "\(output)")
        #expect(lines.contains("after remount 41"), "\(output)")
        #expect(lines.contains("reopened 41 ok"), "\(output)")
    }

    /// The child of ``readOnlyMidSession()``: the faulty VFS is the process's default here.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[readOnlyChildKey] != nil))
    func readOnlyChild() throws {
        let path = try #require(ProcessInfo.processInfo.environment[Self.readOnlyChildKey])
        FaultyFileSystem.install()
        var report = ""
        do {
            let store = try Store(schema: NotesModel.schema, path: path)
            for index in 0..<40 { try store.insert(Note(title: "n\(index)", updatedAt: Date())) }
            report += "committed \(try store.read { db in try db.count("Note") })\n"
            let controller = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: DispatchQueue(label: "ro"))
            FaultyFileSystem.readOnly = true
            do {
                try store.insert(Note(title: "refused", body: String(repeating: "x", count: 10_000), updatedAt: Date()))
                report += "not refused\n"
            } catch let error as StorageError {
                report += "refused \(error.kind) \(error)\n"
            } catch {
                report += "other \(error)\n"
            }
            report += "read while read-only \(try store.read { db in try db.count("Note") })\n"
            controller.waitForDeliveries()
            report += "controller \(controller.snapshot.sections.flatMap(\.items).count)\n"
            FaultyFileSystem.readOnly = false
            try store.insert(Note(title: "after", updatedAt: Date()))
            report += "after remount \(try store.read { db in try db.count("Note") })\n"
            try store.close()
            let reopened = try Store(schema: NotesModel.schema, path: path)
            let integrity = try reopened.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            report += "reopened \(try reopened.read { db in try db.count("Note") }) \(integrity.joined(separator: ","))\n"
        } catch {
            report += "error \(error)\n"
        }
        FileHandle.standardOutput.write(Data(report.utf8))
    }

    @Test("a corrupted page: typed errors from fetches and controllers, never a trap")
    func corruptedPage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("corrupt.sqlite")
        do {
            let store = try Store(schema: NotesModel.schema, path: path)
            try store.write { db in
                for index in 0..<2_000 { try db.insert(Note(title: "note \(index)", body: "body", updatedAt: Date())) }
            }
            try store.close()
        }
        // Overwrite the root page of the Note table's b-tree with garbage.
        let (root, pageSize) = try DatabaseQueue(path: path).read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'Note'")!,
             try Int.fetchOne(db, sql: "PRAGMA page_size")!)
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        try handle.write(contentsOf: Data((0..<pageSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
        try handle.close()
        try? FileManager.default.removeItem(atPath: path + "-wal")

        let store = try Store(schema: NotesModel.schema, path: path)
        let error = try #require(throws: StorageError.self) { try store.read { db in try db.fetchAll(Note.self) } }
        #expect(error.kind == .corrupt && error.path == path)
        #expect(error.description.contains("damaged"))
        #expect(throws: StorageError.self) {
            _ = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: DispatchQueue(label: "c"))
        }
        // Other tables still read.
        #expect(try store.read { db in try db.fetchAll(Notebook.self) }.isEmpty)
    }
}
