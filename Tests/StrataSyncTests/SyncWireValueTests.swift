import Foundation
import GRDB
import PostgresNIO
import StrataSyncFixture
@testable import StrataSync
import StrataTestSupport
import Testing

/// A pull reads numbers, booleans, ids, data and dates from the server in their binary form
/// and keeps them as the store does; everything the sync says about them must stay what the
/// wire text says (see `SyncValue`): the same values as when every column was read as text,
/// and the same bases.
@Suite("Server rows read in binary hold what their wire text says", .serialized)
struct SyncWireValueTests {
    /// Every column of every row of `entity`, as the server's text of it reads (the way every
    /// pull read rows before: `PostgresSchema.toText`, numbers of `double precision` written
    /// again as Swift writes them).
    static func textRows(_ entity: SyncedTables.Entity, _ connection: PostgresConnection) async throws -> [UUID: [String: String?]] {
        let list = ([quoted(entity.primaryKey)] + entity.columns.map { PostgresSchema.toText($0.name, $0.valueType) })
            .joined(separator: ", ")
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT \(list) FROM \(quoted(entity.name))"), logger: Logger(label: "test"))
        var result: [UUID: [String: String?]] = [:]
        for try await row in rows {
            var cells = row.makeIterator()
            let id = try #require(try cells.next()?.decode(UUID.self))
            var values: [String: String?] = [:]
            for column in entity.columns {
                var text = try cells.next()?.decode(String?.self) ?? nil
                if column.valueType == .double || column.valueType == .float, let number = text.flatMap(Double.init) {
                    text = SyncValue.doubleText(number)
                }
                values[column.name] = text
            }
            result[id] = values
        }
        return result
    }

    /// Two stored values alike (NaN alike).
    static func same(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        if case .double(let x) = a.storage, case .double(let y) = b.storage { return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN) }
        return a == b
    }

    /// Rows at the edges of every type the model has: the extreme integers, doubles that are
    /// not numbers or not finite or negative zero or the smallest and largest, dates before
    /// the common era, around 1970 and 2000, after 9999 and infinite, empty and NUL-free
    /// data, long decimals, text with quotes, escapes and non-ASCII letters, NULL everywhere
    /// it may be; then random dates and doubles (seeded).
    static func seedEdges(_ test: TestServer, seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        var dates = [
            "4713-11-24 00:00:00+00 BC", "0044-03-15 12:00:00+00 BC", "0001-12-31 23:59:59.999+00 BC", "0001-01-01 00:00:00+00",
            "1582-10-15 00:00:00+00", "1899-12-31 23:59:59.999+00", "1969-12-31 23:59:59.999+00", "1970-01-01 00:00:00+00",
            "1999-12-31 23:59:59.999+00", "2000-01-01 00:00:00+00", "2000-01-01 00:00:00.001+00", "2000-02-29 12:34:56.789+00",
            "2004-02-29 23:59:59.5+00", "2100-03-01 00:00:00+00", "2400-02-29 00:00:00+00", "9999-12-31 23:59:59.999+00",
            "10000-01-01 00:00:00+00", "294276-12-31 23:59:59.999+00", "infinity", "-infinity",
        ]
        for _ in 0..<200 {
            // Any millisecond from 4713 BC to 294276 AD, as seconds from 1970 (`@` marks them).
            let seconds = Int64.random(in: -210_000_000_000...9_200_000_000_000, using: &random)
            dates.append("@\(seconds).\(Int.random(in: 100..<1_000, using: &random))")
        }
        var doubles = ["'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "0", "'5e-324'", "'1.7976931348623157e308'", "0.1", "1e21", "-2.5e-7"]
        while doubles.count < 210 {
            let double = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random))
            if double.isFinite { doubles.append("'\(double)'") }
        }
        let titles = ["plain", "\"quoted\" \\ back/slash", "tab\tnew\nline", "é漢字🙂", ""]
        let prices = ["NULL", "0", "-1.50", "123456789012345678901234567890.123456789", "'NaN'", "1e-20"]
        var sql = """
            INSERT INTO "Board" (id, name, position) VALUES \
            ('00000000-0000-0000-0000-000000000001', 'min', -9223372036854775808), \
            ('00000000-0000-0000-0000-000000000002', 'max', 9223372036854775807), \
            ('ffffffff-ffff-ffff-ffff-ffffffffffff', 'ünïcödé "b"', 0);
            INSERT INTO "Card" (id, title, stage, points, estimate, small, done, due, token, blob, price, link, "boardID") VALUES
            """
        var rows: [String] = []
        for (index, date) in dates.enumerated() {
            let due = date.hasPrefix("@") ? "to_timestamp(\(date.dropFirst()))" : "timestamptz '\(date)'"
            let double = doubles[index % doubles.count]
            let token = index % 4 == 0 ? "NULL" : "'\(UUID().uuidString)'"
            let blob = ["NULL", "'\\x'", "'\\x00ff10'", "decode(md5('\(index)'), 'hex')"][index % 4]
            let small = [-32_768, 32_767, 0, index][index % 4]
            let title = titles[index % titles.count].replacingOccurrences(of: "'", with: "''")
            rows.append("""
                (gen_random_uuid(), E'\(title.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t").replacingOccurrences(of: "\n", with: "\\n"))', \
                '\(["todo", "doing", "done"][index % 3])', \(index % 101), \(double), \(small), \(index % 2 == 0), \
                \(index % 7 == 6 ? "NULL" : due), \(token), \(blob), \(prices[index % prices.count]), \
                \(index % 5 == 0 ? "NULL" : "'https://example.com/\(index)?q=a/b'"), \
                '\(["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002", "ffffffff-ffff-ffff-ffff-ffffffffffff"][index % 3])')
                """)
        }
        sql += rows.joined(separator: ",\n") + ";"
        try await test.psql(sql)
    }

    /// Each column of each row, read in binary and kept as the store keeps it: the same wire
    /// text, and the same stored value, as reading the column as the server's text.
    @Test func everyColumnReadsAsItsWireText() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let test = try await TestServer()
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        try await Self.seedEdges(test, seed: seed)
        let server = try test.server()
        let connection = try await PostgresConnection.connect(configuration: test.configuration, id: 1, logger: Logger(label: "strata.tests"))
        defer { Task { try? await connection.close() } }
        let tables = try SyncedTables(schema: StrataModel.schema, only: nil)
        for name in ["Board", "Card"] {
            let entity = try #require(tables.entity(named: name))
            let expected = try await Self.textRows(entity, connection)
            #expect(expected.count >= 3, "seed \(seed)")
            // As a pull reads them: the wire text of each decoded value…
            let read = try await server.rows(of: entity, where: "true", PostgresBindings(), count: 0, connection)
            #expect(read.count == expected.count, "seed \(seed)")
            for (id, values) in expected {
                let got = try #require(read[id], "seed \(seed)")
                for column in entity.columns where got[column.name] != values[column.name] {
                    Issue.record("\(name).\(column.name) of \(id): read \(String(describing: got[column.name])), the server's text \(String(describing: values[column.name])) (seed \(seed))")
                }
            }
            // …and the decoded values themselves, against those of the wire text.
            let objects = try await server.readObjects(
                of: entity, key: "t.\(quoted(entity.primaryKey))", exists: "true", from: "\(quoted(entity.name)) t", PostgresBindings(),
                connection)
            for (index, id) in objects.ids.enumerated() {
                let row = objects.rows[index], values = try #require(expected[id])
                for (offset, column) in entity.columns.enumerated() {
                    let stored = objects.values[row * entity.columns.count + offset].databaseValue
                    let fromText = SyncValue.databaseValue(of: values[column.name] ?? nil, as: column.valueType)
                    #expect(Self.same(stored, fromText), "\(name).\(column.name) of \(id): \(stored) against \(fromText) (seed \(seed))")
                }
            }
        }
    }

    /// A date's text made here is what the server's `to_char` writes, for any millisecond of
    /// the range of `timestamptz`, infinities aside.
    @Test func datesAreWrittenAsTheServerWritesThem() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let test = try await TestServer()
        // Dates at the edges of the range, of eras, centuries and leap days, and random ones
        // (microseconds from 2000), each as the server holds it in a column of the model's
        // dates (milliseconds): the server says how many microseconds from 2000 it is, and its text.
        var values = [
            "timestamptz '4713-11-24 00:00:00+00 BC'", "timestamptz '0001-12-31 23:59:59.999+00 BC'", "timestamptz '0001-01-01 00:00:00+00'",
            "timestamptz '1969-12-31 23:59:59.999+00'", "timestamptz '2000-01-01 00:00:00+00'", "timestamptz '2000-02-29 00:00:00+00'",
            "timestamptz '2100-02-28 23:59:59.999+00'", "timestamptz '9999-12-31 23:59:59.999+00'", "timestamptz '10000-01-01 00:00:00+00'",
            "timestamptz '294276-12-31 23:59:59.999+00'",
        ]
        for _ in 0..<500 {
            let microseconds = Int64.random(in: -211_000_000_000_000_000...9_200_000_000_000_000_000, using: &random)
            values.append("timestamptz '2000-01-01 00:00:00+00' + \(microseconds) * interval '1 microsecond'")
        }
        let list = values.map { "((\($0))::timestamptz(3))" }.joined(separator: ", ")
        let output = try await test.psql("""
            SELECT ((extract(epoch FROM ts) * 1000000) - 946684800000000)::int8 || ' ' || \
            to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') FROM (VALUES \(list)) AS t(ts)
            """)
        var checked = 0
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            let value = try #require(Int64(parts[0]))
            #expect(SyncValue.dateText(microsecondsSince2000: value) == String(parts[1]), "\(value) (seed \(seed))")
            checked += 1
        }
        #expect(checked == values.count)
        #expect(SyncValue.dateText(microsecondsSince2000: .max) == nil)
        #expect(SyncValue.dateText(microsecondsSince2000: .min) == nil)
    }

    /// The bases and values prepared for the bulk insert from a batch as the server reads it
    /// are those prepared from the same batch's changes (as another server would send them),
    /// and from the same answer by table.
    @Test func aBatchPreparesAsItsChangesPrepare() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let device = try await SyncBulkPullTests.deviceOfSeededServer(test, folder)
        defer { Task { await device.close() } }
        let server = try test.server()
        defer { Task { await server.close() } }
        let batch = try await server.pullBatch(SyncPullRequest(device: UUID(), cursor: 0, limit: 100_000)).batch
        #expect(batch.objects.contains { !$0.values.isEmpty })
        let applier = try SyncBulkPullTests.applier(device)
        let fromRows = try #require(applier.prepare(batch))
        let fromChanges = try #require(applier.prepare(batch.changes))
        #expect(fromRows.count > 300)
        #expect(fromRows == fromChanges)

        // The same pull answered by table (`columnar`, as a relay answers its devices), through
        // JSON: the same changes, prepared alike; its objects by table (deleted cards a null
        // row), only links after them. Without `columnar`, no objects by table.
        var request = SyncPullRequest(device: UUID(), cursor: 0, limit: 100_000)
        let changes = try await server.pull(request)
        #expect(changes.objects == nil)
        request.columnar = true
        let byTable = try JSONDecoder().decode(SyncPullResult.self, from: JSONEncoder().encode(try await server.pull(request)))
        let tables = try #require(byTable.objects)
        #expect(Set(tables.map(\.table)).isSuperset(of: ["Board", "Card", "Label", "Bottle"]))
        #expect(tables.contains { $0.rows.contains { $0 == nil } })
        #expect(byTable.changes.allSatisfy { $0.kind == .link || $0.kind == .unlink })
        #expect(byTable.allChanges == batch.changes)
        #expect(changes.changes == batch.changes)
        #expect(byTable.cursor == changes.cursor && byTable.hasMore == changes.hasMore)
        #expect(applier.prepare(PullBatch(byTable)) == fromChanges)
    }

    /// An agreed value kept in a base (`stratasync_base`, as the store keeps values) reads
    /// back as the wire text it was written from, for every type, and a reference's as its
    /// destination's sync id: a column is never taken for changed here by its base alone.
    @Test func anAgreedValueKeptInABaseReadsBackAsItsWireText() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let types: [ValueType] = [.int, .int32, .int16, .bool, .double, .float, .date, .uuid, .data, .string, .url, .enumeration(name: "Stage", cases: ["todo"]), .json, .decimal]
        var values: [DatabaseValue] = [
            .null, Int64.min.databaseValue, Int64.max.databaseValue, 0.databaseValue, (-1).databaseValue, 1.databaseValue,
            (-0.0).databaseValue, Double.infinity.databaseValue, 0.1.databaseValue, "".databaseValue, "\"\\/\n\u{1}é".databaseValue,
            Data().databaseValue, Data(repeating: 0xAB, count: 16).databaseValue, Data([0, 1, 2]).databaseValue,
        ]
        for _ in 0..<500 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: values.append(Int64.random(in: .min ... .max, using: &random).databaseValue)
            case 1: values.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random)).databaseValue)
            case 2:
                let scalars = (0..<Int.random(in: 0..<12, using: &random)).compactMap { _ in
                    Unicode.Scalar([0x22, 0x5C, 0x2F, 0x0A, 0x01, 0x41, 0xE9, 0x6F22, 0x1F642][Int.random(in: 0..<9, using: &random)])
                }
                values.append(String(String.UnicodeScalarView(scalars)).databaseValue)
            default: values.append(Data((0..<Int.random(in: 0..<20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }).databaseValue)
            }
        }
        for value in values {
            for type in types {
                let column = SyncedTables.Column(name: "c", kind: .value(type), isOptional: true)
                // The value as a column of this type holds it (as a pull writes it).
                let held = SyncValue.databaseValue(of: SyncValue.text(of: value, as: type), as: type)
                let text = SyncValue.text(of: held, as: type)
                let kept = LocalSyncState.agreedValue(of: text, column)
                #expect(LocalSyncState.text(ofAgreed: kept, column) == text, "\(value) as \(type) (seed \(seed))")
            }
        }
        let reference = SyncedTables.Column(name: "board", kind: .reference("Board"), isOptional: true)
        for _ in 0..<100 {
            let id = SyncValue.text(of: UUID())
            let kept = LocalSyncState.agreedValue(of: id, reference)
            #expect((kept.storage.value as? Data)?.count == 16)
            #expect(LocalSyncState.text(ofAgreed: kept, reference) == id)
        }
        #expect(LocalSyncState.text(ofAgreed: LocalSyncState.agreedValue(of: nil, reference), reference) == nil)
    }

    /// A push kept in the outbox reads back, through `JSONDecoder`, as the changes written
    /// (the body is written directly, not by `JSONEncoder`): every kind, ids, NULLs, links,
    /// and text that needs escaping; and it reads as what `JSONEncoder` would have written.
    @Test func aPushInTheOutboxReadsBackAsTheChangesWritten() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        func text() -> String {
            let scalars = (0..<Int.random(in: 0..<10, using: &random)).compactMap { _ in
                Unicode.Scalar([0x22, 0x5C, 0x2F, 0x0A, 0x01, 0x1F, 0x7F, 0x41, 0xE9, 0x6F22, 0x1F642][Int.random(in: 0..<11, using: &random)])
            }
            return String(String.UnicodeScalarView(scalars))
        }
        var changes: [SyncChange] = [SyncChange(kind: .insert, table: "Card", id: UUID(), values: [:])]
        for _ in 0..<300 {
            let kind = [SyncChange.Kind.insert, .update, .delete, .link, .unlink][Int.random(in: 0..<5, using: &random)]
            var change = SyncChange(kind: kind, table: text())
            switch kind {
            case .link, .unlink:
                change.link = ["a" + text(): UUID(), "b" + text(): UUID()]
            default:
                change.id = UUID()
                for _ in 0..<Int.random(in: 0..<5, using: &random) {
                    change.values[text()] = Bool.random(using: &random) ? .some(nil) : text()
                }
            }
            changes.append(change)
        }
        let body = LocalSyncState.outboxBody(changes)
        let read = try JSONDecoder().decode([SyncChange].self, from: body)
        #expect(read == changes, "seed \(seed)")
        #expect(read == (try JSONDecoder().decode([SyncChange].self, from: try JSONEncoder().encode(changes))), "seed \(seed)")
        #expect(LocalSyncState.outboxBody([]) == Data("[]".utf8))
    }
}
