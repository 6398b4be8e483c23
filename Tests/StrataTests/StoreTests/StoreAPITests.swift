import Foundation
import GRDB
import Testing
@testable import Strata

/// A tree (self-referencing one-to-many) and a one-to-one relationship.
enum ShapesModel {
    static let schema = SchemaDescriptor(name: "Shapes", entities: [
        EntityDescriptor(
            name: "Folder", attributes: [.init(name: "name", type: .string)],
            relationships: [
                .init(name: "parent", destination: "Folder", inverse: "children", isToMany: false,
                      storage: .foreignKey(column: "parentID")),
                .init(name: "children", destination: "Folder", inverse: "parent", isToMany: true,
                      deleteRule: .cascade, storage: .inverseForeignKey),
            ]),
        EntityDescriptor(
            name: "Person", attributes: [.init(name: "name", type: .string)],
            relationships: [
                .init(name: "card", destination: "Card", inverse: "owner", isToMany: false,
                      deleteRule: .cascade, storage: .inverseForeignKey),
            ]),
        EntityDescriptor(
            name: "Card", attributes: [.init(name: "number", type: .string)],
            relationships: [
                .init(name: "owner", destination: "Person", inverse: "card", isToMany: false,
                      deleteRule: .deny, storage: .foreignKey(column: "ownerID")),
            ]),
    ])
}

@Suite("Store API")
struct StoreAPITests {
    @Test("cascades through a self-referencing relationship reach every level")
    func treeCascade() throws {
        let store = try Store.inMemory(schema: ShapesModel.schema)
        let recorder = CommitRecorder(store)
        try store.write { db in
            try db.execute(sql: "INSERT INTO Folder (id, name, parentID) VALUES (1, 'root', NULL)")
            for id in 2...60 {
                try db.execute(sql: "INSERT INTO Folder (id, name, parentID) VALUES (?, 'f', ?)", arguments: [id, id - 1])
            }
            try db.execute(sql: "INSERT INTO Folder (id, name, parentID) VALUES (61, 'other', NULL)")
        }
        recorder.reset()
        try store.write { db in try db.execute(sql: "DELETE FROM Folder WHERE id = 1") }
        let remaining = try store.read { db in try db.ids("Folder") }
        #expect(remaining == [61])
        #expect(recorder.commits.first?["Folder"].deleted == Set(1...60))
    }

    @Test("one-to-one: paths through the non-owning side, cascade and deny")
    func oneToOne() throws {
        let store = try Store.inMemory(schema: ShapesModel.schema)
        try store.write { db in
            try db.execute(sql: "INSERT INTO Person (id, name) VALUES (1, 'ann'), (2, 'bob')")
            try db.execute(sql: "INSERT INTO Card (id, number, ownerID) VALUES (10, 'A-1', 1)")
        }
        let (sqlIDs, memoryIDs) = try store.read { db -> ([Int64], [Int64]) in
            let predicate = PredicateNode.compare(.path(["card", "number"]), .equal, .value("A-1".databaseValue))
            var builder = try SQLQueryBuilder(schema: ShapesModel.schema, rootEntity: "Person")
            let sql = try builder.select(SQL(sql: "t0.id"), where: predicate, orderBy: [SortNode(path: ["card", "number"], descending: true)])
            let graph = try ObjectGraph.load(db, schema: ShapesModel.schema)
            let memory = try [Int64(1), 2].filter { try PredicateEvaluator.evaluate(predicate, on: graph.subject("Person", id: $0)!) }
            return (try Int64.fetchAll(db, SQLRequest<Int64>(literal: sql)), memory)
        }
        #expect(sqlIDs == [1])
        #expect(memoryIDs == [1])
        #expect(throws: DeleteDeniedError(entity: "Card", relationship: "owner")) {
            try store.write { db in try db.execute(sql: "DELETE FROM Card WHERE id = 10") }
        }
        try store.write { db in try db.execute(sql: "DELETE FROM Person WHERE id = 1") }
        let cards = try store.read { db in try db.ids("Card") }
        #expect(cards == [])
    }

    @Test("typed reads and writes on the notes fixture")
    func typedAPI() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("api.sqlite"))
        let work = try store.insert(Notebook(name: "Work", position: 1))
        #expect(work.id.isSaved)
        let home = try store.insert(Notebook(name: "Home", position: 0))
        let date = Date(timeIntervalSince1970: 1_000)
        var milk = try store.insert(Note(title: "Milk", pinned: true, updatedAt: date, notebookID: home.id))
        let report = try store.insert(Note(title: "report", priority: .high, updatedAt: date, notebookID: work.id))
        let loose = try store.insert(Note(title: "loose", updatedAt: date))
        let urgent = try store.insert(Tag(name: "urgent"))

        try store.write { db in
            try db.link(report.id, Note.tags, urgent.id)
            try db.link(milk.id, Note.tags, urgent.id)
        }
        try store.read { (db: Database) throws in
            #expect(try db.fetchOne(Note.self, id: milk.id)?.title == milk.title)
            #expect(try db.fetchAll(Note.Fetches.all).map(\.title) == ["Milk", "loose", "report"])
            #expect(try db.fetchAll(Note.Fetches.pinned).map(\.id) == [milk.id])
            #expect(try db.fetchCount(Note.Fetches.search(text: "MIL")) == 1)
            #expect(try db.fetchAll(Note.self, where: Note.notebook.name == "Work").map(\.id) == [report.id])
            #expect(try db.fetchAll(Note.self, where: Note.notebook.isNil).map(\.id) == [loose.id])
            #expect(try db.fetchAll(Note.self, sortedBy: [Note.notebook.position.descending]).map(\.id)
                    == [report.id, milk.id, loose.id])
            #expect(try db.fetchAll(Note.self, sortedBy: [Note.priority.descending]).map(\.id)
                    == [report.id, milk.id, loose.id], "enum order is declaration order")
            #expect(try db.fetchOne(Note.notebook, of: milk.id)?.id == home.id)
            #expect(try db.fetchOne(Note.notebook, of: loose.id) == nil)
            #expect(try db.fetchAll(Notebook.notes, of: work.id).map(\.id) == [report.id])
            #expect(try db.fetchAll(Tag.notes, of: urgent.id, sortedBy: [Note.title.ascending]).map(\.id) == [milk.id, report.id])
            #expect(try db.fetchAll(Note.self, where: Note.tags.count == 0).map(\.id) == [loose.id])
            #expect(try db.fetchAll(Notebook.self, where: Notebook.notes.any(Note.pinned == true)).map(\.id) == [home.id])
        }

        milk.title = "Oat milk"
        try store.update(milk)
        #expect(try store.fetchOne(Note.self, id: milk.id)?.title == "Oat milk")
        #expect(throws: StoreError.unsaved(entity: "Note")) { try store.update(Note(title: "x", updatedAt: date)) }
        #expect(throws: StoreError.notFound(entity: "Note", id: 999)) {
            try store.update(Note(id: Note.ID(999), title: "x", updatedAt: date))
        }

        try store.write { db in
            try db.unlink(milk.id, Note.tags, urgent.id)
            try db.unlink(work.id, Notebook.notes, report.id)
            try db.link(home.id, Notebook.notes, loose.id)
        }
        let (tagged, homeNotes, deleted) = try store.write { db -> ([Note.ID], [Note.ID], Int) in
            (try db.fetchAll(Tag.notes, of: urgent.id).map(\.id),
             try db.fetchAll(Notebook.notes, of: home.id).map(\.id),
             try db.delete(Note.self, where: Note.title.beginsWith("oat", .caseInsensitive)))
        }
        #expect(tagged == [report.id])
        #expect(homeNotes == [milk.id, loose.id])
        #expect(deleted == 1)
        #expect(try store.delete(report))
        #expect(try !store.delete(report))
    }

    @Test("asynchronous reads and writes")
    func asyncAPI() async throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let tag = try await store.write { db in try db.insert(Tag(name: "a")) }
        let names = try await store.read { db in try db.fetchAll(Tag.self).map(\.name) }
        #expect(names == ["a"])
        #expect(tag.id.rawValue == 1)
    }

    @Test("invalid paths are typed errors")
    func invalidPaths() throws {
        var builder = try SQLQueryBuilder(schema: NotesModel.schema, rootEntity: "Note")
        #expect(throws: QueryError.invalidPath(["nope"], entity: "Note")) { try builder.value(["nope"]) }
        #expect(throws: QueryError.invalidPath(["tags", "name"], entity: "Note")) { try builder.value(["tags", "name"]) }
        #expect(throws: QueryError.unknownEntity("Nope")) { try SQLQueryBuilder(schema: NotesModel.schema, rootEntity: "Nope") }
    }
}
