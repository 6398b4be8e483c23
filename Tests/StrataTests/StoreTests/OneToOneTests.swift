import Foundation
import GRDB
import Testing
@testable import Strata

/// `Person.card` ↔ `Card.owner`, a one-to-one whose key the tests put on either side, required
/// or not, with the delete rule they choose on both sides.
struct OneToOneCase: Sendable, CustomTestStringConvertible {
    var keyOnCard: Bool
    var required: Bool
    var rule: DeleteRule

    static let all: [OneToOneCase] = [true, false].flatMap { keyOnCard in
        [false, true].flatMap { required in
            DeleteRule.allCases.map { OneToOneCase(keyOnCard: keyOnCard, required: required, rule: $0) }
        }
    }

    var testDescription: String {
        "key on \(keyOnCard ? "Card.owner" : "Person.card"), \(required ? "required" : "optional"), \(rule)"
    }

    /// The table holding the key, its column and relationship; the destination; the inverse.
    var table: String { keyOnCard ? "Card" : "Person" }
    var column: String { keyOnCard ? "ownerID" : "cardID" }
    var relationship: String { keyOnCard ? "owner" : "card" }
    var destination: String { keyOnCard ? "Person" : "Card" }
    var inverse: String { keyOnCard ? "Person.card" : "Card.owner" }

    var schema: SchemaDescriptor {
        func side(_ name: String, _ destination: String, _ inverse: String, key: String?) -> RelationshipDescriptor {
            .init(
                name: name, destination: destination, inverse: inverse, isToMany: false,
                isRequired: key != nil && required, deleteRule: rule,
                storage: key.map { .foreignKey(column: $0) } ?? .inverseForeignKey)
        }
        return SchemaDescriptor(name: "OneToOneModel", entities: [
            EntityDescriptor(
                name: "Person", attributes: [.init(name: "name", type: .string)],
                relationships: [side("card", "Card", "owner", key: keyOnCard ? nil : "cardID")]),
            EntityDescriptor(
                name: "Card", attributes: [.init(name: "name", type: .string)],
                relationships: [side("owner", "Person", "card", key: keyOnCard ? "ownerID" : nil)]),
        ])
    }

    /// Whether the key is checked at commit (required, with a nullify inverse): 0 is "not set".
    var isCheckedAtCommit: Bool { required && rule == .nullify }

    func error(id: Int64?) -> RuleViolationError {
        RuleViolationError(entity: table, id: id, member: relationship, rule: .oneToOne(inverse))
    }
}

/// One-to-ones stay one-to-one on every write path (Docs/Decisions.md, "One-to-ones are kept
/// one-to-one"), whichever side holds the key, required or not, whatever the delete rules.
@Suite("One-to-one relationships")
struct OneToOneTests {
    func failure(_ body: () throws -> Void) -> (any Error)? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// Two destinations (1, 2), and holders 10 → 1 and 11 → 2.
    func populate(_ db: Database, _ c: OneToOneCase) throws {
        try db.execute(sql: "INSERT INTO \(c.destination) (id, name) VALUES (1, 'one'), (2, 'two')")
        try db.execute(sql: "INSERT INTO \(c.table) (id, name, \(c.column)) VALUES (10, 'a', 1), (11, 'b', 2)")
    }

    func keys(_ store: Store, _ c: OneToOneCase) throws -> [Int64?] {
        try store.read { db in try Int64?.fetchAll(db, sql: "SELECT \(c.column) FROM \(c.table) ORDER BY id") }
    }

    @Test("a second object for a taken destination is refused, naming it", arguments: OneToOneCase.all)
    func secondObjectIsRefused(_ c: OneToOneCase) throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: c.schema, path: directory.path("one.sqlite"))
        try store.write { db in try populate(db, c) }

        // Raw SQL inside store.write: an insert (its id named when the statement gives it),
        // an update, and INSERT OR REPLACE of another row.
        #expect(failure {
            try store.write { db in try db.execute(sql: "INSERT INTO \(c.table) (name, \(c.column)) VALUES ('c', 1)") }
        } as? RuleViolationError == c.error(id: nil))
        #expect(failure {
            try store.write { db in try db.execute(sql: "INSERT INTO \(c.table) (id, name, \(c.column)) VALUES (12, 'c', 1)") }
        } as? RuleViolationError == c.error(id: 12))
        #expect(failure {
            try store.write { db in try db.execute(sql: "UPDATE \(c.table) SET \(c.column) = 1 WHERE id = 11") }
        } as? RuleViolationError == c.error(id: 11))
        #expect(failure {
            try store.write { db in try db.execute(sql: "INSERT OR REPLACE INTO \(c.table) (id, name, \(c.column)) VALUES (11, 'b', 1)") }
        } as? RuleViolationError == c.error(id: 11))
        // Raw SQL on the store's writer directly: GRDB's error converts.
        let direct = failure {
            try store.writer.write { db in try db.execute(sql: "UPDATE \(c.table) SET \(c.column) = 2 WHERE id = 10") }
        }
        #expect(direct.flatMap { RuleViolationError($0) } == c.error(id: 10))
        // Another connection: the unique index stored in the file.
        let queue = try DatabaseQueue(path: directory.path("one.sqlite"))
        let other = failure {
            try queue.write { db in try db.execute(sql: "INSERT INTO \(c.table) (name, \(c.column)) VALUES ('c', 1)") }
        } as? DatabaseError
        #expect(other?.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
        try queue.close()

        #expect(try keys(store, c) == [1, 2])
        // Swapping partners through a free destination, in one transaction, is fine.
        try store.write { db in
            try db.execute(sql: "INSERT INTO \(c.destination) (id, name) VALUES (3, 'three')")
            try db.execute(sql: "UPDATE \(c.table) SET \(c.column) = 3 WHERE id = 10")
            try db.execute(sql: "UPDATE \(c.table) SET \(c.column) = 1 WHERE id = 11")
            try db.execute(sql: "UPDATE \(c.table) SET \(c.column) = 2 WHERE id = 10")
        }
        #expect(try keys(store, c) == [2, 1])
        try store.close()
    }

    @Test("delete rules still apply to both partners at once", arguments: OneToOneCase.all)
    func deleteRules(_ c: OneToOneCase) throws {
        let store = try Store.inMemory(schema: c.schema)
        try store.write { db in try populate(db, c) }
        let result = Result { try store.write { db in try db.execute(sql: "DELETE FROM \(c.destination)") } }
        switch (c.rule, c.required) {
        case (.nullify, false):
            #expect(try keys(store, c) == [nil, nil])
        case (.nullify, true):
            // Both keys are 0 for a while (the unique index leaves 0 out); the commit names the first.
            #expect(throws: RuleViolationError(entity: c.table, id: 10, member: c.relationship, rule: .required)) { try result.get() }
        case (.cascade, _):
            #expect(try keys(store, c) == [])
        case (.deny, _):
            #expect(throws: DeleteDeniedError(entity: c.destination, relationship: c.keyOnCard ? "card" : "owner")) { try result.get() }
        case (.noAction, _):
            #expect(try keys(store, c) == [1, 2], "the references dangle")
        }
    }

    @Test("an older file: duplicates are refused, or deleted with allowDataLoss; without them it opens", arguments: OneToOneCase.all)
    func olderFile(_ c: OneToOneCase) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("older.sqlite")
        try Store(schema: c.schema, path: path).close()
        // As an earlier version left the file: a plain index on the key, and rows sharing a
        // destination.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "DROP INDEX strata_unique_\(c.table)_\(c.column)")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS strata_index_\(c.table)_\(c.column) ON \(c.table)(\(c.column))")
            try populate(db, c)
            try db.execute(sql: "INSERT INTO \(c.table) (id, name, \(c.column)) VALUES (12, 'c', 1), (13, 'd', 2), (14, 'e', 1)")
        }
        try queue.close()
        #expect(throws: MigrationError.ruleViolations([c.error(id: 12), c.error(id: 13), c.error(id: 14)])) {
            try Store(schema: c.schema, path: path)
        }
        // With data loss allowed the later objects are deleted with their delete rules: a
        // cascade takes their destinations (and so, here, every object), a deny refuses.
        let opened = Result { try Store(schema: c.schema, path: path, options: Store.Options(allowDataLoss: true)) }
        switch c.rule {
        case .deny:
            #expect(throws: (any Error).self) { try opened.get() }
            #expect(opened.failure.flatMap { DeleteDeniedError($0) } != nil)
        case .cascade:
            let store = try opened.get()
            #expect(try store.read { db in try db.ids(c.table) + db.ids(c.destination) } == [])
            try store.close()
        case .nullify, .noAction:
            let store = try opened.get()
            #expect(try store.read { db in try db.ids(c.table) } == [10, 11])
            #expect(try store.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE tbl_name = ? AND type = 'index' ORDER BY name", arguments: [c.table])
            } == (c.isCheckedAtCommit
                ? ["strata_index_\(c.table)_\(c.column)", "strata_unique_\(c.table)_\(c.column)"]
                : ["strata_unique_\(c.table)_\(c.column)"]))
            #expect(throws: c.error(id: 10)) {
                try store.write { db in try db.execute(sql: "UPDATE \(c.table) SET \(c.column) = 2 WHERE id = 10") }
            }
            try store.close()
        }
        // A file without duplicates opens as it is, and gets the index.
        let clean = directory.path("clean.sqlite")
        try Store(schema: c.schema, path: clean).close()
        let cleanQueue = try DatabaseQueue(path: clean)
        try cleanQueue.write { db in
            try db.execute(sql: "DROP INDEX strata_unique_\(c.table)_\(c.column)")
            try populate(db, c)
        }
        try cleanQueue.close()
        let reopened = try Store(schema: c.schema, path: clean)
        #expect(try keys(reopened, c) == [1, 2])
        #expect(try reopened.read { db in try db.indexExists("strata_unique_\(c.table)_\(c.column)") })
        try reopened.close()
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

private extension Database {
    func indexExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(self, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?)", arguments: [name]) ?? false
    }
}
