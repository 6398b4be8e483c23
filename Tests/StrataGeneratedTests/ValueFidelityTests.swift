import Foundation
import GRDB
import Strata
import StrataTestSupport
import Testing

// What goes in comes out, or is refused with a typed error at write time: the decisions of
// Docs/Decisions.md ("Values: stored exactly, or refused") checked through the generated
// code of the EdgeCases and Notes models, on every write path.

@Suite("Value fidelity")
struct ValueFidelityTests {
    private func edgeStore() throws -> (Strata.Store, Section.ID) {
        let store = try Strata.Store.inMemory(schema: EdgeModel.schema)
        let section = try store.insert(Section(title: "s"))
        return (store, section.id)
    }

    private func itemCount(_ store: Strata.Store) throws -> Int {
        try store.read { db in try Item.fetchCount(db) }
    }

    @Test("text with a NUL character is refused on every write path, and nothing is written")
    func nulCharacters() throws {
        let (store, section) = try edgeStore()
        let expected = InvalidValueError(entity: "Item", attribute: "name", reason: .nulCharacter)
        #expect(throws: expected) { try store.insert(Item(name: "a\u{0}b", sectionID: section)) }
        #expect(throws: expected) { try store.write { db in try db.insert(Item(name: "\u{0}", sectionID: section)) } }
        #expect(throws: expected) {
            try store.writer.write { db in
                var item = Item(name: "x\u{0}", sectionID: section)
                try item.insert(db)   // GRDB's own API
            }
        }
        #expect(try itemCount(store) == 0)
        var item = try store.insert(Item(name: "fine", sectionID: section))
        item.uniqueCode = "code\u{0}"   // an optional attribute
        #expect(throws: InvalidValueError(entity: "Item", attribute: "uniqueCode", reason: .nulCharacter)) {
            try store.update(item)
        }
        #expect(try store.fetchOne(Item.self, id: item.id)?.uniqueCode == nil)
        #expect(expected.description.contains("Item.name") && expected.localizedDescription == expected.description)
    }

    @Test("NaN is refused for Double and Float, optional or not; infinities and -0.0 are stored")
    func floatingPoint() throws {
        let (store, section) = try edgeStore()
        #expect(throws: InvalidValueError(entity: "Item", attribute: "ratio", reason: .notANumber)) {
            try store.insert(Item(name: "a", ratio: .nan, sectionID: section))
        }
        #expect(throws: InvalidValueError(entity: "Item", attribute: "weight", reason: .notANumber)) {
            try store.insert(Item(name: "b", weight: .nan, sectionID: section))
        }
        let node = Node(offset: .nan)
        #expect(throws: InvalidValueError.self) { try Strata.Store.inMemory(schema: EdgeModel.schema).insert(node) }
        #expect(try itemCount(store) == 0)

        let stored = try store.insert(Item(name: "c", ratio: -.infinity, weight: .infinity, sectionID: section))
        let negativeZero = try store.insert(Item(name: "d", ratio: -0.0, sectionID: section))
        let fetched = try store.read { db in try db.fetchAll(Item.self) }
        #expect(fetched.map(\.ratio) == [-.infinity, 0])
        #expect(fetched[0].weight == .infinity)
        // -0.0 reads back as 0.0 (SQLite stores it as the integer 0); the two are == in Swift.
        #expect(fetched[1] == negativeZero && fetched[0] == stored)
        #expect(fetched[1].ratio.sign == .plus)
    }

    @Test("dates from 0001-01-01 to 9999-12-31 (UTC, to the millisecond) round-trip; dates outside are refused on every write path")
    func dateRange() throws {
        let (store, section) = try edgeStore()
        // 0001-01-01T00:00:00Z as the stored text reads it (Date.distantPast), and the last
        // millisecond of 9999.
        let first = Foundation.Date(timeIntervalSince1970: -62_135_769_600)
        let last = Foundation.Date(timeIntervalSince1970: 253_402_300_799.999)
        #expect(first == .distantPast)
        for (index, date) in [first, last, Foundation.Date(timeIntervalSince1970: -62_135_769_600.000_4)].enumerated() {
            let item = try store.insert(Item(name: "edge \(index)", stamp: date, sectionID: section))
            let fetched = try #require(try store.fetchOne(Item.self, id: item.id))
            #expect(abs(fetched.stamp.timeIntervalSince(date)) < 0.001, "\(date.timeIntervalSince1970)")
            #expect(fetched == item)
        }
        let before = try itemCount(store)
        let outside: [Double] = [
            -62_135_769_600.001,           // the last millisecond of 1 BC
            -62_170_156_800,               // in 1 BC: once stored as 0002-11-30, a date three years later
            -1e15, 253_402_300_800,        // 10000-01-01: text of five digits no read accepts
            253_402_300_799.999_6,         // rounds up to 10000-01-01
            253_402_387_200, 1e15, .infinity, -.infinity,
        ]
        for seconds in outside {
            let date = Foundation.Date(timeIntervalSince1970: seconds)
            let expected = InvalidValueError(entity: "Item", attribute: "stamp", reason: .dateOutOfRange)
            #expect(throws: expected, "\(seconds)") { try store.insert(Item(name: "x", stamp: date, sectionID: section)) }
            #expect(throws: expected, "\(seconds)") {
                try store.writer.write { db in
                    var item = Item(name: "x", stamp: date, sectionID: section)
                    try item.insert(db)   // GRDB's own API
                }
            }
            var stored = try store.insert(Item(name: "y \(seconds)", sectionID: section))
            stored.stamp = date
            #expect(throws: expected, "\(seconds)") { try store.update(stored) }
            #expect(try store.fetchOne(Item.self, id: stored.id)?.stamp != date)
            // An optional date: the same range, nil stays storable.
            #expect(throws: InvalidValueError(entity: "Snapshot", attribute: "date", reason: .dateOutOfRange)) {
                try store.insert(Snapshot(name: "s", date: date))
            }
        }
        // Nothing but the rows made to be updated was written, and every row still reads.
        #expect(try itemCount(store) == before + outside.count)
        #expect(try store.fetchAll(Item.self).count == before + outside.count)
        #expect(try store.insert(Snapshot(name: "s", date: nil)).date == nil)
        #expect(InvalidValueError(entity: "E", attribute: "d", reason: .dateOutOfRange).description
            == "cannot store E.d: dates are stored from 0001-01-01 to 9999-12-31 (UTC), to the millisecond")
    }

    @Test("the value insert returns equals a fetch of the row: dates at the stored millisecond")
    func insertReturnsTheStoredValue() throws {
        let (store, section) = try edgeStore()
        let date = Foundation.Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_7)
        let inserted = try store.insert(Item(name: "a", stamp: date, sectionID: section))
        let withDefault = try store.insert(Item(name: "b", sectionID: section))   // stamp: now
        let fetched = try store.read { db in try db.fetchAll(Item.self) }
        #expect(fetched == [inserted, withDefault])
        #expect(abs(inserted.stamp.timeIntervalSince(date)) < 0.001)
        // A date that differs only below the millisecond is the same stored value: nothing written.
        var same = inserted
        same.stamp = date
        #expect(try store.update(same) == false)

        let store2 = try Strata.Store.inMemory(schema: NotesModel.schema)
        let notebook = try store2.insert(Notebook(name: "n"))
        let note = try store2.insert(Note(title: "t", updatedAt: Foundation.Date(), notebookID: notebook.id))
        #expect(try store2.fetchOne(Note.self, id: note.id) == note)
        #expect(try store2.fetchOne(Notebook.self, id: notebook.id) == notebook)
    }

    @Test("an update to another Unicode form of the same text is written, byte for byte")
    func unicodeForms() throws {
        let store = try Strata.Store.inMemory(schema: NotesModel.schema)
        var note = try store.insert(Note(title: "caf\u{E9}", updatedAt: Foundation.Date()))
        note.title = "cafe\u{301}"
        #expect(note.title == "caf\u{E9}", "Swift's == treats them as equal")
        #expect(try store.update(note))
        let bytes = try store.read { db in try Data.fetchOne(db, sql: "SELECT CAST(title AS BLOB) FROM Note")! }
        #expect(bytes == Data("cafe\u{301}".utf8))
        #expect(try store.update(note) == false, "now the same bytes")
        // The model language compares text by bytes: the NFC form no longer matches.
        #expect(try store.read { db in try db.fetchCount(Note.self, where: Note.title == "caf\u{E9}") } == 0)
    }

    @Test("changing a row's id is refused, through the store and through GRDB directly")
    func identityChanges() throws {
        let store = try Strata.Store.inMemory(schema: NotesModel.schema)
        let notebook = try store.insert(Notebook(name: "n"))
        let note = try store.insert(Note(title: "t", updatedAt: Foundation.Date(), notebookID: notebook.id))
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, deliveryQueue: DispatchQueue(label: "identity"))

        #expect(throws: IdentityChangeError(entity: "Note")) {
            try store.write { db in try db.execute(sql: "UPDATE Note SET id = 100 WHERE id = ?", arguments: [note.id]) }
        }
        #expect(throws: IdentityChangeError(entity: "Notebook")) {
            try store.write { db in try db.execute(sql: "UPDATE Notebook SET id = id + 1") }
        }
        do {
            try store.writer.write { db in try db.execute(sql: "UPDATE Note SET id = 5") }
            Issue.record("the identity change was not refused")
        } catch {
            #expect(IdentityChangeError(error) == IdentityChangeError(entity: "Note"))
        }
        // An update that keeps the id, and GRDB's record update, still work.
        try store.write { db in try db.execute(sql: "UPDATE Note SET id = id, title = 'u'") }
        controller.waitForDeliveries()
        #expect(controller.snapshot.sections.map(\.items) == [[try store.fetchOne(Note.self, id: note.id)!]])
        #expect(try store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Note") } == [note.id.rawValue])
    }

    @Test("an id change is refused for GRDB's query interface, another connection to the file, and a file opened before the trigger existed")
    func identityChangesEverywhere() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-identity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.sqlite").path
        do {
            let store = try Strata.Store(schema: NotesModel.schema, path: path)
            let note = try store.insert(Note(title: "t", updatedAt: Foundation.Date()))
            #expect(throws: IdentityChangeError(entity: "Note")) {
                try store.write { db in
                    _ = try Note.filter(GRDB.Column("id") == note.id).updateAll(db, GRDB.Column("id").set(to: 100))
                }
            }
            // A file as an earlier version left it: no identity trigger.
            try store.writer.writeWithoutTransaction { db in try db.execute(sql: "DROP TRIGGER strata_identity_Note") }
            try store.close()
        }
        // Opening it adds the trigger; another program's connection then meets it too.
        try Strata.Store(schema: NotesModel.schema, path: path).close()
        let other = try GRDB.DatabaseQueue(path: path)
        do {
            try other.write { db in try db.execute(sql: "UPDATE Note SET id = 7") }
            Issue.record("another connection changed an id")
        } catch {
            #expect(IdentityChangeError(error) == IdentityChangeError(entity: "Note"))
        }
        #expect(try other.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Note") } == [1])
        try other.close()
    }

    @Test("a unique constraint violation names the entity and the attributes")
    func uniqueConstraints() throws {
        let (store, section) = try edgeStore()
        try store.insert(Item(name: "a", uniqueCode: "X", sectionID: section))
        #expect(throws: UniqueConstraintError(entity: "Item", attributes: ["name", "sectionID"])) {
            try store.insert(Item(name: "a", sectionID: section))
        }
        #expect(throws: UniqueConstraintError(entity: "Item", attributes: ["uniqueCode"])) {
            try store.insert(Item(name: "b", uniqueCode: "X", sectionID: section))
        }
        #expect(throws: UniqueConstraintError(entity: "Item", attributes: ["uniqueCode"])) {
            try store.write { db in try db.execute(sql: "INSERT INTO Item (name, sectionID, uniqueCode) VALUES ('c', ?, 'X')", arguments: [section]) }
        }
        let error = UniqueConstraintError(entity: "Item", attributes: ["uniqueCode"])
        #expect(error.description == "another Item already has the same value of uniqueCode (unique constraint)")
        #expect(try itemCount(store) == 1)
    }

    @Test("changing options while paused delivers nothing; resume delivers one reload with them")
    func pauseMeansPause() throws {
        let store = try Strata.Store.inMemory(schema: NotesModel.schema)
        for title in ["a", "b", "Draft c"] { try store.insert(Note(title: title, updatedAt: Foundation.Date())) }
        let queue = DispatchQueue(label: "pause")
        let controller = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: queue)
        // What the coordinator is told, as text.
        let recorder = DeliveryRecorder<Note, NoSection>(recording: [.reloads, .batches])
        func events() -> [String] {
            recorder.events { delivery in
                guard case .reload(let snapshot) = delivery else { return "batch" }
                return "reload \(snapshot.sections.flatMap(\.items).count)"
            }
        }
        controller.coordinate(recorder)
        controller.waitForDeliveries()
        #expect(events() == ["reload 3"])

        controller.pause()
        controller.options.filter = { !$0.title.hasPrefix("Draft") }
        controller.groupFilteredItems = true
        controller.comparator = { $0.title > $1.title }
        try store.insert(Note(title: "d", updatedAt: Foundation.Date()))
        controller.waitForDeliveries()
        #expect(events() == ["reload 3"], "nothing while paused")
        #expect(controller.snapshot.sections.flatMap(\.items).count == 3)

        try controller.resume()
        controller.waitForDeliveries()
        #expect(events() == ["reload 3", "reload 3"])
        #expect(controller.snapshot.sections.flatMap(\.rows).compactMap(\.item).map(\.title) == ["d", "b", "a"])
    }
}
