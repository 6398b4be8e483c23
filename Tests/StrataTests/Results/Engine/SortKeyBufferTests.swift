import Foundation
import GRDB
import GRDBSQLite
import StrataTestSupport
import Testing

@testable import Strata

/// The byte keys that let a fetch of all the results sort its rows itself, against SQLite's
/// own `ORDER BY` of the same rows: random values of every storage class in columns without
/// a type (so that SQLite keeps what is written), each column ascending or descending, and
/// the edges of each class (the extreme integers and the lengths where their encoding
/// changes, -0.0 beside 0.0, infinities, text and blobs with NUL bytes, empty ones, one a
/// prefix of another, non-ASCII text). Seeded; the seed is in every failure.
@Suite("Sort keys, alone")
struct SortKeyBufferTests {
    /// Values whose class mixes only as SQLite can order by bytes: a column holds integers
    /// or reals, never both.
    enum Numbers: CaseIterable { case integers, reals }

    static let integerEdges: [Int64] = [
        0, 1, -1, 2, -2, 127, 128, 255, 256, -255, -256, -257, 65_535, 65_536, -65_536, -65_537,
        Int64(Int32.max), Int64(Int32.min), Int64.max, Int64.min, Int64.max - 1, Int64.min + 1,
        1 << 55, -(1 << 55), (1 << 56) - 1, 1 << 56, -(1 << 56), -(1 << 56) - 1,
    ]
    static let realEdges: [Double] = [
        0.0, -0.0, 1.0, -1.0, 0.5, -0.5, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 1e300, -1e-300, 9_007_199_254_740_992, 3.25,
    ]
    static let textEdges: [[UInt8]] = [
        [], [0], [0, 0], [0x61], [0x61, 0], [0x61, 0, 0x62], [0x61, 0x62], [0x61, 0x62, 0x63], [0xFF - 0x80, 0x61],
        Array("é".utf8), Array("e".utf8), Array("z".utf8), Array("日本".utf8), [0x61, 0x01], [0x61, 0xFF - 0x80],
    ]

    /// A random SQL literal of column `numbers`: NULL, a number, text or a blob, the last
    /// two beginning with `prefix` (a prefix common to a column's values, as `Note 1`,
    /// `Note 2`, … have: sorting skips it).
    static func literal(_ numbers: Numbers, prefix: [UInt8], _ random: inout SeededGenerator) -> String {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }
        func bytes() -> [UInt8] {
            if random.int(0...2) == 0 { return prefix + random.pick(textEdges) }
            return prefix + (0..<random.int(0...6)).map { _ in random.pick([0, 0x41, 0x42, 0x61, 0x62, 0x7F, 0xC3, 0xA9]) }
        }
        switch random.int(0...9) {
        case 0: return "NULL"
        case 1...4:
            switch numbers {
            case .integers:
                let value = random.int(0...1) == 0 ? random.pick(integerEdges) : Int64(random.int(-300...300))
                return value == Int64.min ? "(-9223372036854775807 - 1)" : "\(value)"
            case .reals:
                let value = random.int(0...1) == 0 ? random.pick(realEdges) : Double(random.int(-300...300)) / 8
                if value.isInfinite { return value > 0 ? "9e999" : "-9e999" }
                if value == 0 && value.sign == .minus { return "(-0.0)" }
                return value.description
            }
        case 5...7: return "CAST(X'\(hex(bytes()))' AS TEXT)"
        default: return "X'\(hex(bytes()))'"
        }
    }

    @Test("rows in the order of their keys are SQLite's ORDER BY order", arguments: 0..<12)
    func againstSQLite(_ round: Int) throws {
        let seed = partTestSeed("SortKeyBufferTests.againstSQLite \(round)")
        var random = SeededGenerator(seed: seed)
        let database = try DatabaseQueue()
        let columns = random.int(1...3)
        let numbers = (0..<columns).map { _ in random.pick(Numbers.allCases) }
        let descending = (0..<columns).map { _ in random.int(0...1) == 1 }
        let names = (0..<columns).map { "c\($0)" }
        // Half the rounds give each column's text and blobs a common prefix, NUL bytes in it.
        let prefixes = (0..<columns).map { _ in
            round % 2 == 0 ? [] : (0..<random.int(1...10)).map { _ in random.pick([0x4E, 0x6F, 0x00, 0x20, 0xFF]) as UInt8 }
        }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, \(names.joined(separator: ", ")))")
            for _ in 0..<random.int(1...400) {
                let values = zip(numbers, prefixes).map { Self.literal($0, prefix: $1, &random) }
                // Random ids, negative ones too: the id is the last key.
                let id = random.int(0...3) == 0 ? "NULL" : "\(random.int(-1_000...1_000_000))"
                try db.execute(sql: "INSERT OR IGNORE INTO t VALUES (\(id), \(values.joined(separator: ", ")))")
            }
        }
        try database.read { db in
            let order = zip(names, descending).map { "\($0) \($1 ? "DESC" : "ASC")" }.joined(separator: ", ")
            let expected = try Int64.fetchAll(db, sql: "SELECT id FROM t ORDER BY \(order), id")
            var buffer = SortKeyBuffer(descending: descending)
            // The same rows again, sorted with rows given first (as a commit's refetch gives
            // the rows it did not write, in the last order).
            var arranged = SortKeyBuffer(descending: descending)
            var ids: [Int64] = []
            let statement = try db.makeStatement(sql: "SELECT id, \(names.joined(separator: ", ")) FROM t")
            let cursor = try Int64.fetchCursor(statement)
            while let id = try cursor.next() {
                let accepted = buffer.append(statement.sqliteStatement, columns: 1..<Int32(1 + columns), id: id)
                #expect(accepted, "seed \(seed)")
                _ = arranged.append(statement.sqliteStatement, columns: 1..<Int32(1 + columns), id: id)
                ids.append(id)
            }
            #expect(buffer.count == ids.count)
            buffer.sort()
            let sorted = Array(buffer.sortedRows.map(\.id))
            #expect(Array(buffer.sortedRows.map { ids[Int($0.row)] }) == sorted, "seed \(seed): row numbers")
            #expect(sorted == expected, "seed \(seed): columns \(numbers), descending \(descending)")
            // Leading rows: some rows in the sorted order (a few out of place), or any rows
            // in any order, with rows given twice and numbers out of range: the same order.
            let rowOf = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, UInt32($0)) })
            var leading: [UInt32]
            if random.int(0...1) == 0 {
                leading = expected.filter { _ in random.int(0...3) != 0 }.map { rowOf[$0]! }
                for _ in 0..<random.int(0...3) where leading.count > 1 {
                    leading.swapAt(random.int(0...(leading.count - 1)), random.int(0...(leading.count - 1)))
                }
            } else {
                leading = (0..<random.int(0...ids.count)).map { _ in UInt32(random.int(0...(ids.count - 1))) }
            }
            leading += [UInt32(ids.count), UInt32(ids.count + 7), UInt32.max]
            arranged.sort(leading: leading.shuffled(using: &random).prefix(2) + leading)
            #expect(Array(arranged.sortedRows.map(\.id)) == expected, "seed \(seed): sorted with rows given first")
            #expect(Array(arranged.sortedRows.map { ids[Int($0.row)] }) == expected, "seed \(seed): row numbers, rows given first")
        }
    }

    @Test("a column with integers and reals both is refused, and the row not kept")
    func mixedNumbers() throws {
        let database = try DatabaseQueue()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a, b)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 'x', 1), (2, NULL, 2), (3, 'y', 2.5), (4, 'z', 3)")
        }
        try database.read { db in
            var buffer = SortKeyBuffer(descending: [false, true])
            let statement = try db.makeStatement(sql: "SELECT id, a, b FROM t ORDER BY id")
            let cursor = try Int64.fetchCursor(statement)
            var accepted: [Bool] = []
            while let id = try cursor.next() {
                let result = buffer.append(statement.sqliteStatement, columns: 1..<3, id: id)
                accepted.append(result)
            }
            #expect(accepted == [true, true, false, true])
            #expect(buffer.count == 3)
        }
    }

    /// Five notebooks whose positions another program made integers and reals both (2.5 and
    /// -0.5 in an integer column).
    static func storeWithMixedPositions() throws -> Store {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.write { db in
            for (name, position) in [("a", 3), ("b", 1), ("c", 2), ("d", 2), ("e", -4)] { try db.notebook(name, position: position) }
            try db.execute(sql: "UPDATE Notebook SET position = 2.5 WHERE name = 'a'")
            try db.execute(sql: "UPDATE Notebook SET position = -0.5 WHERE name = 'e'")
        }
        return store
    }

    /// A results fetch sorts by SQL when its sort key holds integers and reals both (another
    /// program wrote 2.5 into an integer column): batched loading's ids come in SQLite's order.
    @Test("a sort key with integers and reals both is sorted by SQLite")
    func mixedNumbersFallBackToSQL() throws {
        let store = try Self.storeWithMixedPositions()
        for descending in [false, true] {
            let request = ResultsRequest<Notebook, NoSection>(sortedBy: [descending ? Notebook.position.descending : Notebook.position.ascending])
            let fetcher = ResultsFetcher<Notebook, NoSection>(plan: try ResultsQueryPlan(request: request, schema: NotesModel.schema))
            try store.read { db in
                var ids: [Int64] = []
                try fetcher.forEachRawKey(db, capacity: 0) { id, _, _ in ids.append(id) }
                let expected = try Int64.fetchAll(db, sql: "SELECT id FROM Notebook ORDER BY position \(descending ? "DESC" : "ASC"), id")
                #expect(ids == expected, "descending: \(descending)")
                #expect(Set(ids).count == 5)
            }
        }
    }

    /// The eager fetch falls back the same way, each item read once: an entity that reads
    /// any number for its sort key (hand-written) sorted by a column with integers and reals.
    @Test("an eager fetch whose sort key mixes integers and reals is sorted by SQLite, each item read once")
    func mixedNumbersFallBackToSQLEagerly() throws {
        let store = try Self.storeWithMixedPositions()
        for descending in [false, true] {
            let request = ResultsRequest<LooseNotebook, NoSection>(sortedBy: [descending ? LooseNotebook.position.descending : LooseNotebook.position.ascending])
            let controller = try ResultsController(store: store, request: request)
            let expected = try store.read { db in
                try Int64.fetchAll(db, sql: "SELECT id FROM Notebook ORDER BY position \(descending ? "DESC" : "ASC"), id")
            }
            #expect(controller.snapshot.sections.flatMap { $0.rows.map { $0.item!.id.rawValue } } == expected, "descending: \(descending)")
            #expect(controller.snapshot.sections.flatMap { $0.rows.map { $0.item!.position } }.contains(2.5))
        }
    }
}

/// A notebook read by a hand-written entity whose position is any number.
struct LooseNotebook: StrataEntity, Identifiable {
    typealias ID = EntityID<LooseNotebook>

    var id: ID
    var name: String
    var position: Double
    var objectID: ID {
        get { id }
        set { id = newValue }
    }

    static let databaseTableName = "Notebook"
    static let entityDescriptor = NotesModel.schema.entity(named: "Notebook")!
    static var schemaDescriptor: SchemaDescriptor { NotesModel.schema }

    init(row: GRDB.Row) throws {
        id = row["id"]
        name = row["name"]
        position = row["position"]
    }

    func encode(to container: inout GRDB.PersistenceContainer) throws {
        if id.isSaved { container["id"] = id }
        container["name"] = name
        container["position"] = position
    }

    static var position: TypedColumn<LooseNotebook, Double> { .init("position") }
}
