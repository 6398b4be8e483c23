import Foundation
import GRDB
import Strata
import StrataTestSupport
import Testing

// Rows that another program wrote: every SQLite storage class in every attribute type of
// the generated `Item` (EdgeCases model, which has every type), read by typed fetches and
// by results controllers. The expectation is written here, from the documented contract
// (`ValueDecodingError`, Docs/Decisions.md "Reading never traps"), not from the decoder:
// a value is read exactly when its storage class is the one Strata writes for the type and
// the value fits; otherwise the read throws an error naming table, row, column and value.

/// What a column of `Item` holds.
private enum ColumnKind {
    case string, int64, int32, int16, double, float, bool, date, uuid, data, decimal, url
    case enumeration(Set<String>)
    case foreignKey
}

private struct Column {
    var name: String
    var kind: ColumnKind
    var isOptional: Bool
}

private let itemColumns: [Column] = [
    Column(name: "name", kind: .string, isOptional: false),
    Column(name: "default", kind: .string, isOptional: false),
    Column(name: "class", kind: .enumeration(["default", "class", "plain"]), isOptional: false),
    Column(name: "count", kind: .int64, isOptional: false),
    Column(name: "small", kind: .int16, isOptional: false),
    Column(name: "medium", kind: .int32, isOptional: true),
    Column(name: "ratio", kind: .double, isOptional: false),
    Column(name: "weight", kind: .float, isOptional: false),
    Column(name: "flag", kind: .bool, isOptional: false),
    Column(name: "stamp", kind: .date, isOptional: false),
    Column(name: "token", kind: .uuid, isOptional: false),
    Column(name: "blob", kind: .data, isOptional: true),
    Column(name: "amount", kind: .decimal, isOptional: false),
    Column(name: "link", kind: .url, isOptional: true),
    Column(name: "level", kind: .enumeration(["low", "high"]), isOptional: true),
    Column(name: "uniqueCode", kind: .string, isOptional: true),
    Column(name: "storeID", kind: .foreignKey, isOptional: true),
]

/// SQL literals of every storage class, with edge values.
private let literals: [String] = [
    "NULL", "0", "1", "2", "-1", "40000", "3000000000", "9223372036854775807", "-9223372036854775808",
    "1.5", "-0.0", "3.0e300", "0.1", "''", "'text'", "'class'", "'high'", "'42'", "'12abc'",
    "'2026-01-02 03:04:05.678'", "'2026-01-02'", "'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'",
    "'https://example.com/a b'", "'https://example.com/a'", "X''", "X'00FF'", "X'E621E1F8C36C495A93FC0C247A3E6E5F'",
]

/// The reference: whether a value of `storage` (as SQLite reports it back) reads as `kind`.
private func reads(_ value: DatabaseValue, as column: Column) -> Bool {
    switch value.storage {
    case .null:
        return column.isOptional
    case .int64(let int):
        switch column.kind {
        case .int64, .double, .float, .decimal, .foreignKey: return true
        case .int32: return Int32(exactly: int) != nil
        case .int16: return Int16(exactly: int) != nil
        case .bool: return int == 0 || int == 1
        default: return false
        }
    case .double(let real):
        switch column.kind {
        case .double, .decimal: return true
        case .float: return Float(real).isFinite
        default: return false
        }
    case .string(let text):
        switch column.kind {
        case .string: return true
        case .enumeration(let cases): return cases.contains(text)
        case .date: return text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?)?/) != nil
        case .uuid: return UUID(uuidString: text) != nil
        case .url: return URL(string: text) != nil
        case .decimal:
            // A whole decimal number within Decimal's range (exponents up to about 127).
            return text.wholeMatch(of: /[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?/) != nil
                && Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) != nil
        default: return false
        }
    case .blob(let data):
        switch column.kind {
        case .data: return true
        case .uuid: return data.count == 16
        default: return false
        }
    }
}

/// The value an accepted stored value must read as, in the type's own storage form.
private func expectedReading(_ value: DatabaseValue, as column: Column) -> DatabaseValue? {
    switch (value.storage, column.kind) {
    case (.null, _): return .null
    case (.int64(let int), .double): return Double(int).databaseValue
    case (.int64(let int), .float): return Double(Float(int)).databaseValue
    case (.double(let real), .float): return Double(Float(real)).databaseValue
    case (.string, .date), (.string, .uuid), (.blob, .uuid), (_, .decimal), (.string, .url): return nil  // parsed forms
    default: return value
    }
}

/// The value of `column` in a decoded item, as a database value.
private func value(of item: Item, _ column: String) -> DatabaseValue {
    switch column {
    case "name": item.name.databaseValue
    case "default": item.default.databaseValue
    case "class": item.class.databaseValue
    case "count": item.count.databaseValue
    case "small": item.small.databaseValue
    case "medium": item.medium.databaseValue
    case "ratio": item.ratio.databaseValue
    case "weight": Double(item.weight).databaseValue
    case "flag": item.flag.databaseValue
    case "stamp": item.stamp.databaseValue
    case "token": item.token.databaseValue
    case "blob": item.blob.databaseValue
    case "amount": item.amount.databaseValue
    case "link": item.link.databaseValue
    case "level": item.level.databaseValue
    case "uniqueCode": item.uniqueCode.databaseValue
    case "storeID": item.storeID.databaseValue
    default: fatalError("unknown column \(column)")
    }
}

private enum EdgeCasesFixtures {
    /// A store with a section, a store whose id is 7, and one valid item (id 1).
    static func store() throws -> Strata.Store {
        let store = try Strata.Store.inMemory(schema: EdgeModel.schema)
        try store.write { db in
            let section = try db.insert(Section(title: "s"))
            try db.execute(sql: "INSERT INTO Store (id, name) VALUES (7, 'shop')")
            try db.insert(Item(name: "valid", sectionID: section.id))
        }
        return store
    }
}

@Suite("Stored values another program wrote")
struct StoredValueTests {
    @Test("every storage class in every attribute type: read exactly, or a ValueDecodingError naming it")
    func everyStorageClassInEveryType() throws {
        let store = try EdgeCasesFixtures.store()
        let original = try store.read { db in try Row.fetchOne(db, sql: "SELECT * FROM Item WHERE id = 1")! }
        var checked = 0, refused = 0
        for column in itemColumns {
            for literal in literals {
                let quotedColumn = "\"\(column.name)\""
                do {
                    try store.writer.write { db in
                        try db.execute(sql: "UPDATE Item SET \(quotedColumn) = \(literal) WHERE id = 1")
                    }
                } catch {
                    continue  // NOT NULL, foreign key: SQLite itself refuses the value
                }
                let stored = try store.read { db in
                    try DatabaseValue.fetchOne(db, sql: "SELECT \(quotedColumn) FROM Item WHERE id = 1")!
                }
                checked += 1
                let outcome = Result { try store.read { db in try db.fetchOne(Item.self, id: Item.ID(1)) } }
                if reads(stored, as: column) {
                    let item = try #require(try outcome.get(), "\(column.name) = \(literal) (\(stored))")
                    if let expected = expectedReading(stored, as: column) {
                        #expect(value(of: item, column.name) == expected, "\(column.name) = \(literal)")
                    }
                } else {
                    refused += 1
                    #expect(throws: ValueDecodingError(
                        entity: "Item", id: 1, column: column.name, storedValue: stored,
                        expectedType: String(describing: type(ofColumn: column)))
                    ) { try outcome.get() }
                    // The flat fetch and the request fetch report it too.
                    #expect(throws: ValueDecodingError.self) { try store.read { db in try db.fetchAll(Item.self) } }
                    #expect(throws: ValueDecodingError.self) { try store.fetchAll(Item.Fetches.all) }
                }
                // Put the original value back.
                try store.writer.write { db in
                    try db.execute(sql: "UPDATE Item SET \(quotedColumn) = ? WHERE id = 1", arguments: [original[column.name] as DatabaseValue])
                }
            }
        }
        #expect(checked > 300)
        #expect(refused > 150)
    }

    private func type(ofColumn column: Column) -> Any.Type {
        switch column.kind {
        case .string: String.self
        case .int64: Int.self
        case .int32: Int32.self
        case .int16: Int16.self
        case .double: Double.self
        case .float: Float.self
        case .bool: Bool.self
        case .date: Foundation.Date.self
        case .uuid: UUID.self
        case .data: Data.self
        case .decimal: Decimal.self
        case .url: URL.self
        case .enumeration(let cases): cases.contains("class") ? Kind.self : Level.self
        case .foreignKey: Store.ID.self
        }
    }

    @Test("text another program stored with a NUL character is read in full, never cut; writing it back is refused")
    func textWithNUL() throws {
        let store = try EdgeCasesFixtures.store()
        try store.writer.write { db in
            try db.execute(sql: "UPDATE Item SET name = CAST(X'61006200' AS TEXT), uniqueCode = CAST(X'00' AS TEXT) WHERE id = 1")
        }
        let item = try #require(try store.fetchOne(Item.self, id: Item.ID(1)))
        #expect(item.name == "a\u{0}b\u{0}" && item.uniqueCode == "\u{0}")
        #expect(Array(item.name.utf8) == [0x61, 0, 0x62, 0])
        // Updating another attribute re-encodes every value: the NUL text is refused rather
        // than written back cut (the stored value stays as it was).
        var edited = item
        edited.count = 5
        #expect(throws: InvalidValueError(entity: "Item", attribute: "name", reason: .nulCharacter)) {
            try store.update(edited)
        }
        // In an enumeration column, text with a NUL is not a case.
        try store.writer.write { db in try db.execute(sql: "UPDATE Item SET class = CAST(X'706C61696E00' AS TEXT) WHERE id = 1") }
        let error = try #require(throws: ValueDecodingError.self) { try store.fetchOne(Item.self, id: Item.ID(1)) }
        #expect(error.column == "class" && error.storedValue == "plain\u{0}".databaseValue)
    }

    @Test("the error names the table, the row id, the column and the value")
    func errorMessage() throws {
        let store = try EdgeCasesFixtures.store()
        try store.writer.write { db in try db.execute(sql: "UPDATE Item SET class = 'urgent' WHERE id = 1") }
        let error = try #require(throws: ValueDecodingError.self) { try store.read { db in try db.fetchAll(Item.self) } }
        #expect(error.description == "cannot read Item.class of the row with id 1: the stored text 'urgent' is not a valid Kind")
        #expect(error.localizedDescription == error.description)
    }

    @Test("a results controller refuses to open on a bad row, reports a bad row a commit brings, and recovers")
    func controllersSurfaceTheError() throws {
        let store = try EdgeCasesFixtures.store()
        try store.writer.write { db in try db.execute(sql: "UPDATE Item SET flag = 5 WHERE id = 1") }
        #expect(throws: ValueDecodingError.self) {
            _ = try ResultsController(store: store, request: Item.Fetches.all, deliveryQueue: DispatchQueue(label: "t"))
        }
        try store.writer.write { db in try db.execute(sql: "UPDATE Item SET flag = 1 WHERE id = 1") }

        let queue = DispatchQueue(label: "delivery")
        let controller = try ResultsController(store: store, request: Item.Fetches.all, deliveryQueue: queue)
        let log = DeliveryRecorder<Item, NoSection>(recording: .failures)
        controller.delegate = log
        try store.writer.write { db in try db.execute(sql: "UPDATE Item SET level = 'medium' WHERE id = 1") }
        controller.waitForDeliveries()
        let error = try #require(log.errors.first as? ValueDecodingError)
        #expect(error.entity == "Item" && error.id == 1 && error.column == "level" && error.storedValue == "medium".databaseValue)
        #expect(controller.snapshot.sections.flatMap(\.items).map(\.level) == [nil], "the last good state stays")

        // Fixed by a later commit: the controller refetches and equals a fresh fetch.
        try store.writer.write { db in try db.execute(sql: "UPDATE Item SET level = 'high' WHERE id = 1") }
        controller.waitForDeliveries()
        #expect(controller.snapshot.sections.flatMap(\.items) == (try store.fetchAll(Item.Fetches.all)))
        #expect(log.errors.count == 1)
    }

    /// Random raw-SQL rows, typed fetches and a live controller: never a trap, and every
    /// outcome is the one the reference gives. `STRATA_FUZZ_ITERATIONS` runs longer;
    /// `STRATA_FUZZ_SEED` replays a seed.
    @Test("fuzz: random raw rows never trap a typed fetch or a controller")
    func fuzzRawRows() throws {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["STRATA_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 150
        let seed = environment["STRATA_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        var random = SplitMix(seed: seed)
        let store = try EdgeCasesFixtures.store()
        let queue = DispatchQueue(label: "fuzz")
        let controller = try ResultsController(store: store, request: Item.Fetches.all, deliveryQueue: queue)
        let log = DeliveryRecorder<Item, NoSection>(recording: .failures)
        controller.delegate = log
        let sectionID = try store.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM Section")! }

        for step in 0..<iterations {
            // A random write: a new row, or one column of an existing row.
            let column = itemColumns[Int(random.next() % UInt64(itemColumns.count))]
            let literal = Bool.random(using: &random) ? literals.randomElement(using: &random)! : randomLiteral(&random)
            let ids = try store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Item") }
            do {
                try store.writer.write { db in
                    if ids.count < 6 || Bool.random(using: &random) && ids.count < 30 {
                        try db.execute(
                            sql: "INSERT INTO Item (name, sectionID, token, \"\(column.name)\") VALUES (?, ?, X'E621E1F8C36C495A93FC0C247A3E6E5F', \(literal))",
                            arguments: ["row \(step)", sectionID])
                    } else {
                        try db.execute(
                            sql: "UPDATE Item SET \"\(column.name)\" = \(literal) WHERE id = ?",
                            arguments: [ids.randomElement(using: &random)!])
                    }
                }
            } catch {
                continue
            }
            // Which rows does the reference refuse?
            let rows = try store.read { db in try Row.fetchAll(db, sql: "SELECT * FROM Item ORDER BY id") }
            let bad = rows.filter { row in
                itemColumns.contains { !reads(row[$0.name] as DatabaseValue, as: $0) }
            }
            let fetched = Result { try store.read { db in try db.fetchAll(Item.self) } }
            if bad.isEmpty {
                #expect((try? fetched.get())?.count == rows.count, "seed \(seed), step \(step)")
            } else {
                let error = try? #require(throws: ValueDecodingError.self, "seed \(seed), step \(step)") { try fetched.get() }
                #expect(error.map { e in bad.contains { ($0["id"] as Int64) == e.id } } ?? false, "seed \(seed), step \(step)")
                // Repair the bad rows, as an app would, so that later steps see live updates.
                try store.writer.write { db in
                    for row in bad {
                        try db.execute(
                            sql: "UPDATE Item SET name = 'fixed ' || id, \"default\" = '', class = 'plain', count = 0, small = 0, medium = NULL, ratio = 0, weight = 0, flag = 0, stamp = '2026-01-02 03:04:05.678', token = X'E621E1F8C36C495A93FC0C247A3E6E5F', blob = NULL, amount = 0, link = NULL, level = NULL, uniqueCode = NULL, storeID = NULL WHERE id = ?",
                            arguments: [row["id"] as Int64])
                    }
                }
            }
            controller.waitForDeliveries()
        }
        // After the last repair, the next commit brings the controller back in step.
        try store.write { db in try db.execute(sql: "UPDATE Item SET count = count WHERE id = 1") }
        controller.waitForDeliveries()
        let fresh = try store.fetchAll(Item.Fetches.all)
        #expect(controller.snapshot.sections.flatMap(\.items) == fresh, "seed \(seed)")
        #expect(log.errors.allSatisfy { $0 is ValueDecodingError }, "seed \(seed): \(log.errors)")
    }

    private func randomLiteral(_ random: inout SplitMix) -> String {
        switch random.next() % 4 {
        case 0: return String(Int64(bitPattern: random.next()))
        case 1: return String(Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF))
        case 2: return "'" + String((0..<Int(random.next() % 6)).map { _ in "aZé1 -:.".randomElement(using: &random)! }) + "'"
        default: return "X'" + (0..<Int(random.next() % 20)).map { _ in String(format: "%02X", Int(random.next() % 256)) }.joined() + "'"
        }
    }
}
