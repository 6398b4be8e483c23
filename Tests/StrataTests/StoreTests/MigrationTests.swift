import Foundation
import GRDB
import Testing
@testable import Strata

/// Two versions of a small library model.
enum LibraryModel {
    static let v1 = SchemaDescriptor(name: "Library", entities: [
        EntityDescriptor(
            name: "Author",
            attributes: [.init(name: "name", type: .string), .init(name: "born", type: .int, isOptional: true)],
            relationships: [
                .init(name: "books", destination: "Book", inverse: "author", isToMany: true,
                      deleteRule: .cascade, storage: .inverseForeignKey),
            ]),
        EntityDescriptor(
            name: "Book",
            attributes: [
                .init(name: "title", type: .string),
                .init(name: "pages", type: .int, defaultValue: .value(0.databaseValue)),
            ],
            relationships: [
                .init(name: "author", destination: "Author", inverse: "books", isToMany: false,
                      storage: .foreignKey(column: "authorID")),
            ],
            indexes: [["title"]]),
    ])

    /// Every lightweight change at once: renamed entity and attribute, new optional and
    /// defaulted attributes (one defaulting to `now`), a new entity, a new many-to-many
    /// relationship, new index and unique constraint, a dropped index.
    static let v2 = SchemaDescriptor(name: "Library", entities: [
        EntityDescriptor(
            name: "Writer",
            attributes: [
                .init(name: "fullName", type: .string, renamedFrom: "name"),
                .init(name: "born", type: .int, isOptional: true),
                .init(name: "country", type: .string, isOptional: true),
                .init(name: "addedAt", type: .date, defaultValue: .now),
            ],
            relationships: [
                .init(name: "books", destination: "Book", inverse: "author", isToMany: true,
                      deleteRule: .cascade, storage: .inverseForeignKey),
                .init(name: "favorite", destination: "Book", inverse: "fans", isToMany: false,
                      storage: .foreignKey(column: "favoriteID")),
            ],
            uniques: [["fullName"]],
            renamedFrom: "Author"),
        EntityDescriptor(
            name: "Book",
            attributes: [
                .init(name: "title", type: .string),
                .init(name: "pages", type: .int, defaultValue: .value(0.databaseValue), isIndexed: true),
                .init(name: "rating", type: .double, defaultValue: .value(2.5.databaseValue)),
            ],
            relationships: [
                .init(name: "author", destination: "Writer", inverse: "books", isToMany: false,
                      storage: .foreignKey(column: "authorID")),
                .init(name: "shelves", destination: "Shelf", inverse: "books", isToMany: true,
                      storage: .joinTable(name: "Book_shelves", column: "bookID", inverseColumn: "shelfID")),
                .init(name: "fans", destination: "Writer", inverse: "favorite", isToMany: true,
                      storage: .inverseForeignKey),
            ]),
        EntityDescriptor(
            name: "Shelf",
            attributes: [.init(name: "name", type: .string)],
            relationships: [
                .init(name: "books", destination: "Book", inverse: "shelves", isToMany: true,
                      storage: .joinTable(name: "Book_shelves", column: "shelfID", inverseColumn: "bookID")),
            ]),
    ])

    static func modified(_ change: (inout SchemaDescriptor) -> Void) -> SchemaDescriptor {
        var schema = v1
        change(&schema)
        return schema
    }
}

@Suite("Store migrations")
struct MigrationTests {
    private func writeV1(_ path: String) throws {
        let store = try Store(schema: LibraryModel.v1, path: path)
        try store.write { db in
            try db.execute(sql: "INSERT INTO Author (id, name, born) VALUES (1, 'Ada', 1815), (2, 'Alan', NULL)")
            try db.execute(sql: "INSERT INTO Book (id, title, pages, authorID) VALUES (1, 'Notes', 40, 1), (2, 'Machines', 12, 2), (3, 'Orphan', 1, NULL)")
        }
        try store.close()
    }

    @Test("lightweight changes migrate a v1 file with its data intact")
    func lightweight() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("library.sqlite")
        try writeV1(path)

        let store = try Store(schema: LibraryModel.v2, path: path)
        let writers = try store.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT id, fullName, born, country, addedAt, favoriteID FROM Writer ORDER BY id")
        }
        #expect(writers.map { $0["favoriteID"] as Int64? } == [nil, nil], "new to-one relationship")
        #expect(writers.map { $0["fullName"] as String } == ["Ada", "Alan"])
        #expect(writers.map { $0["born"] as Int? } == [1815, nil])
        #expect(writers.map { $0["country"] as String? } == [nil, nil])
        #expect(writers.allSatisfy { ($0["addedAt"] as String?)?.count == 23 }, "DEFAULT now applied to existing rows")
        let books = try store.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT title, pages, rating, authorID FROM Book ORDER BY id")
        }
        #expect(books.map { $0["title"] as String } == ["Notes", "Machines", "Orphan"])
        #expect(books.map { $0["pages"] as Int } == [40, 12, 1])
        #expect(books.map { $0["rating"] as Double } == [2.5, 2.5, 2.5])
        #expect(books.map { $0["authorID"] as Int? } == [1, 2, nil])

        // Schema objects of v2: join table, indexes, unique constraint, triggers.
        let objects = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'strata%' OR name = 'Book_shelves' ORDER BY name")
        }
        #expect(objects.contains("Book_shelves"))
        #expect(objects.contains("strata_unique_Writer_fullName"))
        #expect(objects.contains("strata_index_Book_pages"))
        #expect(!objects.contains("strata_index_Book_title"), "dropped index")
        #expect(objects.contains("strata_delete_Writer_books"))
        #expect(!objects.contains { $0.contains("Author") })

        // The model works: unique constraint, join table, cascade through the renamed entity.
        #expect(throws: UniqueConstraintError(entity: "Writer", attributes: ["fullName"])) {
            try store.write { db in try db.execute(sql: "INSERT INTO Writer (fullName) VALUES ('Ada')") }
        }
        try store.write { db in
            try db.execute(sql: "INSERT INTO Shelf (id, name) VALUES (1, 'top')")
            try db.execute(sql: "INSERT INTO Book_shelves (bookID, shelfID) VALUES (1, 1)")
            try db.execute(sql: "UPDATE Writer SET favoriteID = 2 WHERE id = 2")
            try db.execute(sql: "DELETE FROM Writer WHERE id = 1")
        }
        let remaining = try store.read { db in
            [try db.ids("Book"), [Int64(try db.count("Book_shelves"))]]
        }
        #expect(remaining == [[2, 3], [0]])
        #expect(
            throws: RuleViolationError(entity: "Writer", id: 2, member: "favorite", rule: .missingDestination("Book")),
            "the new foreign key is enforced"
        ) {
            try store.write { db in try db.execute(sql: "UPDATE Writer SET favoriteID = 99 WHERE id = 2") }
        }

        // Opening again with the same model changes nothing.
        let hash = try store.read { db in try String.fetchOne(db, sql: "SELECT value FROM strata_metadata WHERE key = 'hash'") }
        #expect(hash == CanonicalSchema(LibraryModel.v2).versionHash)
    }

    static let destructiveCases: [(String, SchemaDescriptor, DestructiveChange)] = [
        ("removed attribute", LibraryModel.modified { $0.entities[0].attributes.removeLast() },
         .removedAttribute(entity: "Author", attribute: "born")),
        ("changed type", LibraryModel.modified { $0.entities[1].attributes[1].type = .string },
         .changedType(entity: "Book", attribute: "pages")),
        ("new required attribute", LibraryModel.modified { $0.entities[1].attributes.append(.init(name: "isbn", type: .string)) },
         .newRequiredAttribute(entity: "Book", attribute: "isbn")),
        ("optional made required", LibraryModel.modified { $0.entities[0].attributes[1].isOptional = false },
         .madeRequired(entity: "Author", attribute: "born")),
        ("removed entity", SchemaDescriptor(name: "Library", entities: [
            EntityDescriptor(name: "Author", attributes: LibraryModel.v1.entities[0].attributes)]),
         .removedEntity(entity: "Book")),
        ("removed relationship", LibraryModel.modified {
            $0.entities[0].relationships.removeAll()
            $0.entities[1].relationships.removeAll()
         },
         .removedRelationship(entity: "Book", relationship: "author")),
        ("new required relationship", LibraryModel.modified {
            $0.entities[0].relationships.append(.init(
                name: "edited", destination: "Book", inverse: "editor", isToMany: true, storage: .inverseForeignKey))
            $0.entities[1].relationships.append(.init(
                name: "editor", destination: "Author", inverse: "edited", isToMany: false, isRequired: true,
                storage: .foreignKey(column: "editorID")))
         },
         .newRequiredRelationship(entity: "Book", relationship: "editor")),
    ]

    @Test("destructive changes are refused, naming entity and attribute, file untouched",
          arguments: destructiveCases.indices)
    func destructive(_ index: Int) throws {
        let (_, schema, expected) = Self.destructiveCases[index]
        let directory = try TemporaryDirectory()
        let path = directory.path("library.sqlite")
        try writeV1(path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        do {
            _ = try Store(schema: schema, path: path)
            Issue.record("expected a destructive-change error")
        } catch let MigrationError.destructiveChanges(changes) {
            #expect(changes.contains(expected), "\(changes)")
            #expect(expected.entity == changes.first { $0 == expected }?.entity)
        }
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(before == after, "file bytes unchanged")

        // Still opens with its own model, data intact.
        let store = try Store(schema: LibraryModel.v1, path: path)
        let titles = try store.read { db in try String.fetchAll(db, sql: "SELECT title FROM Book ORDER BY id") }
        #expect(titles == ["Notes", "Machines", "Orphan"])
    }

    @Test("allowDataLoss applies destructive changes")
    func allowDataLoss() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("library.sqlite")
        try writeV1(path)
        let schema = LibraryModel.modified {
            $0.entities[0].attributes.removeLast()  // born
            $0.entities[1].attributes.append(.init(name: "isbn", type: .string))
        }
        let store = try Store(schema: schema, path: path, options: .init(allowDataLoss: true))
        let columns = try store.read { db in try db.columns(in: "Author").map(\.name) }
        #expect(columns == ["id", "name"])
        let isbns = try store.read { db in try String.fetchAll(db, sql: "SELECT isbn FROM Book ORDER BY id") }
        #expect(isbns == ["", "", ""])
        let names = try store.read { db in try String.fetchAll(db, sql: "SELECT name FROM Author ORDER BY id") }
        #expect(names == ["Ada", "Alan"])
    }

    /// A task model whose enumeration attributes lose or gain cases.
    static func taskModel(states: [String], kinds: [String]) -> SchemaDescriptor {
        SchemaDescriptor(name: "Tasks", entities: [
            EntityDescriptor(name: "Task", attributes: [
                .init(name: "state", type: .enumeration(name: "State", cases: states)),
                .init(name: "kind", type: .enumeration(name: "Kind", cases: kinds), isOptional: true),
            ]),
        ])
    }

    @Test("a removed enum case is destructive: refused, or with data loss its values take the fallback")
    func removedEnumCase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tasks.sqlite")
        let v1 = Self.taskModel(states: ["todo", "doing", "done"], kinds: ["bug", "chore"])
        let store = try Store(schema: v1, path: path)
        try store.write { db in
            try db.execute(sql: "INSERT INTO Task (id, state, kind) VALUES (1, 'todo', 'bug'), (2, 'doing', 'chore'), (3, 'done', NULL)")
        }
        try store.close()

        // A new case is lightweight.
        let added = Self.taskModel(states: ["todo", "doing", "done", "blocked"], kinds: ["bug", "chore"])
        try Store(schema: added, path: path).close()

        let removed = Self.taskModel(states: ["done", "todo"], kinds: ["bug"])
        #expect(throws: MigrationError.destructiveChanges([
            .removedEnumCases(entity: "Task", attribute: "state", cases: ["doing", "blocked"]),
            .removedEnumCases(entity: "Task", attribute: "kind", cases: ["chore"]),
        ])) { _ = try Store(schema: removed, path: path) }
        #expect(
            MigrationError.destructiveChanges([.removedEnumCases(entity: "Task", attribute: "state", cases: ["doing", "x"])]).description
                == "the model changed destructively: attribute Task.state lost enum cases doing, x (open the store with allowDataLoss to apply)")

        let migrated = try Store(schema: removed, path: path, options: .init(allowDataLoss: true))
        let rows = try migrated.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT state, kind FROM Task ORDER BY id").map { [$0[0] as String?, $0[1] as String?] }
        }
        // A required value takes the first remaining case; an optional one becomes NULL.
        #expect(rows == [["todo", "bug"], ["done", nil], ["done", nil]])
    }

    @Test("opening a migrated store again changes nothing")
    func reopenAfterMigration() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("library.sqlite")
        try writeV1(path)
        try Store(schema: LibraryModel.v2, path: path).close()
        // Every schema object (with its root page: a dropped and recreated index moves),
        // the metadata, and SQLite's schema version.
        let snapshot = { () throws -> (objects: [String], version: Int) in
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            return try queue.read { db in
                (try String.fetchAll(db, sql: """
                    SELECT type || ' ' || name || ' ' || rootpage || ' ' || IFNULL(sql, '') FROM sqlite_master ORDER BY name
                    """) + String.fetchAll(db, sql: "SELECT key || '=' || value FROM strata_metadata ORDER BY key"),
                 try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? -1)
            }
        }
        let migrated = try snapshot()
        #expect(migrated.objects.contains("hash=\(CanonicalSchema(LibraryModel.v2).versionHash)"))

        let store = try Store(schema: LibraryModel.v2, path: path)
        let writers = try store.read { db in try String.fetchAll(db, sql: "SELECT fullName FROM Writer ORDER BY id") }
        #expect(writers == ["Ada", "Alan"])
        try store.close()
        let reopened = try snapshot()
        #expect(reopened.objects == migrated.objects, "no schema object or metadata changed")
        // Opening a pool on a file without a WAL creates and drops a table (GRDB's
        // workaround for its issue 102): 2 schema changes. Migrating would make many more
        // (every trigger is dropped and created again).
        #expect(reopened.version - migrated.version <= 2, "no migration ran")
    }

    @Test("an unchanged model whose delete-rule triggers are stale gets them regenerated on open")
    func staleTriggersAreRegenerated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("twins.sqlite")
        let schema = TwinModel.schema(twin: .nullify)
        try Store(schema: schema, path: path).close()
        // As a store written by an earlier Strata, which had no trigger for this rule.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "DROP TRIGGER strata_delete_Node_twin") }
        try queue.close()

        let store = try Store(schema: schema, path: path)
        try store.write { db in
            try db.execute(sql: "INSERT INTO Node (id, name) VALUES (1, 'a'), (2, 'b')")
            try db.execute(sql: "UPDATE Node SET twinID = 3 - id")
            try db.execute(sql: "DELETE FROM Node WHERE id = 1")
        }
        #expect(try store.read { db in try Int64?.fetchAll(db, sql: "SELECT twinID FROM Node") } == [nil])
    }

    @Test("a file that is not a Strata store is refused")
    func foreignFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("other.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        try queue.close()
        #expect(throws: MigrationError.notAStrataStore) { _ = try Store(schema: LibraryModel.v1, path: path) }
    }

    @Test("the default location follows XDG_DATA_HOME")
    func defaultLocation() throws {
        let url = Store.defaultURL(for: LibraryModel.v1)
        #expect(url.lastPathComponent == "Library.sqlite")
        #expect(url.deletingLastPathComponent().lastPathComponent == "Library")
        #if os(Linux)
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            #expect(url.path.hasPrefix(xdg))
        } else {
            #expect(url.path.contains("/.local/share/"))
        }
        #endif
    }
}
