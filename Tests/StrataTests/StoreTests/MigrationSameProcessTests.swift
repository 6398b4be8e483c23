import Foundation
import GRDB
import Testing
@testable import Strata

/// A shop: customers, their purchases, and the products of each purchase (many-to-many).
/// The cases below change it in every way the documentation calls lightweight, and in a
/// few destructive ways.
enum ShopModel {
    static let v1 = SchemaDescriptor(name: "Shop", entities: [
        EntityDescriptor(
            name: "Customer",
            attributes: [.init(name: "name", type: .string), .init(name: "email", type: .string, isOptional: true)],
            relationships: [
                .init(name: "purchases", destination: "Purchase", inverse: "customer", isToMany: true,
                      storage: .inverseForeignKey),
            ]),
        EntityDescriptor(
            name: "Purchase",
            attributes: [
                .init(name: "number", type: .int),
                .init(name: "note", type: .string, defaultValue: .value("".databaseValue)),
                .init(name: "status", type: .enumeration(name: "Status", cases: ["open", "closed"]),
                      defaultValue: .value("open".databaseValue)),
            ],
            relationships: [
                .init(name: "customer", destination: "Customer", inverse: "purchases", isToMany: false,
                      storage: .foreignKey(column: "customerID")),
                .init(name: "products", destination: "Product", inverse: "purchases", isToMany: true,
                      storage: .joinTable(name: "Purchase_products", column: "purchaseID", inverseColumn: "productID")),
            ],
            indexes: [["number"]]),
        EntityDescriptor(
            name: "Product",
            attributes: [
                .init(name: "title", type: .string),
                .init(name: "price", type: .double, defaultValue: .value(0.0.databaseValue)),
            ],
            relationships: [
                .init(name: "purchases", destination: "Purchase", inverse: "products", isToMany: true,
                      storage: .joinTable(name: "Purchase_products", column: "productID", inverseColumn: "purchaseID")),
            ],
            uniques: [["title"]]),
    ])

    /// Creates a v1 store at `path` with rows in every table, foreign keys and links.
    static func writeV1(_ path: String) throws {
        let store = try Store(schema: v1, path: path)
        try store.write { db in
            try db.execute(sql: """
                INSERT INTO Customer (id, name, email) VALUES (1, 'Ada', 'ada@example.com'), (2, 'Alan', NULL), (3, 'Grace', 'grace@example.com');
                INSERT INTO Product (id, title, price) VALUES (1, 'pen', 1.5), (2, 'ink', 3.25), (3, 'paper', 0.5);
                INSERT INTO Purchase (id, number, note, status, customerID) VALUES
                    (1, 100, 'first', 'open', 1), (2, 101, '', 'closed', 1), (3, 102, 'gift', 'open', 3), (4, 103, 'walk-in', 'closed', NULL);
                INSERT INTO Purchase_products (purchaseID, productID) VALUES (1, 1), (1, 2), (2, 3), (3, 1), (3, 3);
                """)
        }
        try store.close()
    }

    static func modified(_ change: (inout SchemaDescriptor) -> Void) -> SchemaDescriptor {
        var schema = v1
        change(&schema)
        return schema
    }

    /// Renames entity `Customer` to `Client` (declared with `renamedFrom`), and the
    /// relationships that point at it.
    static func renameCustomer(_ schema: inout SchemaDescriptor) {
        schema.entities[0].name = "Client"
        schema.entities[0].renamedFrom = "Customer"
        schema.entities[1].relationships[0].destination = "Client"
    }
}

/// One change of model, applied to a file written with the previous model.
struct ModelChange: Sendable, CustomTestStringConvertible {
    var name: String
    var schema: SchemaDescriptor
    var allowDataLoss = false

    var testDescription: String { name }

    /// Every change the documentation lists as lightweight (DeleteRulesAndMigrations.md,
    /// Docs/ModelLanguage.md), one at a time, and all at once.
    static let lightweight: [ModelChange] = [
        ModelChange(name: "new entity", schema: ShopModel.modified {
            $0.entities.insert(EntityDescriptor(name: "Coupon", attributes: [.init(name: "code", type: .string)]), at: 0)
        }),
        ModelChange(name: "new optional attribute (first column)", schema: ShopModel.modified {
            $0.entities[1].attributes.insert(.init(name: "comment", type: .string, isOptional: true), at: 0)
        }),
        ModelChange(name: "new attribute with a constant default (first column)", schema: ShopModel.modified {
            $0.entities[1].attributes.insert(
                .init(name: "priority", type: .int, defaultValue: .value(3.databaseValue)), at: 0)
        }),
        ModelChange(name: "new attribute defaulting to now", schema: ShopModel.modified {
            $0.entities[0].attributes.insert(.init(name: "joinedAt", type: .date, defaultValue: .now), at: 0)
        }),
        ModelChange(name: "new to-one relationship", schema: ShopModel.modified {
            $0.entities[0].relationships.append(.init(
                name: "supplied", destination: "Product", inverse: "supplier", isToMany: true, storage: .inverseForeignKey))
            $0.entities[2].relationships.insert(.init(
                name: "supplier", destination: "Customer", inverse: "supplied", isToMany: false,
                storage: .foreignKey(column: "supplierID")), at: 0)
        }),
        ModelChange(name: "new many-to-many relationship and join table", schema: ShopModel.modified {
            $0.entities[0].relationships.append(.init(
                name: "wishes", destination: "Product", inverse: "wishedBy", isToMany: true,
                storage: .joinTable(name: "Customer_wishes", column: "customerID", inverseColumn: "wishesID")))
            $0.entities[2].relationships.append(.init(
                name: "wishedBy", destination: "Customer", inverse: "wishes", isToMany: true,
                storage: .joinTable(name: "Customer_wishes", column: "wishesID", inverseColumn: "customerID")))
        }),
        ModelChange(name: "new index", schema: ShopModel.modified {
            $0.entities[0].indexes = [["name"]]
            $0.entities[2].attributes[1].isIndexed = true
        }),
        ModelChange(name: "dropped index", schema: ShopModel.modified { $0.entities[1].indexes = [] }),
        ModelChange(name: "new unique constraint", schema: ShopModel.modified { $0.entities[0].uniques = [["name"]] }),
        ModelChange(name: "dropped unique constraint", schema: ShopModel.modified { $0.entities[2].uniques = [] }),
        ModelChange(name: "renamed entity", schema: ShopModel.modified { ShopModel.renameCustomer(&$0) }),
        ModelChange(name: "renamed attribute", schema: ShopModel.modified {
            $0.entities[1].attributes[0].name = "reference"
            $0.entities[1].attributes[0].renamedFrom = "number"
            $0.entities[1].indexes = [["reference"]]
        }),
        ModelChange(name: "renamed to-one relationship (its foreign key moves)", schema: ShopModel.modified {
            $0.entities[0].relationships[0].inverse = "buyer"
            $0.entities[1].relationships[0] = .init(
                name: "buyer", destination: "Customer", inverse: "purchases", isToMany: false,
                storage: .foreignKey(column: "buyerID"), renamedFrom: "customer")
        }),
        ModelChange(name: "renamed entity and to-one relationship", schema: ShopModel.modified {
            ShopModel.renameCustomer(&$0)
            $0.entities[0].relationships[0].inverse = "client"
            $0.entities[1].relationships[0] = .init(
                name: "client", destination: "Client", inverse: "purchases", isToMany: false,
                storage: .foreignKey(column: "clientID"), renamedFrom: "customer")
        }),
        ModelChange(name: "renamed many-to-many relationship (its join table moves)", schema: ShopModel.modified {
            $0.entities[1].relationships[1] = .init(
                name: "items", destination: "Product", inverse: "purchases", isToMany: true,
                storage: .joinTable(name: "Purchase_items", column: "purchaseID", inverseColumn: "itemsID"),
                renamedFrom: "products")
            $0.entities[2].relationships[0] = .init(
                name: "purchases", destination: "Purchase", inverse: "items", isToMany: true,
                storage: .joinTable(name: "Purchase_items", column: "itemsID", inverseColumn: "purchaseID"))
        }),
        ModelChange(name: "new enum case", schema: ShopModel.modified {
            $0.entities[1].attributes[2].type = .enumeration(name: "Status", cases: ["open", "held", "closed"])
        }),
        ModelChange(name: "every lightweight change at once", schema: ShopModel.modified {
            ShopModel.renameCustomer(&$0)
            $0.entities[0].attributes.insert(.init(name: "joinedAt", type: .date, defaultValue: .now), at: 0)
            $0.entities[0].attributes[1].name = "fullName"
            $0.entities[0].attributes[1].renamedFrom = "name"
            $0.entities[0].uniques = [["fullName"]]
            $0.entities[0].relationships[0].inverse = "client"
            $0.entities[1].attributes.insert(.init(name: "comment", type: .string, isOptional: true), at: 0)
            $0.entities[1].indexes = []
            $0.entities[1].relationships[0] = .init(
                name: "client", destination: "Client", inverse: "purchases", isToMany: false,
                storage: .foreignKey(column: "clientID"), renamedFrom: "customer")
            $0.entities[2].uniques = []
            $0.entities.append(EntityDescriptor(name: "Coupon", attributes: [.init(name: "code", type: .string)]))
        }),
    ]

    /// Destructive changes, applied with data loss allowed.
    static let destructive: [ModelChange] = [
        ModelChange(name: "removed attribute (columns after it move)", schema: ShopModel.modified {
            $0.entities[1].attributes.remove(at: 0)
            $0.entities[1].indexes = []
        }, allowDataLoss: true),
        ModelChange(name: "changed type", schema: ShopModel.modified {
            $0.entities[1].attributes[0].type = .string
        }, allowDataLoss: true),
        ModelChange(name: "removed entity", schema: ShopModel.modified {
            $0.entities.remove(at: 2)
            $0.entities[1].relationships.removeLast()
        }, allowDataLoss: true),
        ModelChange(name: "removed to-one relationship", schema: ShopModel.modified {
            $0.entities[0].relationships.removeAll()
            $0.entities[1].relationships.removeFirst()
        }, allowDataLoss: true),
        ModelChange(name: "optional attribute made required", schema: ShopModel.modified {
            $0.entities[0].attributes[1].isOptional = false
        }, allowDataLoss: true),
        ModelChange(name: "new required attribute without default (first column)", schema: ShopModel.modified {
            $0.entities[1].attributes.insert(.init(name: "code", type: .string), at: 0)
        }, allowDataLoss: true),
        ModelChange(name: "removed enum case", schema: ShopModel.modified {
            $0.entities[1].attributes[2].type = .enumeration(name: "Status", cases: ["open"])
        }, allowDataLoss: true),
    ]
}

/// What a same-process open guarantees (DeleteRulesAndMigrations.md): the store is not
/// handed out before its migration finished, and every one of its connections sees the
/// migrated schema. So whatever is read first, right after opening — by a reader
/// connection, through a record cursor as generated records are read — equals what a new
/// store instance on the same file reads; and rows read that way and written back change
/// nothing.
@Suite("Store migrations in the same process")
struct MigrationSameProcessTests {
    /// Every table of the store's schema (entity and join tables), each table's rows read as
    /// records.
    private func contents(_ store: Store) throws -> [String: [StoredRow]] {
        let columns = SchemaSQL(schema: store.schema).columnsByTable
        return try store.read { db in
            try Dictionary(uniqueKeysWithValues: columns.map { table, columns in
                (table, normalized(try StoredRow.all(db, table, columns: columns), table, store.schema))
            })
        }
    }

    /// `rows` of `table`, the values of attributes defaulting to `now` (set when each file
    /// was migrated) replaced by `now`.
    private func normalized(_ rows: [StoredRow], _ table: String, _ schema: SchemaDescriptor) -> [StoredRow] {
        let now = Set(schema.entity(named: table)?.attributes.filter { $0.defaultValue == .now }.map(\.name) ?? [])
        return rows.map { row in
            var row = row
            for name in now where row.values[name]?.isNull == false { row.values[name] = "now".databaseValue }
            return row
        }
    }

    @Test("right after an automatic migration, every table read first, then written back, reads as from a new store instance",
          arguments: ModelChange.lightweight + ModelChange.destructive)
    func firstReadsAndWrites(_ change: ModelChange) throws {
        let directory = try TemporaryDirectory()
        let options = Store.Options(allowDataLoss: change.allowDataLoss)
        let columns = SchemaSQL(schema: change.schema).columnsByTable

        // The v1 file, copied for every store below (close() leaves the file self-contained).
        let v1 = directory.path("v1.sqlite")
        try ShopModel.writeV1(v1)
        let copyOfV1 = { (name: String) throws -> String in
            let path = directory.path(name)
            try FileManager.default.copyItem(atPath: v1, toPath: path)
            return path
        }

        // What the migrated file holds, as a store instance opened after the migration reads it.
        let referencePath = try copyOfV1("reference.sqlite")
        try Store(schema: change.schema, path: referencePath, options: options).close()
        let reference = try contents(Store(schema: change.schema, path: referencePath))
        for (table, rows) in reference {
            #expect(rows.allSatisfy { !$0.values.values.contains("<not found>".databaseValue) && $0.values.count == columns[table]!.count },
                    "\(table) has the new model's columns")
        }
        #expect(reference.values.contains { !$0.isEmpty }, "the file keeps rows")

        // Each table as the first thing read by the instance that migrated: the first statement
        // a connection runs is the one that would see an outdated schema.
        for (index, table) in columns.keys.sorted().enumerated() {
            let path = try copyOfV1("\(index).sqlite")
            let store = try Store(schema: change.schema, path: path, options: options)
            let first = try store.read { db in try StoredRow.all(db, table, columns: columns[table]!) }
            #expect(normalized(first, table, change.schema) == reference[table], "\(table) read first")

            // Written back as a typed update writes a record it read: nothing changes.
            if let entity = change.schema.entity(named: table) {
                let names = columns[entity.name]!.filter { $0 != "id" }
                try store.write { db in
                    for row in first {
                        try db.execute(
                            sql: "UPDATE \(quoted(table)) SET " + names.map { "\(quoted($0)) = ?" }.joined(separator: ", ")
                                + " WHERE id = ?",
                            arguments: StatementArguments(names.map { row.values[$0] ?? .null } + [row.values["id"] ?? .null]))
                    }
                }
            }
            #expect(try contents(store) == reference, "after \(table) was read first and written back")
            let another = try Store(schema: change.schema, path: path)
            #expect(try contents(another) == reference, "a new instance on the same file")
        }
    }

    @Test("the asynchronous read of a new instance's first connection sees the migrated schema too")
    func asyncFirstRead() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shop.sqlite")
        try ShopModel.writeV1(path)
        let change = ModelChange.lightweight.first { $0.name == "renamed entity and to-one relationship" }!
        let store = try Store(schema: change.schema, path: path)
        let columns = SchemaSQL(schema: change.schema).columnsByTable["Purchase"]!
        let purchases = try await store.read { db in try StoredRow.all(db, "Purchase", columns: columns) }
        #expect(purchases.map { $0.values["clientID"] ?? .null } == [1, 1, 3, nil].map { $0.databaseValue })
        #expect(purchases.map { $0.values["number"] ?? .null } == [100, 101, 102, 103].map { $0.databaseValue })
    }

    // MARK: - Generated-style entities

    /// NotesModel as an earlier version: `Notebook` was `Folder`, `Note.body` was `text`,
    /// `Note.notebook` was `folder`, and `Notebook.color` did not exist.
    static let renamedNotes = SchemaDescriptor(name: "NotesModel", entities: [
        EntityDescriptor(
            name: "Folder",
            attributes: [
                .init(name: "name", type: .string),
                .init(name: "createdAt", type: .date, defaultValue: .now),
                .init(name: "position", type: .int, defaultValue: .value(0.databaseValue), isIndexed: true),
            ],
            relationships: [
                .init(name: "notes", destination: "Note", inverse: "folder", isToMany: true, deleteRule: .cascade,
                      storage: .inverseForeignKey),
            ],
            uniques: [["name"]]),
        EntityDescriptor(
            name: "Note",
            attributes: [
                .init(name: "title", type: .string),
                .init(name: "text", type: .string, defaultValue: .value("".databaseValue)),
                .init(name: "pinned", type: .bool, defaultValue: .value(false.databaseValue)),
                .init(name: "priority", type: .enumeration(name: "Priority", cases: ["low", "normal", "high"]),
                      defaultValue: .value("normal".databaseValue)),
                .init(name: "updatedAt", type: .date),
            ],
            relationships: [
                .init(name: "folder", destination: "Folder", inverse: "notes", isToMany: false,
                      storage: .foreignKey(column: "folderID")),
                .init(name: "tags", destination: "Tag", inverse: "notes", isToMany: true,
                      storage: .joinTable(name: "Note_tags", column: "noteID", inverseColumn: "tagID")),
            ]),
        NotesModel.schema.entities[2],
    ])

    /// NotesModel as an earlier version with attributes the current one dropped, placed so
    /// that every later column moves: `Notebook.archived` first, `Note.legacy` first.
    static let droppedNotes = {
        var schema = NotesModel.schema
        schema.entities[0].attributes.insert(.init(name: "archived", type: .bool, defaultValue: .value(false.databaseValue)), at: 0)
        schema.entities[1].attributes.insert(.init(name: "legacy", type: .int, defaultValue: .value(7.databaseValue)), at: 0)
        return schema
    }()

    /// NotesModel as the app declares it after the renames.
    static let currentNotes = {
        var schema = NotesModel.schema
        schema.entities[0].renamedFrom = "Folder"
        schema.entities[1].attributes[1].renamedFrom = "text"
        schema.entities[1].relationships[0].renamedFrom = "folder"
        return schema
    }()

    private func writeOldNotes(_ path: String, renamed: Bool) throws {
        let store = try Store(schema: renamed ? Self.renamedNotes : Self.droppedNotes, path: path)
        let (notebook, body, notebookID) = renamed ? ("Folder", "text", "folderID") : ("Notebook", "body", "notebookID")
        try store.write { db in
            try db.execute(sql: """
                INSERT INTO \(notebook) (id, name, position) VALUES (1, 'Work', 1), (2, 'Home', 0), (3, 'Empty', 2);
                INSERT INTO Note (id, title, \(body), pinned, priority, updatedAt, \(notebookID)) VALUES
                    (1, 'plan', 'q3', 1, 'high', '2026-01-02 03:04:05.000', 1),
                    (2, 'milk', '2 l', 0, 'low', '2026-01-03 03:04:05.000', 2),
                    (3, 'call', '', 0, 'normal', '2026-01-04 03:04:05.000', 1),
                    (4, 'loose', 'no notebook', 0, 'normal', '2026-01-05 03:04:05.000', NULL);
                INSERT INTO Tag (id, name) VALUES (1, 'urgent');
                INSERT INTO Note_tags (noteID, tagID) VALUES (1, 1), (2, 1);
                """)
        }
        try store.close()
    }

    /// What the file holds after the migration, read by generated-style entities.
    private struct Expected {
        var notes: [String]
        var notebooks: [String]
        var sections: [String]
    }

    private func describe(_ notes: [Note]) -> [String] {
        notes.map { "\($0.id.rawValue) \($0.title) '\($0.body)' \($0.pinned) \($0.priority) \($0.notebookID.map { "\($0.rawValue)" } ?? "nil")" }
    }

    private func describe(_ snapshot: ResultsSnapshot<Note, Notebook>) -> [String] {
        snapshot.sections.map { section in
            "\(section.value.object?.name ?? "-"): " + section.items.map(\.title).joined(separator: ", ")
        }
    }

    private static let expectedNotes = [
        "1 plan 'q3' true high 1", "2 milk '2 l' false low 2", "3 call '' false normal 1", "4 loose 'no notebook' false normal nil",
    ]

    enum FirstRead: String, CaseIterable, Sendable {
        case typedFetch, typedRequest, resultsController, typedFetchOne
    }

    @Test("generated-style entities right after renames of an entity, an attribute and a relationship",
          arguments: FirstRead.allCases)
    func entitiesAfterRenames(_ firstRead: FirstRead) throws {
        try checkEntities(renamed: true, firstRead: firstRead)
    }

    @Test("generated-style entities right after a destructive migration that moved every column",
          arguments: FirstRead.allCases)
    func entitiesAfterDroppedAttributes(_ firstRead: FirstRead) throws {
        try checkEntities(renamed: false, firstRead: firstRead)
    }

    private func checkEntities(renamed: Bool, firstRead: FirstRead) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        try writeOldNotes(path, renamed: renamed)
        let schema = renamed ? Self.currentNotes : NotesModel.schema
        let store = try Store(schema: schema, path: path, options: .init(allowDataLoss: !renamed))
        let queue = DispatchQueue(label: "strata.tests.migration")
        let expectedSections = ["Home: milk", "Work: plan, call", "Empty: "]

        // The first read of the migrated store, in one of the ways an app reads first.
        switch firstRead {
        case .typedFetch:
            #expect(describe(try store.read { db in try db.fetchAll(Note.self) }) == Self.expectedNotes)
        case .typedRequest:
            let pinnedFirst = try store.read { db in try db.fetchAll(Note.Fetches.byNotebook) }
            #expect(describe(pinnedFirst) == [Self.expectedNotes[0], Self.expectedNotes[2], Self.expectedNotes[3], Self.expectedNotes[1]])
        case .resultsController:
            let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: queue)
            #expect(describe(controller.snapshot) == expectedSections)
        case .typedFetchOne:
            #expect(try store.read { db in try db.fetchOne(Note.self, id: Note.ID(3)) }?.notebookID == Notebook.ID(1))
        }
        #expect(describe(try store.read { db in try db.fetchAll(Note.self) }) == Self.expectedNotes)
        #expect(try store.read { db in try db.fetchAll(Notebook.self) }.map(\.name) == ["Work", "Home", "Empty"])

        // Typed updates of what was read keep every other value, foreign keys included.
        try store.write { db in
            for var note in try db.fetchAll(Note.self) {
                note.title += "!"
                try db.update(note)
            }
        }
        let updated = Self.expectedNotes.map { $0.replacingOccurrences(of: " '", with: "! '") }
        #expect(describe(try store.read { db in try db.fetchAll(Note.self) }) == updated)
        let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: queue)
        #expect(describe(controller.snapshot) == ["Home: milk!", "Work: plan!, call!", "Empty: "])

        // A new instance on the same file reads the same.
        let another = try Store(schema: schema, path: path)
        #expect(describe(try another.read { db in try db.fetchAll(Note.self) }) == updated)
        let links = try another.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT noteID, tagID FROM Note_tags ORDER BY noteID").map { [$0[0] as Int64, $0[1] as Int64] }
        }
        #expect(links == [[1, 1], [2, 1]])
    }
}
