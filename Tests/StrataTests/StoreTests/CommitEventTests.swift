import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("Store committed-change events")
struct CommitEventTests {
    private func makeStore() throws -> (Store, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        return (try Store(schema: NotesModel.schema, path: directory.path("notes.sqlite")), directory)
    }

    @Test("inserts, updates with their columns, deletes; net over the transaction")
    func netChanges() throws {
        let (store, directory) = try makeStore()
        _ = directory
        let recorder = CommitRecorder(store)
        let notes = try store.write { db in
            try (0..<4).map { try db.insert(Note(title: "n\($0)", updatedAt: Date(timeIntervalSince1970: 0))) }
        }
        #expect(recorder.commits.count == 1)
        #expect(recorder.commits[0]["Note"].inserted == Set(notes.map(\.id.rawValue)))

        recorder.reset()
        try store.write { db in
            try db.execute(sql: "UPDATE Note SET title = 'x' WHERE id = ?", arguments: [notes[0].id])
            try db.execute(sql: "UPDATE Note SET body = 'b' WHERE id = ?", arguments: [notes[1].id])
            try db.execute(sql: "DELETE FROM Note WHERE id = ?", arguments: [notes[1].id])  // updated then deleted
            let fresh = try db.insert(Note(title: "fresh", updatedAt: Date()))
            try db.execute(sql: "UPDATE Note SET title = 'y' WHERE id = ?", arguments: [fresh.id])  // inserted then updated
            let gone = try db.insert(Note(title: "gone", updatedAt: Date()))
            try db.delete(gone)  // inserted then deleted: nothing
        }
        let commit = try #require(recorder.commits.first)
        #expect(recorder.commits.count == 1)
        #expect(commit["Note"].updated == [notes[0].id.rawValue])
        #expect(commit["Note"].deleted == [notes[1].id.rawValue])
        #expect(commit["Note"].inserted == [5])
        #expect(commit["Note"].updatedColumns == ["title", "body"])
        #expect(commit.tables.keys.sorted() == ["Note"])
    }

    @Test("a single-column update reports that column only")
    func updatedColumns() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let note = try store.insert(Note(title: "a", updatedAt: Date()))
        let recorder = CommitRecorder(store)
        try store.write { db in try db.execute(sql: "UPDATE Note SET pinned = 1 WHERE id = ?", arguments: [note.id]) }
        #expect(recorder.commits.first?["Note"].updatedColumns == ["pinned"])
        #expect(recorder.commits.first?["Note"].updated == [note.id.rawValue])
    }

    @Test("a typed update writes and reports only the changed columns; an unchanged value writes nothing")
    func typedUpdateColumns() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        var note = try store.insert(Note(title: "a", updatedAt: Date(timeIntervalSince1970: 0)))
        let recorder = CommitRecorder(store)
        note.title = "b"
        note.pinned = true
        #expect(try store.update(note))
        #expect(recorder.commits.count == 1)
        #expect(recorder.commits.first?["Note"].updatedColumns == ["title", "pinned"])
        #expect(try store.fetchOne(Note.self, id: note.id) == note)

        recorder.reset()
        #expect(try store.update(note) == false)
        #expect(recorder.commits.isEmpty)

        var missing = note
        try store.write { db in try db.delete(note) }
        missing.title = "c"
        #expect(throws: StoreError.notFound(entity: "Note", id: note.id.rawValue)) { try store.update(missing) }
    }

    @Test("a typed update compares with the stored bytes, not with a decoded copy")
    func typedUpdateComparesStoredValues() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let note = try store.insert(Note(title: "a", updatedAt: Date(timeIntervalSince1970: 0)))
        // A date another program wrote in another format decodes to the same Date: the
        // update writes it in Strata's format, because the stored bytes differ.
        try store.write { db in
            try db.execute(sql: "UPDATE Note SET updatedAt = '1970-01-01T00:00:00' WHERE id = ?", arguments: [note.id])
        }
        let decoded = try #require(try store.fetchOne(Note.self, id: note.id))
        #expect(decoded == note)
        #expect(try store.update(decoded))
        let stored = try store.read { db in try String.fetchOne(db, sql: "SELECT updatedAt FROM Note") }
        #expect(stored == "1970-01-01 00:00:00.000")
        #expect(try store.update(decoded) == false)

        // Text with a NUL character is read in full; writing it back is refused rather
        // than stored cut, and a changed value is written.
        try store.write { db in
            try db.execute(sql: "UPDATE Note SET title = CAST(X'610062' AS TEXT) WHERE id = ?", arguments: [note.id])
        }
        var withNUL = try #require(try store.fetchOne(Note.self, id: note.id))
        #expect(withNUL.title == "a\u{0}b")
        #expect(throws: InvalidValueError(entity: "Note", attribute: "title", reason: .nulCharacter)) {
            try store.update(withNUL)
        }
        withNUL.title = "a"
        #expect(try store.update(withNUL))
        let length = try store.read { db in try Int.fetchOne(db, sql: "SELECT length(CAST(title AS BLOB)) FROM Note") }
        #expect(length == 1)
    }

    @Test("rollbacks and rolled back savepoints deliver nothing")
    func rollbacks() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let recorder = CommitRecorder(store)
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try store.write { db in
                try db.insert(Note(title: "a", updatedAt: Date()))
                throw Failure()
            }
        }
        #expect(recorder.commits.isEmpty)
        try store.write { db in
            try db.insert(Tag(name: "kept"))
            try db.inSavepoint {
                try db.insert(Tag(name: "dropped"))
                return .rollback
            }
        }
        #expect(recorder.commits.count == 1)
        #expect(recorder.commits.first?["Tag"].inserted == [1])
        let tags = try store.read { db in try db.fetchAll(Tag.self).map(\.name) }
        #expect(tags == ["kept"])
    }

    @Test("link and unlink report join-table rows; deleting a tag reports its links")
    func joinTableChanges() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let (note, tag) = try store.write { db in
            (try db.insert(Note(title: "a", updatedAt: Date())), try db.insert(Tag(name: "t")))
        }
        let recorder = CommitRecorder(store)
        try store.write { db in try db.link(note.id, Note.tags, tag.id) }
        try store.write { db in try db.link(note.id, Note.tags, tag.id) }  // already linked: no change
        try store.write { db in try db.delete(tag) }
        #expect(recorder.commits.count == 2)
        #expect(recorder.commits[0]["Note_tags"].inserted.count == 1)
        #expect(recorder.commits[1]["Tag"].deleted == [tag.id.rawValue])
        #expect(recorder.commits[1]["Note_tags"].deleted == recorder.commits[0]["Note_tags"].inserted)
        // Which objects each link joined, for inserted and deleted links.
        let link = ["noteID": note.id.rawValue, "tagID": tag.id.rawValue]
        #expect(Array(recorder.commits[0]["Note_tags"].joinRows.values) == [link])
        #expect(Array(recorder.commits[1]["Note_tags"].joinRows.values) == [link])
        #expect(recorder.commits[1]["Note_tags"].joinRows.keys.sorted() == recorder.commits[1]["Note_tags"].deleted.sorted())
    }

    @Test("join rows of raw and rolled back writes, through GRDB directly")
    func joinRowsThroughGRDB() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.write { db in
            try db.execute(sql: "INSERT INTO Note (id, title, updatedAt) VALUES (1, 'a', '2000-01-01'), (2, 'b', '2000-01-01')")
            try db.execute(sql: "INSERT INTO Tag (id, name) VALUES (1, 't')")
        }
        let recorder = CommitRecorder(store)
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try store.writer.write { db in
                try db.execute(sql: "INSERT INTO Note_tags (noteID, tagID) VALUES (1, 1)")
                throw Failure()
            }
        }
        try store.writer.write { db in
            try db.execute(sql: "INSERT INTO Note_tags (noteID, tagID) VALUES (2, 1)")
        }
        try store.write { db in
            try db.execute(sql: "INSERT INTO Note_tags (noteID, tagID) VALUES (1, 1)")
            try db.execute(sql: "DELETE FROM Note WHERE id = 2")
        }
        #expect(recorder.commits.count == 2)
        #expect(Array(recorder.commits[0]["Note_tags"].joinRows.values) == [["noteID": 2, "tagID": 1]])
        let second = recorder.commits[1]["Note_tags"]
        #expect(Set(second.joinRows.values) == [["noteID": 1, "tagID": 1], ["noteID": 2, "tagID": 1]])
        #expect(second.inserted.count == 1 && second.deleted.count == 1)
    }

    @Test("the reading handler sees exactly the committed state")
    func readingHandler() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("x.sqlite"))
        let counts = LockedValue<[Int]>([])
        let observation = store.observeCommits(reading: { _, db in
            let count: Int
            do {
                count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Note") ?? -1
            } catch {
                Issue.record(error)
                count = -1
            }
            counts.withLock { $0.append(count) }
        })
        for index in 0..<5 { try store.insert(Note(title: "n\(index)", updatedAt: Date())) }
        #expect(counts.withLock { $0 } == [1, 2, 3, 4, 5])
        observation.cancel()
        try store.insert(Note(title: "after", updatedAt: Date()))
        #expect(counts.withLock { $0 }.count == 5)
    }

    @Test("the asynchronous sequence delivers commits in order")
    func asyncStream() async throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let stream = store.commits()
        try await store.write { db in _ = try db.insert(Tag(name: "a")) }
        try await store.write { db in _ = try db.insert(Tag(name: "b")) }
        var received: [Set<Int64>] = []
        for await changes in stream {
            received.append(changes["Tag"].inserted)
            if received.count == 2 { break }
        }
        #expect(received == [[1], [2]])
    }

    /// Documents why the store implements every delete rule with triggers *and* that
    /// SQLite's update hook (which GRDB's transaction observers rely on) also reports
    /// foreign-key actions, so raw schemas with `ON DELETE CASCADE` would be seen too.
    @Test("the update hook reports foreign-key actions and trigger-made changes")
    func updateHookSeesForeignKeyActions() throws {
        final class Observer: TransactionObserver, @unchecked Sendable {
            var events: [String] = []
            func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
            func databaseDidChange(with event: DatabaseEvent) { events.append("\(event.kind) \(event.tableName) \(event.rowID)") }
            func databaseDidCommit(_ db: Database) {}
            func databaseDidRollback(_ db: Database) {}
        }
        let queue = try DatabaseQueue()
        let observer = Observer()
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE a (id INTEGER PRIMARY KEY);
                CREATE TABLE b (id INTEGER PRIMARY KEY, aID INTEGER REFERENCES a(id) ON DELETE CASCADE);
                CREATE TABLE c (id INTEGER PRIMARY KEY, aID INTEGER REFERENCES a(id) ON DELETE SET NULL);
                INSERT INTO a VALUES (1); INSERT INTO b VALUES (1, 1); INSERT INTO c VALUES (1, 1);
                """)
        }
        queue.add(transactionObserver: observer)
        try queue.write { db in try db.execute(sql: "DELETE FROM a WHERE id = 1") }
        #expect(observer.events.sorted() == ["delete a 1", "delete b 1", "update c 1"])
    }
}
