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

/// Every order in which this process can see a row that another process inserts and then
/// deletes, each forced with a real process on the same file: the other process runs this
/// test binary again (``scriptChild()``) and executes one command at a time from its
/// standard input, so the test decides what commits between what. The store here checks for
/// other processes' commits only when told (`externalCommitInterval: nil`), so that both of
/// the other process's commits are found by one check and delivered merged.
///
/// After the check, every controller equals a fresh controller on the store, and a commit
/// observer that keeps a mirror of the notes (re-reading the rows each delivery names, and
/// dropping the rows it reports deleted) equals the table.
@Suite("Exposure orders of other processes' commits")
struct ExposureOrderTests {
    static let scriptKey = "STRATA_SCRIPT_CHILD_PATH"

    /// Another process on the file that runs commands sent to it, one line each, and answers
    /// each with `ok <id>` (the id a command inserted, or 0) or `failed <error>`.
    final class ScriptedProcess: @unchecked Sendable {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var buffer = Data()

        init(path: String) throws {
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = CrashTests.childArguments().dropLast(2) + ["--filter", "scriptChild"]
            process.environment = ProcessInfo.processInfo.environment.merging([ExposureOrderTests.scriptKey: path]) { $1 }
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Runs one command in the other process and returns the id it answered with.
        @discardableResult
        func run(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int64 {
            input.fileHandleForWriting.write(Data((command + "\n").utf8))
            while true {
                if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<end], as: UTF8.self)
                    buffer.removeSubrange(...end)
                    // The test runner may print lines of its own: only answers count.
                    if line.hasPrefix("ok ") { return Int64(line.dropFirst(3)) ?? 0 }
                    if line.hasPrefix("failed ") {
                        Issue.record("\(command): \(line)", sourceLocation: sourceLocation)
                        return 0
                    }
                    continue
                }
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty {
                    Issue.record("the other process ended before answering \(command)", sourceLocation: sourceLocation)
                    return 0
                }
                buffer.append(chunk)
            }
        }

        func quit() {
            try? input.fileHandleForWriting.close()
            _ = process.waitForExit()
            ended = true
        }

        /// Whether the process ended and was reaped: its id is not signalled again (ids are
        /// reused within minutes in a run of the tests).
        private var ended = false

        deinit { if !ended { process.killAndReap() } }
    }

    /// A commit observer's view of the notes: the ids that exist, kept from the deliveries
    /// alone (rows named inserted or updated are re-read by id; deleted ones are dropped).
    final class NoteMirror: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: Set<Int64> = []
        private var observation: CommitObservation?

        init(_ store: Store) throws {
            ids = Set(try store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Note") })
            observation = store.observeCommits(reading: { [weak self] changes, db in
                guard let self else { return }
                let notes = changes[Note.entityName]
                let named = notes.inserted.union(notes.updated).sorted()
                let existing = named.isEmpty ? [] : (try? Int64.fetchAll(
                    db, sql: "SELECT id FROM Note WHERE id IN (\(named.map(String.init).joined(separator: ",")))")) ?? []
                let invalidated = changes.invalidatedTables.contains(Note.entityName)
                let all = invalidated ? (try? Int64.fetchAll(db, sql: "SELECT id FROM Note")) : nil
                self.lock.lock()
                if let all { self.ids = Set(all) }
                self.ids.subtract(notes.deleted)
                self.ids.subtract(named)
                self.ids.formUnion(existing)
                self.lock.unlock()
            })
        }

        var current: Set<Int64> {
            lock.lock()
            defer { lock.unlock() }
            return ids
        }

        func check(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let table = Set(try store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Note") })
            #expect(current == table, "commit observer's notes \(current.sorted()) vs table \(table.sorted())",
                sourceLocation: sourceLocation)
        }
    }

    /// A store here, with its timer off, and the other process on the same file.
    struct Setup {
        let directory: TemporaryDirectory
        let store: Store
        let other: ScriptedProcess

        init(setUp: (Database) throws -> Void = { _ in }) throws {
            directory = try TemporaryDirectory()
            let path = directory.path("shared.sqlite")
            store = try Store(schema: NotesModel.schema, path: path, options: Store.Options(externalCommitInterval: nil))
            try store.write(setUp)
            other = try ScriptedProcess(path: path)
        }
    }

    static let work = Note.notebook.name == "Work"
    static let tagged = Note.tags.any(Tag.name == "t1")

    // MARK: - Orders

    @Test("this process updates a row the other inserted, before their insert is delivered; the other deletes it")
    func localUpdateOfUndeliveredInsert() throws {
        let setup = try Setup { db in try db.note("a") }
        let flat = try Harness(store: setup.store, Note.Fetches.all)
        let window = try Harness(store: setup.store, Note.Fetches.all.limit(2))
        let mirror = try NoteMirror(setup.store)
        let id = try setup.other.run("note 0 0")
        try flat.write { db in try db.execute(sql: "UPDATE Note SET title = 'Local' WHERE id = ?", arguments: [id]) }
        #expect(flat.controller.snapshot.items.map(\.title) == ["Local", "a"])
        try setup.other.run("deleteNote \(id)")
        try setup.store.checkForExternalCommits()
        try flat.check()
        try window.check()
        try mirror.check(setup.store)
        #expect(flat.controller.snapshot.items.map(\.title) == ["a"])
        setup.other.quit()
    }

    @Test("this process renames the notebook of a note the other inserted, before it is delivered; the other deletes it")
    func localRenameExposesThroughRelationship() throws {
        let setup = try Setup { db in try db.notebook("Home") }
        let notebook = try setup.store.read { db in try db.notebook(named: "Home") }
        let work = try Harness(store: setup.store, ResultsRequest<Note, NoSection>(where: Self.work, sortedBy: [Note.title.ascending]))
        let byNotebook = try Harness(store: setup.store, Note.Fetches.byNotebook)
        let mirror = try NoteMirror(setup.store)
        let id = try setup.other.run("note \(notebook.id.rawValue) 0")
        try work.write { db in try db.execute(sql: "UPDATE Notebook SET name = 'Work' WHERE id = ?", arguments: [notebook.id.rawValue]) }
        #expect(work.controller.snapshot.items.map(\.id.rawValue) == [id])
        try setup.other.run("deleteNote \(id)")
        try setup.store.checkForExternalCommits()
        try work.check()
        try byNotebook.check()
        try mirror.check(setup.store)
        #expect(work.controller.snapshot.items.isEmpty)
        setup.other.quit()
    }

    @Test("this process links a tag to a note the other inserted, before it is delivered; the other deletes the note")
    func localLinkExposesThroughJoinTable() throws {
        let setup = try Setup { db in
            var tag = Tag(name: "t1")
            try tag.insert(db)
        }
        let tagged = try Harness(store: setup.store, ResultsRequest<Note, NoSection>(where: Self.tagged, sortedBy: [Note.title.ascending]))
        let mirror = try NoteMirror(setup.store)
        let id = try setup.other.run("note 0 0")
        try tagged.write { db in
            try db.execute(sql: "INSERT INTO Note_tags (noteID, tagID) SELECT ?, id FROM Tag", arguments: [id])
        }
        #expect(tagged.controller.snapshot.items.map(\.id.rawValue) == [id])
        try setup.other.run("deleteNote \(id)")
        try setup.store.checkForExternalCommits()
        try tagged.check()
        try mirror.check(setup.store)
        #expect(tagged.controller.snapshot.items.isEmpty)
        setup.other.quit()
    }

    @Test("the other process commits right after a commit of this process, before its controllers re-read; then deletes what it inserted")
    func otherCommitBetweenLocalCommitAndReads() throws {
        let setup = try Setup { db in try db.notebook("Home") }
        let notebook = try setup.store.read { db in try db.notebook(named: "Home") }
        // Registered before the controllers, so it runs first: on this process's next
        // commit, it has the other process insert a note into the notebook just renamed.
        let inserted = LockedValue<Int64?>(nil)
        let armed = LockedValue(false)
        let other = setup.other
        let hook = setup.store.observeCommits { changes in
            guard changes.origin == .thisStore, armed.withLock({ value in defer { value = false }; return value }) else { return }
            let id = try? other.run("note \(notebook.id.rawValue) 0")
            inserted.withLock { $0 = id }
        }
        let work = try Harness(store: setup.store, ResultsRequest<Note, NoSection>(where: Self.work, sortedBy: [Note.title.ascending]))
        let byNotebook = try Harness(store: setup.store, Note.Fetches.byNotebook)
        let mirror = try NoteMirror(setup.store)
        armed.withLock { $0 = true }
        try work.write { db in try db.execute(sql: "UPDATE Notebook SET name = 'Work' WHERE id = ?", arguments: [notebook.id.rawValue]) }
        let id = try #require(inserted.withLock { $0 })
        // The controller re-read the notebook's notes after the other process's insert.
        #expect(work.controller.snapshot.items.map(\.id.rawValue) == [id])
        try setup.other.run("deleteNote \(id)")
        try setup.store.checkForExternalCommits()
        try work.check()
        try byNotebook.check()
        try mirror.check(setup.store)
        #expect(work.controller.snapshot.items.isEmpty)
        hook.cancel()
        setup.other.quit()
    }

    @Test("a controller opened between the other process's insert and delete, in a process that never writes")
    func controllerOpenedBetween() throws {
        let setup = try Setup()
        let mirror = try NoteMirror(setup.store)
        let notebook = try setup.other.run("notebook Work 0")
        let note = try setup.other.run("note \(notebook) 0")
        // Opened now: their fetches see both rows, which the store has not delivered yet.
        let flat = try Harness(store: setup.store, Note.Fetches.all)
        let window = try Harness(store: setup.store, Note.Fetches.all.limit(1, offset: 0))
        let byNotebook = try Harness(store: setup.store, Note.Fetches.byNotebook)
        #expect(byNotebook.controller.snapshot.sections.count == 1)
        try setup.other.run("deleteNote \(note)")
        try setup.other.run("deleteNotebook \(notebook)")
        try setup.store.checkForExternalCommits()
        try flat.check()
        try window.check()
        try byNotebook.check()
        try mirror.check(setup.store)
        #expect(byNotebook.controller.snapshot.sections.isEmpty)
        #expect(flat.controller.snapshot.items.isEmpty)
        setup.other.quit()
    }

    @Test("a controller paused and resumed between the other process's insert and delete")
    func resumedBetween() throws {
        let setup = try Setup { db in try db.note("a") }
        let flat = try Harness(store: setup.store, Note.Fetches.all)
        let byNotebook = try Harness(store: setup.store, Note.Fetches.byNotebook)
        flat.controller.pause()
        byNotebook.controller.pause()
        let notebook = try setup.other.run("notebook Work 0")
        let note = try setup.other.run("note \(notebook) 0")
        try flat.controller.resume()
        try byNotebook.controller.resume()
        flat.controller.waitForDeliveries()
        #expect(flat.controller.snapshot.items.count == 2)
        try setup.other.run("deleteNotebook \(notebook)")
        try setup.other.run("deleteNote \(note)")
        try setup.store.checkForExternalCommits()
        try flat.check()
        try byNotebook.check()
        #expect(flat.controller.snapshot.items.map(\.title) == ["a"])
        setup.other.quit()
    }

    @Test("the other process deletes a row and the same rowid is taken again here before the check")
    func rowidReusedHere() throws {
        let setup = try Setup()
        let flat = try Harness(store: setup.store, Note.Fetches.all)
        let mirror = try NoteMirror(setup.store)
        let id = try setup.other.run("note 0 0")
        try setup.other.run("deleteNote \(id)")
        // The largest rowid is gone, so SQLite gives the same one to this process's insert.
        try flat.write { db in try db.note("mine") }
        #expect(try setup.store.read { db in try db.note(titled: "mine").id.rawValue } == id)
        try setup.store.checkForExternalCommits()
        try flat.check()
        try mirror.check(setup.store)
        #expect(flat.controller.snapshot.items.map(\.title) == ["mine"])
        setup.other.quit()
    }

    // MARK: - The other process

    /// Runs commands from standard input against the file; only runs when spawned above.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[scriptKey] != nil))
    func scriptChild() throws {
        let path = try #require(ProcessInfo.processInfo.environment[Self.scriptKey])
        let store = try Store(
            schema: NotesModel.schema, path: path, options: Store.Options(externalCommitInterval: nil, author: "script"))
        func answer(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        while let line = readLine() {
            let words = line.split(separator: " ").map(String.init)
            guard let command = words.first else { continue }
            do {
                var id: Int64 = 0
                try store.write { db in
                    switch command {
                    case "note":  // note <notebook id, 0 for none> <pinned 0/1>
                        let notebook = Int64(words[1]).flatMap { $0 == 0 ? nil : Notebook.ID(rawValue: $0) }
                        var note = Note(title: "other", pinned: words[2] == "1", priority: .normal, updatedAt: day, notebookID: notebook)
                        try note.insert(db)
                        id = note.id.rawValue
                    case "notebook":  // notebook <name> <position>
                        var notebook = Notebook(name: words[1], createdAt: day, position: Int(words[2]) ?? 0)
                        try notebook.insert(db)
                        id = notebook.id.rawValue
                    case "deleteNote":
                        try db.execute(sql: "DELETE FROM Note WHERE id = ?", arguments: [Int64(words[1])])
                    case "deleteNotebook":
                        try db.execute(sql: "DELETE FROM Notebook WHERE id = ?", arguments: [Int64(words[1])])
                    default:
                        throw StoreError.unknownEntity(command)
                    }
                }
                answer("ok \(id)")
            } catch {
                answer("failed \(error)")
            }
        }
        try store.close()
    }
}
