import Foundation
import GRDB
import Testing
@testable import Strata

/// Random predicates and sorts over REAL, BLOB (UUID, Data) and Decimal columns, with the
/// awkward doubles (NaN, infinities, -0.0, extremes): SQLite's answer and the in-memory one
/// must be equal. SQLite binds and stores `Double.nan` as NULL; so must the evaluator.
/// Set `STRATA_TEST_SEED` to replay a failure; every failure prints its seed.
@Suite("Store query properties: doubles, blobs, decimals")
struct ValueQueryPropertyTests {
    static let schema = SchemaDescriptor(name: "Values", entities: [
        EntityDescriptor(name: "Sample", attributes: [
            .init(name: "real", type: .double, isOptional: true),
            .init(name: "single", type: .float, isOptional: true),
            .init(name: "key", type: .uuid, isOptional: true),
            .init(name: "bytes", type: .data, isOptional: true),
            .init(name: "amount", type: .decimal, isOptional: true),
        ]),
    ])

    static let doubles: [Double?] = [
        nil, .nan, -.nan, .infinity, -.infinity, 0.0, -0.0, 1, -1, 0.5, 1.5, 2, 1e308, -1e308,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, 9007199254740992, 3, 4.5,
    ]
    static let uuids: [UUID?] = [
        nil, UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuidString: "00000000-0000-0000-0000-000000000001"), UUID(uuidString: "80000000-0000-0000-0000-000000000000"),
        UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"), UUID(uuidString: "12345678-9ABC-DEF0-1234-56789ABCDEF0"),
    ]
    static let datas: [Data?] = [nil, Data(), Data([0]), Data([0, 0]), Data([1]), Data([0xFF]), Data([0x7F, 0x80]), Data("a".utf8)]
    static let decimals: [Decimal?] = [nil, 0, -0.5, 0.5, 1, 10, 2, Decimal(string: "1.10"), Decimal(string: "-12.345")]

    static let paths = ["real", "single", "key", "bytes", "amount", "id"]
    static let operators: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]

    static func value(for column: String, _ c: inout QueryPropertyTests.Context) -> DatabaseValue {
        switch column {
        case "real", "single", "id": c.pick(doubles)?.databaseValue ?? .null
        case "key": c.pick(uuids)?.databaseValue ?? .null
        case "bytes": c.pick(datas)?.databaseValue ?? .null
        default: c.pick(decimals)?.databaseValue ?? .null
        }
    }

    static func predicate(_ c: inout QueryPropertyTests.Context, depth: Int) -> PredicateNode {
        let column = c.pick(paths)
        switch c.int(0...(depth > 0 ? 5 : 3)) {
        case 0, 1: return .compare(.path([column]), c.pick(operators), .value(value(for: column, &c)))
        case 2: return .isIn(.path([column]), (0..<c.int(0...4)).map { _ in value(for: column, &c) })
        case 3: return .between(.path([column]), value(for: column, &c), value(for: column, &c))
        case 4: return .and((0..<c.int(1...3)).map { _ in predicate(&c, depth: depth - 1) })
        default: return .not(predicate(&c, depth: depth - 1))
        }
    }

    @Test("filtering and ordering in memory equal SQLite's, with NaN, infinities and -0.0")
    func randomQueries() throws {
        let base = QueryPropertyTests.baseSeed()
        for iteration in 0..<40 {
            let seed = base &+ UInt64(iteration)
            var c = QueryPropertyTests.Context(random: StoreRandom(seed: seed))
            let directory = try TemporaryDirectory()
            let store = try Store(schema: Self.schema, path: directory.path("values.sqlite"))
            try store.write { db in
                for _ in 0..<c.int(0...20) {
                    let row: [DatabaseValue] = Self.paths.dropLast().map { Self.value(for: $0, &c) }
                    try db.execute(
                        sql: "INSERT INTO Sample (real, single, key, bytes, amount) VALUES (?, ?, ?, ?, ?)",
                        arguments: StatementArguments(row))
                }
            }
            let graph = try store.read { db in try ObjectGraph.load(db, schema: Self.schema) }
            let ids = (graph.rows["Sample"] ?? [:]).keys.sorted()
            for _ in 0..<20 {
                let predicate = Self.predicate(&c, depth: 2)
                let sort = (0..<c.int(0...2)).map { _ in SortNode(path: [c.pick(Self.paths)], descending: c.bool()) }
                let label = "seed \(seed) (STRATA_TEST_SEED=\(base), iteration \(iteration)): \(predicate) sorted by \(sort)"
                let sqlIDs = try store.read { db -> [Int64] in
                    var builder = try SQLQueryBuilder(schema: Self.schema, rootEntity: "Sample")
                    let query = try builder.select(SQL(sql: "\(builder.rootAlias).\"id\""), where: predicate, orderBy: sort)
                    return try Int64.fetchAll(db, SQLRequest<Int64>(literal: query))
                }
                var matching: [(Int64, [DatabaseValue])] = []
                for id in ids {
                    let subject = try #require(graph.subject("Sample", id: id))
                    if try PredicateEvaluator.evaluate(predicate, on: subject) {
                        matching.append((id, try PredicateEvaluator.sortValues(sort, on: subject, schema: Self.schema, entity: "Sample")))
                    }
                }
                let descending = sort.map(\.descending)
                matching.sort { DatabaseValueOrdering.compare($0.1, id: $0.0, $1.1, id: $1.0, descending: descending) < 0 }
                #expect(sqlIDs == matching.map(\.0), "\(label)")
                if sqlIDs != matching.map(\.0) { return }
            }
        }
    }

    /// The cases the random test may miss, spelled out: NaN is NULL on both sides.
    @Test("NaN in a predicate is NULL, in SQL and in memory", arguments: [
        (PredicateNode.compare(.path(["real"]), .equal, .value(Double.nan.databaseValue)), [Int64(1)]),
        (.compare(.path(["real"]), .notEqual, .value(Double.nan.databaseValue)), [2, 3, 4]),
        (.compare(.path(["real"]), .less, .value(Double.nan.databaseValue)), []),
        (.compare(.path(["real"]), .greaterOrEqual, .value(Double.nan.databaseValue)), []),
        (.isIn(.path(["real"]), [Double.nan.databaseValue, 0.0.databaseValue]), [1, 2, 3]),
        (.between(.path(["real"]), Double.nan.databaseValue, Double.infinity.databaseValue), []),
        (.between(.path(["real"]), (-Double.infinity).databaseValue, Double.infinity.databaseValue), [2, 3, 4]),
        (.compare(.path(["real"]), .equal, .value((-0.0).databaseValue)), [2, 3]),
    ] as [(PredicateNode, [Int64])])
    func nanIsNull(_ predicate: PredicateNode, _ expected: [Int64]) throws {
        let store = try Store.inMemory(schema: Self.schema)
        try store.write { db in
            for value in [Double.nan, 0.0, -0.0, Double.infinity] {
                try db.execute(sql: "INSERT INTO Sample (real) VALUES (?)", arguments: [value])
            }
        }
        let (sqlIDs, graph) = try store.read { db -> ([Int64], ObjectGraph) in
            var builder = try SQLQueryBuilder(schema: Self.schema, rootEntity: "Sample")
            let query = try builder.select(SQL(sql: "\(builder.rootAlias).\"id\""), where: predicate, orderBy: [])
            return (try Int64.fetchAll(db, SQLRequest<Int64>(literal: query)).sorted(), try ObjectGraph.load(db, schema: Self.schema))
        }
        let memoryIDs = try [Int64](1...4).filter { try PredicateEvaluator.evaluate(predicate, on: #require(graph.subject("Sample", id: $0))) }
        #expect(sqlIDs == expected)
        #expect(memoryIDs == expected)
    }
}
