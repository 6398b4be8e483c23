import Foundation
import Strata
import Testing

// The sources in Generated/ are symlinks to the reference output of StrataCodegenTests for
// Resources/Shadows.yaml, whose entities and enums are named like types that `import Strata`
// brings into an app's code: GRDB's (`Row`, `Database`, `Column`, `Table`, `Record`,
// `Statement`, `SQL`, `Configuration`, and every GRDB type the generated code names), Strata's
// (`Store`, `TypedColumn`, `ToOne`, `EntityID`, …) and Foundation's (`UUID`, `URL`, …). This
// target is the app's target that generates that model: that it compiles shows the generated
// code names every library type with its module. In this file, the app's code, the bare names
// are the model's, and the library's types are written as the model's warnings say:
// `GRDB.Row`, `GRDB.Database`, `Strata.Store`, `Foundation.UUID`.

@Suite struct ShadowedNamesTests {
    @Test func theModelsTypesAndTheLibrariesTypesAreBothAtHand() throws {
        let store = try Strata.Store.inMemory(schema: ShadowsModel.schema)
        let token = Foundation.UUID()
        let (database, row) = try store.write { (db: GRDB.Database) in
            let statement = try db.insert(Statement(name: "select"))
            let database = try db.insert(Database(name: "main", configuration: .dark, flag: .second, statementID: statement.id))
            let column = try db.insert(Column(name: "A"))
            let table = try db.insert(Table(name: "items"))
            try db.link(database.id, Database.tables, table.id)
            let row = try db.insert(Row(
                cells: 3, amount: Foundation.Decimal(string: "1.25")!, link: Foundation.URL(string: "https://example.com"),
                token: token, tags: ["x", "y"], databaseID: database.id, columnID: column.id))
            _ = try db.insert(Row(cells: 1, databaseID: database.id))
            _ = try db.insert(UUID(value: token))
            _ = try db.insert(Store(name: "a store"))
            return (database, row)
        }
        try store.read { (db: GRDB.Database) in
            // The model's types, through the typed API.
            let read = try #require(try db.fetchOne(Row.self, id: row.id))
            #expect(read == row)
            #expect(read.tags == ["x", "y"])
            #expect(try db.fetchOne(Database.self, id: database.id)?.configuration == .dark)
            #expect(try db.fetchAll(Database.Fetches.named(prefix: "ma", table: "items")).map(\.id) == [database.id])
            #expect(try db.fetchAll(Row.Fetches.byCells(minimum: 2)).map(\.id) == [row.id])
            #expect(try db.fetchAll(Row.Fetches.byColumn).map(\.cells).sorted() == [1, 3])
            #expect(try db.fetchAll(Database.rows, of: database.id).map(\.cells) == [3, 1])
            #expect(try db.fetchOne(Row.column, of: row.id)?.name == "A")
            #expect(try db.fetchOne(Statement.database, of: database.statementID!)?.id == database.id)
            #expect(try db.fetchAll(Row.self, where: Row.column.name == "A").map(\.id) == [row.id])
            #expect(try db.fetchAll(UUID.self).map(\.value) == [token])
            // GRDB's types, qualified: raw SQL, rows, columns, values.
            let rows = try GRDB.Row.fetchAll(db, sql: "SELECT cells FROM Row ORDER BY cells")
            #expect(rows.map { $0["cells"] as Int } == [1, 3])
            #expect(try Row.filter(GRDB.Column("cells") > 2).fetchCount(db) == 1)
            let value: GRDB.DatabaseValue = 3.databaseValue
            let query: GRDB.SQL = "SELECT COUNT(*) FROM Row WHERE cells = \(value)"
            #expect(try GRDB.SQLRequest<Int>(literal: query).fetchOne(db) == 1)
            // GRDB's associations of the model's types, under their generated names.
            #expect(try Database.including(all: Database.Associations.tables).asRequest(of: GRDB.Row.self)
                .fetchOne(db)?.prefetchedRows["tables"]?.count == 1)
            #expect(try Statement.joining(required: Statement.Associations.database).fetchCount(db) == 1)
        }
        // A rule of the model holds: `cells` is at least 0.
        #expect(throws: Strata.RuleViolationError.self) {
            try store.write { db in _ = try db.insert(Row(cells: -1)) }
        }
    }
}
