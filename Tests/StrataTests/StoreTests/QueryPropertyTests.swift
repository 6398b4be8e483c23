import Foundation
import GRDB
import Testing
@testable import Strata

/// Random predicates and sorts over random data: SQLite's answer (``SQLQueryBuilder``) and
/// the in-memory one (``PredicateEvaluator``, ``DatabaseValueOrdering``) must be equal.
/// Set `STRATA_TEST_SEED` to replay a failure; every failure prints its seed.
@Suite("Store query properties")
struct QueryPropertyTests {
    static let strings: [String?] = [
        nil, "", "a", "A", "b", "é", "e\u{301}", "É", "e", "E", "résumé", "RESUME", "Resume", "resume",
        "😀", "😀a", "a😀", "👍🏽", "ß", "SS", "ss", "straße", "STRASSE", "ﬁ", "fi", "İ", "i", "ı", "Ω", "ω",
        "naïve", "NAIVE", "x*y", "x?y", "%", "_", "a%b", "'", "\"", ";", "abc", "ABC", "aBc", "ab", "bc", " ", "a b",
    ]
    static let patterns: [String?] = strings + [
        "*", "?", "*a*", "a*", "*a", "?a", "a?", "**", "*é*", "*😀*", "r*s*m*", "?*?", "a\0b", "\0", "%\0*",
    ]
    static let dates: [Date] = [0, 1, 86_400, 1_700_000_000, 1_700_000_000.5].map { Date(timeIntervalSince1970: $0) }

    struct Context {
        var random: StoreRandom
        mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }
        mutating func bool() -> Bool { random.next() % 2 == 0 }
    }

    static func baseSeed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["STRATA_TEST_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64(UInt32.max))
    }

    // MARK: - Random data

    static func populate(_ db: Database, _ c: inout Context) throws {
        var notebooks: [Notebook] = []
        var usedNames: Set<String> = []
        for _ in 0..<c.int(0...5) {
            guard let name = c.pick(strings), usedNames.insert(name).inserted else { continue }  // unique names
            notebooks.append(try db.insert(Notebook(
                name: name, createdAt: c.pick(dates), position: c.int(-1...2), color: c.pick(strings))))
        }
        var tags: [Tag] = []
        for _ in 0..<c.int(0...5) { tags.append(try db.insert(Tag(name: c.pick(strings) ?? ""))) }
        for _ in 0..<c.int(0...25) {
            let note = try db.insert(Note(
                title: c.pick(strings) ?? "", body: c.pick(strings) ?? "", pinned: c.bool(),
                priority: c.pick(Priority.allCases), updatedAt: c.pick(dates),
                notebookID: notebooks.isEmpty || c.int(0...4) == 0 ? nil : c.pick(notebooks).id))
            for tag in tags where c.int(0...2) == 0 { try db.link(note.id, Note.tags, tag.id) }
        }
        if c.int(0...5) == 0 {
            // A raw priority that is not a case of the enum, to check its place in the order.
            try db.execute(sql: "UPDATE Note SET priority = 'zzz' WHERE id = (SELECT MIN(id) FROM Note)")
        }
    }

    // MARK: - Random predicates

    static let noteStringPaths: [[String]] = [["title"], ["body"], ["notebook", "name"], ["notebook", "color"]]
    static let noteOtherPaths: [[String]] = [
        ["pinned"], ["priority"], ["updatedAt"], ["id"], ["notebookID"], ["notebook", "id"], ["notebook", "position"],
        ["notebook", "createdAt"],
    ]

    static func value(for path: [String], _ c: inout Context) -> DatabaseValue {
        if c.int(0...9) == 0 { return .null }
        switch path.last! {
        case "pinned": return c.bool().databaseValue
        case "priority": return c.pick(["low", "normal", "high", "zzz", "Low"]).databaseValue
        case "updatedAt", "createdAt": return c.pick(dates).databaseValue
        case "id", "notebookID", "position":
            return c.bool() ? c.int(-1...6).databaseValue : (Double(c.int(-2...12)) / 2).databaseValue
        default: return c.pick(strings)?.databaseValue ?? .null
        }
    }

    static func options(_ c: inout Context) -> StringOptions {
        StringOptions(rawValue: c.int(0...3))
    }

    static func notePredicate(_ c: inout Context, depth: Int) -> PredicateNode {
        let choice = c.int(0...(depth > 0 ? 12 : 8))
        switch choice {
        case 0:
            let path = c.pick(noteStringPaths + noteOtherPaths)
            return .compare(.path(path), c.pick(allOperators), .value(value(for: path, &c)))
        case 1:
            let path = c.pick(noteStringPaths)
            return .compare(.path(path), c.pick(allOperators), .value(value(for: path, &c)))
        case 2:
            return .compare(.path(c.pick(noteStringPaths)), c.pick(allOperators), .path(c.pick(noteStringPaths)))
        case 3:
            return .match(.path(c.pick(noteStringPaths)), c.pick(allStringOperators),
                          .value(c.pick(patterns)?.databaseValue ?? .null), options(&c))
        case 4:
            if c.bool() {
                return .match(.path(c.pick(noteStringPaths)), c.pick(allStringOperators), .path(c.pick(noteStringPaths)), options(&c))
            }
            return .match(.path(c.pick(noteStringPaths)), c.pick(allStringOperators),
                          .value(c.pick(patterns)?.databaseValue ?? .null), options(&c))
        case 5:
            let path = c.pick(noteStringPaths + noteOtherPaths)
            return .isIn(.path(path), (0..<c.int(0...4)).map { _ in value(for: path, &c) })
        case 6:
            let path = c.pick(noteStringPaths + noteOtherPaths)
            return .between(.path(path), value(for: path, &c), value(for: path, &c))
        case 7:
            let relationship = c.pick([["tags"], ["notebook", "notes"]])
            return .compare(.count(relationship), c.pick(allOperators), .value(c.int(0...3).databaseValue))
        case 8:
            return .constant(c.bool())
        case 9:
            return .and((0..<c.int(0...3)).map { _ in notePredicate(&c, depth: depth - 1) })
        case 10:
            return .or((0..<c.int(0...3)).map { _ in notePredicate(&c, depth: depth - 1) })
        case 11:
            return .not(notePredicate(&c, depth: depth - 1))
        default:
            if c.bool() {
                return .quantified(c.pick([.any, .all, .none]), relationship: ["tags"], tagPredicate(&c))
            }
            return .quantified(c.pick([.any, .all, .none]), relationship: ["notebook", "notes"], notePredicate(&c, depth: 0))
        }
    }

    static func tagPredicate(_ c: inout Context) -> PredicateNode {
        switch c.int(0...2) {
        case 0: .compare(.path(["name"]), c.pick(allOperators), .value(c.pick(strings)?.databaseValue ?? .null))
        case 1: .match(.path(["name"]), c.pick(allStringOperators), .value(c.pick(patterns)?.databaseValue ?? .null), options(&c))
        default: .compare(.count(["notes"]), c.pick(allOperators), .value(c.int(0...3).databaseValue))
        }
    }

    static let allOperators: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
    static let allStringOperators: [StringOperator] = [.equal, .contains, .beginsWith, .endsWith, .like]
    static let sortPaths: [[String]] = [
        ["title"], ["body"], ["pinned"], ["priority"], ["updatedAt"], ["notebook", "name"], ["notebook", "position"],
        ["notebook", "color"], ["notebookID"],
    ]

    static func sort(_ c: inout Context) -> [SortNode] {
        (0..<c.int(0...3)).map { _ in SortNode(path: c.pick(sortPaths), descending: c.bool()) }
    }

    // MARK: - The property

    @Test("filtering and ordering in memory equal SQLite's, on random data")
    func randomQueries() throws {
        let base = Self.baseSeed()
        for iteration in 0..<60 {
            let seed = base &+ UInt64(iteration)
            var c = Context(random: StoreRandom(seed: seed))
            let store = try Store.inMemory(schema: NotesModel.schema)
            try store.write { db in try Self.populate(db, &c) }
            let graph = try store.read { db in try ObjectGraph.load(db, schema: NotesModel.schema) }
            let ids = (graph.rows["Note"] ?? [:]).keys.sorted()

            for _ in 0..<15 {
                let predicate = Self.notePredicate(&c, depth: 3)
                let sort = Self.sort(&c)
                let label = "seed \(seed) (STRATA_TEST_SEED=\(base), iteration \(iteration)): \(predicate) sorted by \(sort)"

                // SQLite.
                let sqlIDs = try store.read { db -> [Int64] in
                    var builder = try SQLQueryBuilder(schema: NotesModel.schema, rootEntity: "Note")
                    let query = try builder.select(SQL(sql: "\(builder.rootAlias).\"id\""), where: predicate, orderBy: sort)
                    return try Int64.fetchAll(db, SQLRequest<Int64>(literal: query))
                }
                if !(graph.rows["Note"] ?? [:]).values.contains(where: { $0["priority"] == "zzz".databaseValue }) {
                    // The typed API gives the same answer (when every row decodes).
                    let typed = try store.read { db in
                        try db.fetchAll(Note.self, where: EntityPredicate(predicate), sortedBy: sort.map(SortKey.init))
                            .map(\.id.rawValue)
                    }
                    #expect(typed == sqlIDs, "\(label)")
                }
                // In memory.
                var matching: [(Int64, [DatabaseValue])] = []
                for id in ids {
                    let subject = try #require(graph.subject("Note", id: id))
                    if try PredicateEvaluator.evaluate(predicate, on: subject) {
                        let values = try PredicateEvaluator.sortValues(sort, on: subject, schema: NotesModel.schema, entity: "Note")
                        matching.append((id, values))
                    }
                }
                let descending = sort.map(\.descending)
                matching.sort { DatabaseValueOrdering.compare($0.1, id: $0.0, $1.1, id: $1.0, descending: descending) < 0 }
                #expect(sqlIDs == matching.map(\.0), "\(label)")
                if sqlIDs != matching.map(\.0) { return }

                // Sort-key values selected with SQL, ordered with the comparator, as a
                // results controller does.
                let selected = try store.read { db -> [(Int64, [DatabaseValue])] in
                    var builder = try SQLQueryBuilder(schema: NotesModel.schema, rootEntity: "Note")
                    var columns: [SQL] = [SQL(sql: "\(builder.rootAlias).\"id\"")]
                    for key in sort { columns.append(try builder.orderingExpression(key)) }
                    let condition = try builder.condition(predicate)
                    let query: SQL = "SELECT \(columns.joined(separator: ", ")) FROM \(builder.fromClause) WHERE \(condition)"
                    return try GRDB.Row.fetchAll(db, SQLRequest<GRDB.Row>(literal: query)).map { row in
                        (row[0] as Int64, (1..<(sort.count + 1)).map { row[$0] as DatabaseValue })
                    }
                }
                let reordered = selected.sorted {
                    DatabaseValueOrdering.compare($0.1, id: $0.0, $1.1, id: $1.0, descending: descending) < 0
                }.map(\.0)
                #expect(reordered == sqlIDs, "\(label)")
            }
        }
    }

    @Test("the value comparator equals SQLite's ORDER BY on mixed storage classes")
    func comparatorMatchesOrderBy() throws {
        let base = Self.baseSeed()
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE v (id INTEGER PRIMARY KEY, x)") }
        for iteration in 0..<40 {
            let seed = base &+ UInt64(iteration)
            var c = Context(random: StoreRandom(seed: seed))
            var values: [DatabaseValue] = []
            for _ in 0..<c.int(1...40) {
                switch c.int(0...4) {
                case 0: values.append(.null)
                case 1: values.append(Int64(c.int(-3...3)).databaseValue)
                case 2: values.append((Double(c.int(-6...6)) / 2).databaseValue)
                case 3: values.append(c.pick(Self.strings)?.databaseValue ?? "".databaseValue)
                default: values.append(Data((0..<c.int(0...3)).map { _ in UInt8(c.int(0...255)) }).databaseValue)
                }
            }
            values.append(Int64.max.databaseValue)
            values.append(Double(Int64.max).databaseValue)
            values.append(9007199254740993.databaseValue)
            values.append(9007199254740992.0.databaseValue)
            let sqlOrder = try queue.write { db -> [Int64] in
                try db.execute(sql: "DELETE FROM v")
                for (index, value) in values.enumerated() {
                    try db.execute(sql: "INSERT INTO v (id, x) VALUES (?, ?)", arguments: [index, value])
                }
                return try Int64.fetchAll(db, sql: "SELECT id FROM v ORDER BY x, id")
            }
            let memoryOrder = values.indices.sorted {
                let order = DatabaseValueOrdering.compare(values[$0], values[$1])
                return order != 0 ? order < 0 : $0 < $1
            }.map(Int64.init)
            #expect(sqlOrder == memoryOrder, "seed \(seed) (STRATA_TEST_SEED=\(base))")
        }
    }

    @Test("string matching: case and diacritic folding, wildcards", arguments: [
        ("Résumé", StringOperator.contains, "resume", StringOptions([.caseInsensitive, .diacriticInsensitive]), true),
        ("Résumé", .contains, "resume", [.caseInsensitive], false),
        ("Résumé", .contains, "RÉS", [.caseInsensitive], true),
        ("e\u{301}", .beginsWith, "é", [], true),
        ("é", .contains, "e", [], false),
        ("é", .contains, "e", [.diacriticInsensitive], true),
        ("straße", .endsWith, "SSE", [.caseInsensitive], true),  // full case folding: ß → ss
        ("straße", .endsWith, "SSE", [], false),
        ("a😀b", .like, "a?b", [], true),
        ("a%b", .like, "a%b", [], true),
        ("axb", .like, "a%b", [], false),
        ("a_b", .like, "a_b", [], true),
        ("abc", .like, "a*", [], true),
        ("abc", .like, "*c", [], true),
        ("abc", .like, "*x*", [], false),
        ("", .like, "*", [], true),
        ("a*b", .like, "a\\*b", [], true),  // `\*` is a literal `*`
        ("axb", .like, "a\\*b", [], false),
        ("a?", .like, "a\\?", [], true),
        ("ab", .like, "a\\?", [], false),
        ("a\\b", .like, "a\\\\b", [], true),
        ("a\\", .like, "a\\", [], true),  // a trailing backslash is itself
        ("50% *off*", .like, StringMatching.likeEscaped("50% *off*"), [], true),
        ("50% xoffx", .like, StringMatching.likeEscaped("50% *off*"), [], false),
        ("", .contains, "", [], true),
        ("ABC", .like, "a*", [.caseInsensitive], true),
        ("ß", .like, "?", [], true),
        ("ß", .like, "?", [.caseInsensitive], false),  // folded to "ss": two characters
        ("straße", .equal, "STRASSE", [.caseInsensitive], true),
        ("straße", .equal, "strasse", [.diacriticInsensitive], false),
        ("É", .equal, "e\u{301}", [.caseInsensitive], true),
        ("é", .equal, "e\u{301}", [], true),  // Characters, unlike `==`
        ("É", .equal, "e", [.diacriticInsensitive], false),
        ("É", .equal, "e", [.caseInsensitive, .diacriticInsensitive], true),
        ("ı", .equal, "I", [.caseInsensitive], false),  // no Turkish rules
        ("İ", .equal, "i\u{307}", [.caseInsensitive], true),
        ("ς", .equal, "Σ", [.caseInsensitive], true),
        ("ﬁ", .equal, "FI", [.caseInsensitive], true),
        ("ø", .equal, "o", [.diacriticInsensitive], false),
        ("", .equal, "", [.caseInsensitive], true),
    ] as [(String, StringOperator, String, StringOptions, Bool)])
    func stringMatching(_ value: String, _ op: StringOperator, _ pattern: String, _ options: StringOptions, _ expected: Bool) throws {
        #expect(StringMatching.matches(value, op, pattern, options) == expected)
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.insert(Tag(name: value))
        let count = try store.read { db in
            try db.fetchCount(Tag.self, where: EntityPredicate(.match(.path(["name"]), op, .value(pattern.databaseValue), options)))
        }
        #expect(count == (expected ? 1 : 0))
    }

    @Test("string equality with options treats nil like ==, and text ends at its first NUL")
    func stringEqualityNilAndNUL() throws {
        #expect(StringMatching.matches(.null, .equal, .null, .caseInsensitive))
        #expect(!StringMatching.matches("a".databaseValue, .equal, .null, .caseInsensitive))
        #expect(!StringMatching.matches(.null, .contains, .null, []))
        #expect(StringMatching.matches("a\0b".databaseValue, .equal, "A".databaseValue, .caseInsensitive))
        #expect(!StringMatching.matches("a\0b".databaseValue, .endsWith, "b".databaseValue, []))

        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.write { db in
            _ = try db.insert(Notebook(name: "Work", color: nil))
            _ = try db.insert(Notebook(name: "home", color: "Red"))
            // Raw SQL can store text past a NUL: `==` compares all of it, string operators see
            // the text up to the NUL, in SQL and in memory.
            try db.execute(sql: "INSERT INTO Notebook (name, color) VALUES ('x', CAST(? AS TEXT))", arguments: [Data("re\0d".utf8)])
        }
        let graph = try store.read { db in try ObjectGraph.load(db, schema: NotesModel.schema) }
        let cases: [(EntityPredicate<Notebook>, [Int64])] = [
            (Notebook.color.equals(nil, .caseInsensitive), [1]),
            (!Notebook.color.equals("RED", .caseInsensitive), [1, 3]),
            (Notebook.color.equals("re", .caseInsensitive), [3]),
            (Notebook.color == "re", []),
            (Notebook.color == "re\0d", []),  // bound as "re"
            (Notebook.color.in(["re\0x"]), []),
            (Notebook.name.equals(Notebook.color, .caseInsensitive), []),
            (Notebook.color.like("r?", .caseInsensitive), [3]),
        ]
        for (predicate, expected) in cases {
            let sql = try store.read { db in try db.fetchAll(Notebook.self, where: predicate).map(\.id.rawValue) }
            let memory = try [Int64(1), 2, 3].filter { try PredicateEvaluator.evaluate(predicate.node, on: #require(graph.subject("Notebook", id: $0))) }
            #expect(sql == expected, "\(predicate.node)")
            #expect(memory == expected, "\(predicate.node)")
        }
    }
}
