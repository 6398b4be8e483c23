@_exported import StrataTestSupport
import Foundation
import GRDB
import Strata
import Testing

// The predicate language end to end. Every fetch of Predicates.yaml (the reference model of
// StrataCodegenTests, whose generated code Generated/Predicates.swift is) went from predicate
// text through the parser, the type checker and the generator to typed Swift and a
// `PredicateNode`. Here each one runs over seeded random data, in SQLite (`db.fetchAll`) and
// in memory (`PredicateEvaluator` on an `ObjectGraph`), and both must give the ids that
// `Reference` — the semantics of Docs/ModelLanguage.md, written out again in plain Swift —
// gives. Set `STRATA_TEST_SEED` to replay a failure; every failure prints its seed.

@Suite("The predicate language, against a reference of its documented semantics")
struct PredicateLanguageTests {
    @Test("every operator × option × type gives the reference's answer in SQL and in memory")
    func everyFetchAgreesWithTheReference() throws {
        let base = Self.baseSeed()
        var failures = 0
        for iteration in 0..<3 {
            let seed = base &+ UInt64(iteration)
            var random = SplitMix(seed: seed)
            let store = try Strata.Store.inMemory(schema: PredicateModel.schema)
            let words = try Self.populate(store, &random)
            let graph = try store.read { db in try ObjectGraph.load(db, schema: PredicateModel.schema) }
            for fetch in Self.cases {
                var checked: Set<EntityPredicate<Word>?> = []
                for _ in 0..<8 {
                    let parameters = Parameters.random(&random)
                    let request = fetch.request(parameters)
                    // A fetch without parameters, or with parameters seen before, needs no second run.
                    guard checked.insert(request.predicate).inserted else { continue }
                    let sql = Set(try store.read { db in try db.fetchAll(request) }.map(\.id.rawValue))
                    let memory = Set(try words.map(\.id).filter { id in
                        guard let predicate = request.predicate else { return true }
                        return try PredicateEvaluator.evaluate(predicate.node, on: #require(graph.subject("Word", id: id)))
                    })
                    let expected = Set(words.filter { fetch.reference($0, parameters) }.map(\.id))
                    if sql != expected || memory != expected {
                        failures += 1
                        let label = """
                            \(fetch.name) with \(parameters), seed \(seed) (STRATA_TEST_SEED=\(base), iteration \(iteration)):
                              reference \(expected.sorted())
                              SQL       \(sql.sorted())
                              memory    \(memory.sorted())
                              rows \(Self.describe(words.filter { expected.symmetricDifference(sql.union(memory)).contains($0.id) }))
                            """
                        #expect(sql == expected, "\(label)")
                        #expect(memory == expected, "\(label)")
                        if failures > 20 { return }
                    }
                }
            }
        }
    }

    @Test("the test covers every fetch of Predicates.yaml")
    func everyFetchHasAReferenceCase() throws {
        let model = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../StrataCodegenTests/Resources/Predicates.yaml")
        let text = try String(contentsOf: model, encoding: .utf8)
        let names = text.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.drop { $0 == " " }
            guard line.hasPrefix("      "), !line.hasPrefix("       "), let colon = trimmed.firstIndex(of: ":"),
                  trimmed[colon...].hasPrefix(": { where:")
            else { return nil }
            return String(trimmed[..<colon])
        }
        #expect(names.count > 250)
        #expect(names == Self.cases.map(\.name))
    }

    @Test("the reference itself, on the documentation's examples", arguments: [
        // [c]: full Unicode case folding; [d]: diacritics; Characters, so canonical equivalence.
        ("straße", TextOp.equal, "STRASSE", [Fold.c], true),
        ("straße", .equal, "STRASSE", [], false),
        ("ß", .equal, "ss", [.d], false),
        ("é", .equal, "e\u{301}", [], false),  // `==` compares bytes
        ("é", .equal, "E\u{301}", [.c], true),
        ("É", .equal, "e", [.d], false),
        ("É", .equal, "e", [.c, .d], true),
        ("ı", .equal, "i", [.c], false),
        ("ﬁ", .beginsWith, "F", [.c], true),
        ("é", .contains, "e", [], false),
        ("résumé", .like, "r?sum?", [.d], true),
        ("a%b", .like, "a%b", [], true),
        ("axb", .like, "a%b", [], false),
        ("a\\b", .like, "a\\?", [], false),  // `\?` is a literal `?`
        ("a?", .like, "a\\?", [], true),
        ("a*b", .like, "a\\*b", [], true),
        ("axb", .like, "a\\*b", [], false),
        ("a\\b", .like, "a\\\\b", [], true),
        ("a\\", .like, "a\\", [], true),  // a trailing backslash is itself
        ("", .like, "*", [], true),
        ("", .contains, "", [], true),
        ("a\0b", .endsWith, "b", [], false),
    ] as [(String, TextOp, String, [Fold], Bool)])
    func referenceExamples(_ value: String, _ op: TextOp, _ pattern: String, _ folds: [Fold], _ expected: Bool) {
        #expect(Reference.text(value, op, pattern, Set(folds)) == expected)
    }

    static func baseSeed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["STRATA_TEST_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64(UInt32.max))
    }

    static func describe(_ words: [ReferenceWord]) -> String {
        words.map { word in
            "\(word.id): text \(word.text.debugDescription) alt \(word.alt.debugDescription) "
                + "label \(word.shelf?.label.debugDescription ?? "-") glyphs \(word.letters.map(\.glyph))"
        }.joined(separator: "; ")
    }
}

// MARK: - Data

/// The stored values of a `Word`, as the reference sees them.
struct ReferenceWord {
    var id: Int64
    var text: String
    var alt: String?
    var number: Int
    var maybe: Int?
    var ratio: Double
    var flag: Bool
    var day: Foundation.Date
    var mood: Mood
    var maybeMood: Mood?
    var shelf: (label: String, note: String?)?
    var shelfID: Int64?
    var letters: [(glyph: String, rank: Int)]
    var badges: [String]
}

enum Pools {
    /// Case variants, composed and decomposed accents, ß, ligatures, dotted and dotless i,
    /// final sigma, wildcard characters of SQL and of the language, backslashes, NUL, emoji.
    static let strings: [String] = [
        "", " ", "a", "A", "b", "ab", "AB", "abc", "aBc", "bc", "e", "E", "é", "e\u{301}", "É", "E\u{301}",
        "résumé", "re\u{301}sume\u{301}", "RESUME", "Résumé", "resume", "naïve", "NAIVE", "ß", "ss", "SS", "ẞ",
        "straße", "STRASSE", "Strasse", "ﬁ", "fi", "FI", "İ", "i", "I", "ı", "i\u{307}", "ς", "σ", "Σ", "Ωmega",
        "ωMEGA", "ǅ", "ǆ", "Å", "A\u{30A}", "ø", "%", "_", "\\", "a%b", "a_b", "a\\b", "axb", "100%", "*", "?",
        "a*b", "x?y", "a\0b", "\0", "\0x", "😀", "👍🏽", "👍", "ab😀", "zzz",
    ]
    /// Strings, and patterns for `LIKE` (and everything else).
    static let patterns: [String] = strings + [
        "*", "?", "**", "*a*", "a*", "*a", "?a", "a?", "*é*", "*e*", "*ss*", "?*?", "r?sum?", "*%*", "%", "_%",
        "\\%", "a\\?", "*\\*", "e?", "?\u{301}", "a\0", "\0b", "a\0zzz",
    ]
    static let numbers: [Int] = [Int.min, -2, -1, 0, 1, 2, 3, Int.max]
    static let ratios: [Double] = [-1, -0.5, 0, 0.5, 1, 1.5, 2, 9.3e18, -9.3e18, 9_223_372_036_854_775_808]
    /// Whole milliseconds, far enough apart that the stored text (millisecond precision)
    /// keeps them apart and in order.
    static let days: [Foundation.Date] = [
        -2_208_988_800, -1.5, 0, 0.25, 86_400, 1_700_000_000.5, 1_700_000_001, 4_102_444_800,
    ].map { Foundation.Date(timeIntervalSince1970: $0) }
}

/// The arguments of one call of every fetch.
struct Parameters: CustomStringConvertible {
    var string: String
    var optionalString: String?
    var low: String
    var high: String
    var list: [String]
    var n: Int
    var m: Int?
    var lowNumber: Int
    var highNumber: Int
    var numbers: [Int]
    var r: Double
    var b: Bool
    var d: Foundation.Date
    var from: Foundation.Date
    var to: Foundation.Date
    var days: [Foundation.Date]
    var mood: Mood
    var optionalMood: Mood?
    var moods: [Mood]
    /// A shelf id (1...5: some exist, some do not) or nil, and a list of them.
    var shelf: Shelf.ID?
    var shelves: [Shelf.ID]

    static func random(_ random: inout SplitMix) -> Parameters {
        Parameters(
            string: random.pick(Pools.patterns),
            optionalString: random.int(0...5) == 0 ? nil : random.pick(Pools.patterns),
            low: random.pick(Pools.strings), high: random.pick(Pools.strings),
            list: (0..<random.int(0...4)).map { _ in random.pick(Pools.strings) },
            n: random.pick([0, 1, 2, 3] + Pools.numbers),
            m: random.int(0...4) == 0 ? nil : random.pick(Pools.numbers),
            lowNumber: random.pick(Pools.numbers), highNumber: random.pick(Pools.numbers),
            numbers: (0..<random.int(0...4)).map { _ in random.pick(Pools.numbers) },
            r: random.int(0...8) == 0 ? .nan : random.pick(Pools.ratios),
            b: random.int(0...1) == 0,
            d: random.pick(Pools.days), from: random.pick(Pools.days), to: random.pick(Pools.days),
            days: (0..<random.int(0...3)).map { _ in random.pick(Pools.days) },
            mood: random.pick(Mood.allCases),
            optionalMood: random.int(0...3) == 0 ? nil : random.pick(Mood.allCases),
            moods: (0..<random.int(0...3)).map { _ in random.pick(Mood.allCases) },
            shelf: random.int(0...3) == 0 ? nil : Shelf.ID(rawValue: Int64(random.int(1...5))),
            shelves: (0..<random.int(0...3)).map { _ in Shelf.ID(rawValue: Int64(random.int(1...5))) })
    }

    var description: String {
        "(string \(string.debugDescription), optionalString \(optionalString.debugDescription), "
            + "low \(low.debugDescription), high \(high.debugDescription), list \(list), n \(n), m \(String(describing: m)), "
            + "numbers \(lowNumber)…\(highNumber) \(numbers), r \(r), b \(b), d \(d.timeIntervalSince1970), "
            + "from \(from.timeIntervalSince1970) to \(to.timeIntervalSince1970), mood \(mood) \(String(describing: optionalMood)) \(moods), "
            + "shelf \(String(describing: shelf?.rawValue)) shelves \(shelves.map(\.rawValue)))"
    }
}

extension PredicateLanguageTests {
    /// Random shelves, badges and words with letters; then a few texts with NUL characters
    /// written by raw SQL (the typed API refuses text with a NUL, so the pools' strings are
    /// inserted up to their first NUL).
    static func populate(_ store: Strata.Store, _ random: inout SplitMix) throws -> [ReferenceWord] {
        try store.write { db in
            var shelves: [(Shelf.ID, String, String?)] = []
            for _ in 0..<random.int(0...4) {
                let label = random.pick(Pools.strings), note = random.int(0...2) == 0 ? nil : random.pick(Pools.strings)
                shelves.append((try db.insert(Shelf(label: Reference.stored(label), note: note.map(Reference.stored))).id, label, note))
            }
            var badges: [(Badge.ID, String)] = []
            for _ in 0..<random.int(0...4) {
                let name = random.pick(Pools.strings)
                badges.append((try db.insert(Badge(name: Reference.stored(name))).id, name))
            }
            var words: [ReferenceWord] = []
            for _ in 0..<random.int(25...45) {
                let shelf = shelves.isEmpty || random.int(0...3) == 0 ? nil : random.pick(shelves)
                var word = ReferenceWord(
                    id: 0, text: random.pick(Pools.strings),
                    alt: random.int(0...4) == 0 ? nil : random.pick(Pools.strings),
                    number: random.pick(Pools.numbers), maybe: random.int(0...3) == 0 ? nil : random.pick(Pools.numbers),
                    ratio: random.pick(Pools.ratios), flag: random.int(0...1) == 0, day: random.pick(Pools.days),
                    mood: random.pick(Mood.allCases), maybeMood: random.int(0...2) == 0 ? nil : random.pick(Mood.allCases),
                    shelf: shelf.map { ($0.1, $0.2) }, shelfID: shelf?.0.rawValue, letters: [], badges: [])
                let inserted = try db.insert(Word(
                    text: Reference.stored(word.text), alt: word.alt.map(Reference.stored), number: word.number, maybe: word.maybe, ratio: word.ratio,
                    flag: word.flag, day: word.day, mood: word.mood, maybeMood: word.maybeMood, shelfID: shelf?.0))
                word.id = inserted.id.rawValue
                for _ in 0..<random.int(0...3) {
                    let letter = (glyph: random.pick(Pools.strings), rank: random.int(-1...3))
                    _ = try db.insert(Letter(glyph: Reference.stored(letter.glyph), rank: letter.rank, wordID: inserted.id))
                    word.letters.append((Reference.stored(letter.glyph), letter.rank))
                }
                for badge in badges where random.int(0...2) == 0 {
                    try db.link(inserted.id, Word.badges, badge.0)
                    word.badges.append(Reference.stored(badge.1))
                }
                word.text = Reference.stored(word.text)
                word.alt = word.alt.map(Reference.stored)
                word.shelf = word.shelf.map { (Reference.stored($0.label), $0.note.map(Reference.stored)) }
                words.append(word)
            }
            for _ in 0..<random.int(0...3) where !words.isEmpty {
                let index = random.int(0...(words.count - 1))
                let text = random.pick(["a\0b", "\0", "ß\0SS", "e\u{301}\0x", "a\0"])
                try db.execute(sql: "UPDATE Word SET text = CAST(? AS TEXT) WHERE id = ?", arguments: [Data(text.utf8), words[index].id])
                words[index].text = text
            }
            return words
        }
    }
}

// MARK: - The reference

/// A string operator of the language: `==`, `!=`, `CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `LIKE`.
enum TextOp { case equal, notEqual, contains, beginsWith, endsWith, like }

/// `[c]` and `[d]`.
enum Fold: Hashable { case c, d }

/// The documented semantics (Docs/ModelLanguage.md, "The predicate language"), written out
/// without the runtime.
enum Reference {
    /// Text is stored, and string values are bound, up to the first NUL character.
    static func stored(_ text: String) -> String {
        String(decoding: text.utf8.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// What `[c]`/`[d]` compare: the text up to its first NUL, folded with Foundation
    /// (`[c]` Unicode case folding, `[d]` diacritics removed), as Characters.
    static func characters(_ text: String, _ folds: Set<Fold>) -> [Character] {
        var options: String.CompareOptions = []
        if folds.contains(.c) { options.insert(.caseInsensitive) }
        if folds.contains(.d) { options.insert(.diacriticInsensitive) }
        let visible = stored(text)
        return Array(options.isEmpty ? visible : visible.folding(options: options, locale: nil))
    }

    /// `==` without options is SQL's `IS` on the stored bytes: nil equals nil.
    static func same(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): Array(a.utf8) == Array(b.utf8)
        default: false
        }
    }

    /// A stored string (`value`) against another stored string or a bound one (`other`).
    static func text(_ value: String?, _ op: TextOp, _ other: String?, _ folds: Set<Fold>) -> Bool {
        switch op {
        case .equal, .notEqual:
            let equal: Bool
            if folds.isEmpty {
                equal = same(value, other)
            } else if let value, let other {
                equal = characters(value, folds) == characters(other, folds)
            } else {
                equal = value == nil && other == nil
            }
            return op == .equal ? equal : !equal
        case .contains, .beginsWith, .endsWith, .like:
            guard let value, let other else { return false }
            let v = characters(value, folds), p = characters(other, folds)
            switch op {
            case .beginsWith: return v.starts(with: p)
            case .endsWith: return v.reversed().starts(with: p.reversed())
            case .contains: return p.isEmpty || v.indices.contains { v[$0...].starts(with: p) }
            default: return like(v, p)
            }
        }
    }

    /// `*` any run of characters, `?` one character, `\` before a character makes it itself
    /// (a trailing `\` is itself), everything else itself.
    static func like(_ v: [Character], _ raw: [Character]) -> Bool {
        // The pattern as (character, is a wildcard).
        var p: [(Character, Bool)] = []
        var k = 0
        while k < raw.count {
            if raw[k] == "\\" && k + 1 < raw.count {
                p.append((raw[k + 1], false))
                k += 2
            } else {
                p.append((raw[k], raw[k] == "*" || raw[k] == "?"))
                k += 1
            }
        }
        // matches[i][j]: v[i...] matches p[j...].
        var matches = Array(repeating: Array(repeating: false, count: p.count + 1), count: v.count + 1)
        matches[v.count][p.count] = true
        for j in stride(from: p.count - 1, through: 0, by: -1) {
            matches[v.count][j] = p[j] == ("*", true) && matches[v.count][j + 1]
        }
        for i in stride(from: v.count - 1, through: 0, by: -1) {
            for j in stride(from: p.count - 1, through: 0, by: -1) {
                switch p[j] {
                case ("*", true): matches[i][j] = matches[i][j + 1] || matches[i + 1][j]
                case ("?", true): matches[i][j] = matches[i + 1][j + 1]
                default: matches[i][j] = p[j].0 == v[i] && matches[i + 1][j + 1]
                }
            }
        }
        return matches[0][0]
    }

    /// Strings order by UTF-8 bytes.
    static func order(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        if x == y { return 0 }
        return x.lexicographicallyPrecedes(y) ? -1 : 1
    }

    /// An ordering comparison: false when a side is nil.
    static func ordered(_ order: Int?, _ op: (Int, Int) -> Bool) -> Bool {
        order.map { op($0, 0) } ?? false
    }

    /// An integer and a real compare exactly.
    static func order(_ d: Double, _ i: Int) -> Int {
        if d >= 9_223_372_036_854_775_808 { return 1 }
        if d < -9_223_372_036_854_775_808 { return -1 }
        let whole = Int(d.rounded(.down))
        if whole != i { return whole < i ? -1 : 1 }
        return d > Double(whole) ? 1 : 0
    }

    static func order(_ a: Double, _ b: Double) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
    static func order(_ a: Int, _ b: Int) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
    static func order(_ a: Foundation.Date, _ b: Foundation.Date) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    /// A `Double` parameter: NaN is nil, as SQLite binds it.
    static func bound(_ value: Double) -> Double? { value.isNaN ? nil : value }

    /// `x BETWEEN {low, high}`: `low <= x <= high`, false when x is nil.
    static func between<T>(_ x: T?, _ low: T, _ high: T, _ order: (T, T) -> Int) -> Bool {
        guard let x else { return false }
        return order(x, low) >= 0 && order(x, high) <= 0
    }

    /// `ANY`, `ALL` (true when empty), `NONE` (true when empty).
    static func any<T>(_ objects: [T], _ condition: (T) -> Bool) -> Bool { objects.contains(where: condition) }
    static func all<T>(_ objects: [T], _ condition: (T) -> Bool) -> Bool { objects.allSatisfy(condition) }
    static func none<T>(_ objects: [T], _ condition: (T) -> Bool) -> Bool { !objects.contains(where: condition) }
}

// MARK: - Cases

/// One fetch of Predicates.yaml: how to call it, and what the reference says it matches.
struct FetchCase: Sendable {
    var name: String
    var request: @Sendable (Parameters) -> Strata.ResultsRequest<Word, Strata.NoSection>
    var reference: @Sendable (ReferenceWord, Parameters) -> Bool

    init(
        _ name: String, _ request: @escaping @Sendable (Parameters) -> Strata.ResultsRequest<Word, Strata.NoSection>,
        reference: @escaping @Sendable (ReferenceWord, Parameters) -> Bool
    ) {
        self.name = name
        self.request = request
        self.reference = reference
    }
}

/// Where the grid of string fetches applies its operator.
enum StringTarget: Sendable {
    /// `text op $p` (String).
    case text
    /// `alt op $p` (String?; the parameter is optional for == and !=).
    case alt
    /// `shelf.label op $p` (through an optional to-one).
    case label
    /// `text op alt`: two columns.
    case pair
    /// `ANY`/`ALL`/`NONE letters.glyph op $p`.
    case anyGlyph, allGlyph, noneGlyph
}

// swift-format-ignore
func StringCase(
    _ name: String, _ target: StringTarget, _ op: TextOp, _ folds: Set<Fold>,
    _ request: @escaping @Sendable (Parameters) -> Strata.ResultsRequest<Word, Strata.NoSection>
) -> FetchCase {
    FetchCase(name, request) { word, p in
        let isEquality = op == .equal || op == .notEqual
        switch target {
        case .text: return Reference.text(word.text, op, Reference.stored(p.string), folds)
        case .alt: return Reference.text(word.alt, op, (isEquality ? p.optionalString : p.string).map(Reference.stored), folds)
        case .label:
            return Reference.text(word.shelf?.label, op, (isEquality ? p.optionalString : p.string).map(Reference.stored), folds)
        case .pair: return Reference.text(word.text, op, word.alt, folds)
        case .anyGlyph: return Reference.any(word.letters) { Reference.text($0.glyph, op, Reference.stored(p.string), folds) }
        case .allGlyph: return Reference.all(word.letters) { Reference.text($0.glyph, op, Reference.stored(p.string), folds) }
        case .noneGlyph: return Reference.none(word.letters) { Reference.text($0.glyph, op, Reference.stored(p.string), folds) }
        }
    }
}

extension PredicateLanguageTests {
    typealias R = Reference

    // swift-format-ignore
    static let cases: [FetchCase] = stringGrid + [
        // Other spellings of the operators and options.
        FetchCase("spellingEqual", { Word.Fetches.spellingEqual(p: $0.string) }) { w, p in R.text(w.text, .equal, R.stored(p.string), [.c]) },
        FetchCase("spellingNotEqual", { Word.Fetches.spellingNotEqual(p: $0.string) }) { w, p in R.text(w.text, .notEqual, R.stored(p.string), [.c, .d]) },
        FetchCase("spellingLowercase", { Word.Fetches.spellingLowercase(p: $0.string) }) { w, p in
            R.text(w.text, .contains, R.stored(p.string), [.c, .d]) || R.text(w.alt, .like, R.stored(p.string), [.c])
        },
        FetchCase("spellingFlipped", { Word.Fetches.spellingFlipped(p: $0.optionalString) }) { w, p in R.text(w.alt, .equal, p.optionalString.map(R.stored), [.c]) },
        FetchCase("spellingSome", { Word.Fetches.spellingSome(p: $0.string) }) { w, p in R.any(w.letters) { R.text($0.glyph, .equal, R.stored(p.string), [.d]) } },
        // String literals in the predicate text.
        FetchCase("literalFolded", { _ in Word.Fetches.literalFolded }) { w, _ in
            R.text(w.text, .equal, "STRASSE", [.c]) || R.text(w.text, .equal, "E\u{301}", [.c, .d]) || R.text(w.alt, .notEqual, "resume", [.d])
        },
        FetchCase("literalEmpty", { _ in Word.Fetches.literalEmpty }) { w, _ in
            R.text(w.text, .equal, "", [.c, .d]) || (R.text(w.alt, .beginsWith, "", [.c]) && R.text(w.alt, .endsWith, "", []))
        },
        FetchCase("literalWildcards", { _ in Word.Fetches.literalWildcards }) { w, _ in
            R.text(w.text, .like, "*%*", []) || R.text(w.text, .like, "?_?", [.c]) || R.text(w.alt, .contains, "\\", [])
                || R.text(w.alt, .like, "a\\?", [])
        },
        FetchCase("literalNul", { _ in Word.Fetches.literalNul }) { w, _ in
            R.text(w.text, .equal, R.stored("a\0b"), []) || R.text(w.alt, .contains, R.stored("\0zzz"), [.c])
        },
        // Strings: order, IN, BETWEEN.
        FetchCase("textLess", { Word.Fetches.textLess(p: $0.string) }) { w, p in R.order(w.text, R.stored(p.string)) < 0 },
        FetchCase("textLessOrEqual", { Word.Fetches.textLessOrEqual(p: $0.string) }) { w, p in R.order(w.text, R.stored(p.string)) <= 0 },
        FetchCase("textGreater", { Word.Fetches.textGreater(p: $0.string) }) { w, p in R.order(w.text, R.stored(p.string)) > 0 },
        FetchCase("textGreaterOrEqual", { Word.Fetches.textGreaterOrEqual(p: $0.string) }) { w, p in R.order(w.text, R.stored(p.string)) >= 0 },
        FetchCase("altGreater", { Word.Fetches.altGreater(p: $0.string) }) { w, p in R.ordered(w.alt.map { R.order($0, R.stored(p.string)) }, >) },
        FetchCase("labelLess", { Word.Fetches.labelLess(p: $0.string) }) { w, p in R.ordered(w.shelf.map { R.order($0.label, R.stored(p.string)) }, <=) },
        FetchCase("textBetween", { Word.Fetches.textBetween(low: $0.low, high: $0.high) }) { w, p in R.between(w.text, R.stored(p.low), R.stored(p.high), R.order) },
        FetchCase("textInList", { _ in Word.Fetches.textInList }) { w, _ in ["é", "e\u{301}", "ß", "", "a"].contains { R.same(w.text, $0) } },
        FetchCase("textInParameter", { Word.Fetches.textInParameter(list: $0.list) }) { w, p in p.list.contains { R.same(w.text, R.stored($0)) } },
        FetchCase("altInList", { _ in Word.Fetches.altInList }) { w, _ in [nil, "A", "ss"].contains { R.same(w.alt, $0) } },
        FetchCase("altInParameter", { Word.Fetches.altInParameter(list: $0.list) }) { w, p in p.list.contains { R.same(w.alt, R.stored($0)) } },
        FetchCase("altIsNil", { _ in Word.Fetches.altIsNil }) { w, _ in w.alt == nil },
        FetchCase("altIsNotNil", { _ in Word.Fetches.altIsNotNil }) { w, _ in w.alt != nil },
        FetchCase("labelInParameter", { Word.Fetches.labelInParameter(list: $0.list) }) { w, p in p.list.contains { R.same(w.shelf?.label, R.stored($0)) } },
        // Int, Int?.
        FetchCase("numberEqual", { Word.Fetches.numberEqual(n: $0.n) }) { w, p in w.number == p.n },
        FetchCase("numberNotEqual", { Word.Fetches.numberNotEqual(n: $0.n) }) { w, p in w.number != p.n },
        FetchCase("numberLess", { Word.Fetches.numberLess(n: $0.n) }) { w, p in w.number < p.n },
        FetchCase("numberLessOrEqual", { Word.Fetches.numberLessOrEqual(n: $0.n) }) { w, p in w.number <= p.n },
        FetchCase("numberGreater", { Word.Fetches.numberGreater(n: $0.n) }) { w, p in w.number > p.n },
        FetchCase("numberGreaterOrEqual", { Word.Fetches.numberGreaterOrEqual(n: $0.n) }) { w, p in w.number >= p.n },
        FetchCase("numberFlipped", { _ in Word.Fetches.numberFlipped }) { w, _ in w.number < 2 },
        FetchCase("numberInList", { _ in Word.Fetches.numberInList }) { w, _ in [-2, 0, 3].contains(w.number) },
        FetchCase("numberInParameter", { Word.Fetches.numberInParameter(numbers: $0.numbers) }) { w, p in p.numbers.contains(w.number) },
        FetchCase("numberBetween", { _ in Word.Fetches.numberBetween }) { w, _ in R.between(w.number, -1, 2, R.order) },
        FetchCase("numberBetweenParameters", { Word.Fetches.numberBetweenParameters(low: $0.lowNumber, high: $0.highNumber) }) { w, p in
            R.between(w.number, p.lowNumber, p.highNumber, R.order)
        },
        FetchCase("maybeIsNil", { _ in Word.Fetches.maybeIsNil }) { w, _ in w.maybe == nil },
        FetchCase("maybeIsNotNil", { _ in Word.Fetches.maybeIsNotNil }) { w, _ in w.maybe != nil },
        FetchCase("maybeEqual", { Word.Fetches.maybeEqual(m: $0.m) }) { w, p in w.maybe == p.m },
        FetchCase("maybeNotEqual", { Word.Fetches.maybeNotEqual(m: $0.m) }) { w, p in w.maybe != p.m },
        FetchCase("maybeLess", { _ in Word.Fetches.maybeLess }) { w, _ in R.ordered(w.maybe.map { R.order($0, 1) }, <) },
        FetchCase("maybeInList", { _ in Word.Fetches.maybeInList }) { w, _ in [nil, 1].contains(w.maybe) },
        FetchCase("maybeInParameter", { Word.Fetches.maybeInParameter(numbers: $0.numbers) }) { w, p in w.maybe.map(p.numbers.contains) ?? false },
        FetchCase("maybeBetween", { Word.Fetches.maybeBetween(high: $0.highNumber) }) { w, p in R.between(w.maybe, 0, p.highNumber, R.order) },
        // Double.
        FetchCase("ratioEqual", { _ in Word.Fetches.ratioEqual }) { w, _ in w.ratio == 0.5 },
        FetchCase("ratioNotEqual", { Word.Fetches.ratioNotEqual(r: $0.r) }) { w, p in R.bound(p.r) != w.ratio },
        FetchCase("ratioLess", { Word.Fetches.ratioLess(r: $0.r) }) { w, p in R.ordered(R.bound(p.r).map { R.order(w.ratio, $0) }, <) },
        FetchCase("ratioGreaterOrEqual", { _ in Word.Fetches.ratioGreaterOrEqual }) { w, _ in w.ratio >= 1 },
        FetchCase("ratioBetween", { _ in Word.Fetches.ratioBetween }) { w, _ in R.between(w.ratio, -0.5, 1.5, R.order) },
        FetchCase("ratioInList", { _ in Word.Fetches.ratioInList }) { w, _ in [0.5, 2, -1].contains(w.ratio) },
        // Bool.
        FetchCase("flagTrue", { _ in Word.Fetches.flagTrue }) { w, _ in w.flag },
        FetchCase("flagNotFalse", { _ in Word.Fetches.flagNotFalse }) { w, _ in w.flag },
        FetchCase("flagParameter", { Word.Fetches.flagParameter(b: $0.b) }) { w, p in w.flag == p.b },
        FetchCase("flagInList", { _ in Word.Fetches.flagInList }) { w, _ in w.flag },
        // Date.
        FetchCase("dayEqual", { Word.Fetches.dayEqual(d: $0.d) }) { w, p in w.day == p.d },
        FetchCase("dayNotEqual", { Word.Fetches.dayNotEqual(d: $0.d) }) { w, p in w.day != p.d },
        FetchCase("dayLess", { Word.Fetches.dayLess(d: $0.d) }) { w, p in w.day < p.d },
        FetchCase("dayLessOrEqual", { Word.Fetches.dayLessOrEqual(d: $0.d) }) { w, p in w.day <= p.d },
        FetchCase("dayGreater", { Word.Fetches.dayGreater(d: $0.d) }) { w, p in w.day > p.d },
        FetchCase("dayGreaterOrEqual", { Word.Fetches.dayGreaterOrEqual(d: $0.d) }) { w, p in w.day >= p.d },
        FetchCase("dayBetween", { Word.Fetches.dayBetween(from: $0.from, to: $0.to) }) { w, p in R.between(w.day, p.from, p.to, R.order) },
        FetchCase("dayInParameter", { Word.Fetches.dayInParameter(days: $0.days) }) { w, p in p.days.contains(w.day) },
        // Enums.
        FetchCase("moodEqual", { _ in Word.Fetches.moodEqual }) { w, _ in w.mood == .happy },
        FetchCase("moodNotEqual", { _ in Word.Fetches.moodNotEqual }) { w, _ in w.mood != .calm },
        FetchCase("moodParameter", { Word.Fetches.moodParameter(mood: $0.mood) }) { w, p in w.mood == p.mood },
        FetchCase("moodInList", { _ in Word.Fetches.moodInList }) { w, _ in [.calm, .sad].contains(w.mood) },
        FetchCase("moodInParameter", { Word.Fetches.moodInParameter(moods: $0.moods) }) { w, p in p.moods.contains(w.mood) },
        FetchCase("maybeMoodIsNil", { _ in Word.Fetches.maybeMoodIsNil }) { w, _ in w.maybeMood == nil },
        FetchCase("maybeMoodNotEqual", { _ in Word.Fetches.maybeMoodNotEqual }) { w, _ in w.maybeMood != .sad },
        FetchCase("maybeMoodParameter", { Word.Fetches.maybeMoodParameter(mood: $0.optionalMood) }) { w, p in w.maybeMood == p.optionalMood },
        FetchCase("maybeMoodInList", { _ in Word.Fetches.maybeMoodInList }) { w, _ in [nil, .calm].contains(w.maybeMood) },
        // To-one relationships.
        FetchCase("shelfIsNil", { _ in Word.Fetches.shelfIsNil }) { w, _ in w.shelf == nil },
        FetchCase("shelfIsNotNil", { _ in Word.Fetches.shelfIsNotNil }) { w, _ in w.shelf != nil },
        FetchCase("shelfNoteIsNil", { _ in Word.Fetches.shelfNoteIsNil }) { w, _ in w.shelf?.note == nil },
        FetchCase("shelfNoteNotEqual", { Word.Fetches.shelfNoteNotEqual(p: $0.optionalString) }) { w, p in !R.same(w.shelf?.note, p.optionalString.map(R.stored)) },
        // Two key paths.
        FetchCase("columnsNumbers", { _ in Word.Fetches.columnsNumbers }) { w, _ in R.ordered(w.maybe.map { R.order(w.number, $0) }, <) },
        FetchCase("columnsMixed", { _ in Word.Fetches.columnsMixed }) { w, _ in R.order(w.ratio, w.number) >= 0 },
        FetchCase("columnsMoods", { _ in Word.Fetches.columnsMoods }) { w, _ in w.mood == w.maybeMood },
        FetchCase("columnsThroughToOne", { _ in Word.Fetches.columnsThroughToOne }) { w, _ in !R.same(w.text, w.shelf?.label) },
        FetchCase("columnsCountAndNumber", { _ in Word.Fetches.columnsCountAndNumber }) { w, _ in w.letters.count > w.number },
        FetchCase("columnsCounts", { _ in Word.Fetches.columnsCounts }) { w, _ in w.letters.count == w.badges.count },
        // @count.
        FetchCase("countEqual", { _ in Word.Fetches.countEqual }) { w, _ in w.letters.isEmpty },
        FetchCase("countNotEqual", { Word.Fetches.countNotEqual(n: $0.n) }) { w, p in w.letters.count != p.n },
        FetchCase("countLess", { Word.Fetches.countLess(n: $0.n) }) { w, p in w.letters.count < p.n },
        FetchCase("countLessOrEqual", { _ in Word.Fetches.countLessOrEqual }) { w, _ in w.letters.count <= 1 },
        FetchCase("countGreater", { _ in Word.Fetches.countGreater }) { w, _ in w.badges.count > 1 },
        FetchCase("countGreaterOrEqual", { Word.Fetches.countGreaterOrEqual(n: $0.n) }) { w, p in w.letters.count >= p.n },
        FetchCase("countFlipped", { _ in Word.Fetches.countFlipped }) { w, _ in 2 <= w.letters.count },
        FetchCase("countInList", { _ in Word.Fetches.countInList }) { w, _ in [0, 2].contains(w.letters.count) },
        FetchCase("countInParameter", { Word.Fetches.countInParameter(numbers: $0.numbers) }) { w, p in p.numbers.contains(w.badges.count) },
        FetchCase("countBetween", { Word.Fetches.countBetween(high: $0.highNumber) }) { w, p in R.between(w.letters.count, 1, p.highNumber, R.order) },
        // Quantifiers over other types, and a many-to-many.
        FetchCase("anyRank", { Word.Fetches.anyRank(n: $0.n) }) { w, p in R.any(w.letters) { $0.rank > p.n } },
        FetchCase("allRank", { _ in Word.Fetches.allRank }) { w, _ in R.all(w.letters) { R.between($0.rank, 0, 2, R.order) } },
        FetchCase("noneRank", { _ in Word.Fetches.noneRank }) { w, _ in R.none(w.letters) { [1, 2].contains($0.rank) } },
        FetchCase("someGlyphIn", { Word.Fetches.someGlyphIn(list: $0.list) }) { w, p in R.any(w.letters) { l in p.list.contains { R.same(l.glyph, R.stored($0)) } } },
        FetchCase("anyBadge", { Word.Fetches.anyBadge(p: $0.string) }) { w, p in R.any(w.badges) { R.text($0, .equal, R.stored(p.string), [.c]) } },
        FetchCase("allBadge", { Word.Fetches.allBadge(p: $0.string) }) { w, p in R.all(w.badges) { R.text($0, .contains, R.stored(p.string), [.c, .d]) } },
        FetchCase("noneBadge", { Word.Fetches.noneBadge(p: $0.string) }) { w, p in R.none(w.badges) { R.text($0, .like, R.stored(p.string), [.d]) } },
        // Logic and constants.
        FetchCase("notFolded", { Word.Fetches.notFolded(p: $0.string) }) { w, p in !R.text(w.text, .equal, R.stored(p.string), [.c]) },
        FetchCase("logic", { Word.Fetches.logic(p: $0.string) }) { w, p in
            (R.text(w.text, .equal, R.stored(p.string), [.c]) && !w.flag)
                || (w.number > 2 && R.text(w.alt, .notEqual, R.stored(p.string), [.d]))
                || w.mood != .sad
        },
        FetchCase("truePredicate", { _ in Word.Fetches.truePredicate }) { _, _ in true },
        FetchCase("falsePredicate", { _ in Word.Fetches.falsePredicate }) { _, _ in false },
        FetchCase("trueConstant", { _ in Word.Fetches.trueConstant }) { _, _ in true },
        FetchCase("falseConstant", { _ in Word.Fetches.falseConstant }) { _, _ in false },
        // A to-one against an object id: `==`/`!=` compare like `IS`/`IS NOT` (nil matches
        // the words on no shelf), `IN` never matches those.
        FetchCase("onShelf", { Word.Fetches.onShelf(shelf: $0.shelf) }) { w, p in w.shelfID == p.shelf?.rawValue },
        FetchCase("offShelf", { Word.Fetches.offShelf(shelf: $0.shelf) }) { w, p in w.shelfID != p.shelf?.rawValue },
        FetchCase("onShelves", { Word.Fetches.onShelves(shelves: $0.shelves) }) { w, p in
            w.shelfID.map { id in p.shelves.contains { $0.rawValue == id } } ?? false
        },
    ]

    // swift-format-ignore
    static let stringGrid: [FetchCase] = [
        StringCase("textEq", .text, .equal, []) { Word.Fetches.textEq(p: $0.string) },
        StringCase("textEqC", .text, .equal, [.c]) { Word.Fetches.textEqC(p: $0.string) },
        StringCase("textEqD", .text, .equal, [.d]) { Word.Fetches.textEqD(p: $0.string) },
        StringCase("textEqCD", .text, .equal, [.c, .d]) { Word.Fetches.textEqCD(p: $0.string) },
        StringCase("textNe", .text, .notEqual, []) { Word.Fetches.textNe(p: $0.string) },
        StringCase("textNeC", .text, .notEqual, [.c]) { Word.Fetches.textNeC(p: $0.string) },
        StringCase("textNeD", .text, .notEqual, [.d]) { Word.Fetches.textNeD(p: $0.string) },
        StringCase("textNeCD", .text, .notEqual, [.c, .d]) { Word.Fetches.textNeCD(p: $0.string) },
        StringCase("textContains", .text, .contains, []) { Word.Fetches.textContains(p: $0.string) },
        StringCase("textContainsC", .text, .contains, [.c]) { Word.Fetches.textContainsC(p: $0.string) },
        StringCase("textContainsD", .text, .contains, [.d]) { Word.Fetches.textContainsD(p: $0.string) },
        StringCase("textContainsCD", .text, .contains, [.c, .d]) { Word.Fetches.textContainsCD(p: $0.string) },
        StringCase("textBegins", .text, .beginsWith, []) { Word.Fetches.textBegins(p: $0.string) },
        StringCase("textBeginsC", .text, .beginsWith, [.c]) { Word.Fetches.textBeginsC(p: $0.string) },
        StringCase("textBeginsD", .text, .beginsWith, [.d]) { Word.Fetches.textBeginsD(p: $0.string) },
        StringCase("textBeginsCD", .text, .beginsWith, [.c, .d]) { Word.Fetches.textBeginsCD(p: $0.string) },
        StringCase("textEnds", .text, .endsWith, []) { Word.Fetches.textEnds(p: $0.string) },
        StringCase("textEndsC", .text, .endsWith, [.c]) { Word.Fetches.textEndsC(p: $0.string) },
        StringCase("textEndsD", .text, .endsWith, [.d]) { Word.Fetches.textEndsD(p: $0.string) },
        StringCase("textEndsCD", .text, .endsWith, [.c, .d]) { Word.Fetches.textEndsCD(p: $0.string) },
        StringCase("textLike", .text, .like, []) { Word.Fetches.textLike(p: $0.string) },
        StringCase("textLikeC", .text, .like, [.c]) { Word.Fetches.textLikeC(p: $0.string) },
        StringCase("textLikeD", .text, .like, [.d]) { Word.Fetches.textLikeD(p: $0.string) },
        StringCase("textLikeCD", .text, .like, [.c, .d]) { Word.Fetches.textLikeCD(p: $0.string) },
        StringCase("altEq", .alt, .equal, []) { Word.Fetches.altEq(p: $0.optionalString) },
        StringCase("altEqC", .alt, .equal, [.c]) { Word.Fetches.altEqC(p: $0.optionalString) },
        StringCase("altEqD", .alt, .equal, [.d]) { Word.Fetches.altEqD(p: $0.optionalString) },
        StringCase("altEqCD", .alt, .equal, [.c, .d]) { Word.Fetches.altEqCD(p: $0.optionalString) },
        StringCase("altNe", .alt, .notEqual, []) { Word.Fetches.altNe(p: $0.optionalString) },
        StringCase("altNeC", .alt, .notEqual, [.c]) { Word.Fetches.altNeC(p: $0.optionalString) },
        StringCase("altNeD", .alt, .notEqual, [.d]) { Word.Fetches.altNeD(p: $0.optionalString) },
        StringCase("altNeCD", .alt, .notEqual, [.c, .d]) { Word.Fetches.altNeCD(p: $0.optionalString) },
        StringCase("altContains", .alt, .contains, []) { Word.Fetches.altContains(p: $0.string) },
        StringCase("altContainsC", .alt, .contains, [.c]) { Word.Fetches.altContainsC(p: $0.string) },
        StringCase("altContainsD", .alt, .contains, [.d]) { Word.Fetches.altContainsD(p: $0.string) },
        StringCase("altContainsCD", .alt, .contains, [.c, .d]) { Word.Fetches.altContainsCD(p: $0.string) },
        StringCase("altBegins", .alt, .beginsWith, []) { Word.Fetches.altBegins(p: $0.string) },
        StringCase("altBeginsC", .alt, .beginsWith, [.c]) { Word.Fetches.altBeginsC(p: $0.string) },
        StringCase("altBeginsD", .alt, .beginsWith, [.d]) { Word.Fetches.altBeginsD(p: $0.string) },
        StringCase("altBeginsCD", .alt, .beginsWith, [.c, .d]) { Word.Fetches.altBeginsCD(p: $0.string) },
        StringCase("altEnds", .alt, .endsWith, []) { Word.Fetches.altEnds(p: $0.string) },
        StringCase("altEndsC", .alt, .endsWith, [.c]) { Word.Fetches.altEndsC(p: $0.string) },
        StringCase("altEndsD", .alt, .endsWith, [.d]) { Word.Fetches.altEndsD(p: $0.string) },
        StringCase("altEndsCD", .alt, .endsWith, [.c, .d]) { Word.Fetches.altEndsCD(p: $0.string) },
        StringCase("altLike", .alt, .like, []) { Word.Fetches.altLike(p: $0.string) },
        StringCase("altLikeC", .alt, .like, [.c]) { Word.Fetches.altLikeC(p: $0.string) },
        StringCase("altLikeD", .alt, .like, [.d]) { Word.Fetches.altLikeD(p: $0.string) },
        StringCase("altLikeCD", .alt, .like, [.c, .d]) { Word.Fetches.altLikeCD(p: $0.string) },
        StringCase("labelEq", .label, .equal, []) { Word.Fetches.labelEq(p: $0.optionalString) },
        StringCase("labelEqC", .label, .equal, [.c]) { Word.Fetches.labelEqC(p: $0.optionalString) },
        StringCase("labelEqD", .label, .equal, [.d]) { Word.Fetches.labelEqD(p: $0.optionalString) },
        StringCase("labelEqCD", .label, .equal, [.c, .d]) { Word.Fetches.labelEqCD(p: $0.optionalString) },
        StringCase("labelNe", .label, .notEqual, []) { Word.Fetches.labelNe(p: $0.optionalString) },
        StringCase("labelNeC", .label, .notEqual, [.c]) { Word.Fetches.labelNeC(p: $0.optionalString) },
        StringCase("labelNeD", .label, .notEqual, [.d]) { Word.Fetches.labelNeD(p: $0.optionalString) },
        StringCase("labelNeCD", .label, .notEqual, [.c, .d]) { Word.Fetches.labelNeCD(p: $0.optionalString) },
        StringCase("labelContains", .label, .contains, []) { Word.Fetches.labelContains(p: $0.string) },
        StringCase("labelContainsC", .label, .contains, [.c]) { Word.Fetches.labelContainsC(p: $0.string) },
        StringCase("labelContainsD", .label, .contains, [.d]) { Word.Fetches.labelContainsD(p: $0.string) },
        StringCase("labelContainsCD", .label, .contains, [.c, .d]) { Word.Fetches.labelContainsCD(p: $0.string) },
        StringCase("labelBegins", .label, .beginsWith, []) { Word.Fetches.labelBegins(p: $0.string) },
        StringCase("labelBeginsC", .label, .beginsWith, [.c]) { Word.Fetches.labelBeginsC(p: $0.string) },
        StringCase("labelBeginsD", .label, .beginsWith, [.d]) { Word.Fetches.labelBeginsD(p: $0.string) },
        StringCase("labelBeginsCD", .label, .beginsWith, [.c, .d]) { Word.Fetches.labelBeginsCD(p: $0.string) },
        StringCase("labelEnds", .label, .endsWith, []) { Word.Fetches.labelEnds(p: $0.string) },
        StringCase("labelEndsC", .label, .endsWith, [.c]) { Word.Fetches.labelEndsC(p: $0.string) },
        StringCase("labelEndsD", .label, .endsWith, [.d]) { Word.Fetches.labelEndsD(p: $0.string) },
        StringCase("labelEndsCD", .label, .endsWith, [.c, .d]) { Word.Fetches.labelEndsCD(p: $0.string) },
        StringCase("labelLike", .label, .like, []) { Word.Fetches.labelLike(p: $0.string) },
        StringCase("labelLikeC", .label, .like, [.c]) { Word.Fetches.labelLikeC(p: $0.string) },
        StringCase("labelLikeD", .label, .like, [.d]) { Word.Fetches.labelLikeD(p: $0.string) },
        StringCase("labelLikeCD", .label, .like, [.c, .d]) { Word.Fetches.labelLikeCD(p: $0.string) },
        StringCase("pairEq", .pair, .equal, []) { _ in Word.Fetches.pairEq },
        StringCase("pairEqC", .pair, .equal, [.c]) { _ in Word.Fetches.pairEqC },
        StringCase("pairEqD", .pair, .equal, [.d]) { _ in Word.Fetches.pairEqD },
        StringCase("pairEqCD", .pair, .equal, [.c, .d]) { _ in Word.Fetches.pairEqCD },
        StringCase("pairNe", .pair, .notEqual, []) { _ in Word.Fetches.pairNe },
        StringCase("pairNeC", .pair, .notEqual, [.c]) { _ in Word.Fetches.pairNeC },
        StringCase("pairNeD", .pair, .notEqual, [.d]) { _ in Word.Fetches.pairNeD },
        StringCase("pairNeCD", .pair, .notEqual, [.c, .d]) { _ in Word.Fetches.pairNeCD },
        StringCase("pairContains", .pair, .contains, []) { _ in Word.Fetches.pairContains },
        StringCase("pairContainsC", .pair, .contains, [.c]) { _ in Word.Fetches.pairContainsC },
        StringCase("pairContainsD", .pair, .contains, [.d]) { _ in Word.Fetches.pairContainsD },
        StringCase("pairContainsCD", .pair, .contains, [.c, .d]) { _ in Word.Fetches.pairContainsCD },
        StringCase("pairBegins", .pair, .beginsWith, []) { _ in Word.Fetches.pairBegins },
        StringCase("pairBeginsC", .pair, .beginsWith, [.c]) { _ in Word.Fetches.pairBeginsC },
        StringCase("pairBeginsD", .pair, .beginsWith, [.d]) { _ in Word.Fetches.pairBeginsD },
        StringCase("pairBeginsCD", .pair, .beginsWith, [.c, .d]) { _ in Word.Fetches.pairBeginsCD },
        StringCase("pairEnds", .pair, .endsWith, []) { _ in Word.Fetches.pairEnds },
        StringCase("pairEndsC", .pair, .endsWith, [.c]) { _ in Word.Fetches.pairEndsC },
        StringCase("pairEndsD", .pair, .endsWith, [.d]) { _ in Word.Fetches.pairEndsD },
        StringCase("pairEndsCD", .pair, .endsWith, [.c, .d]) { _ in Word.Fetches.pairEndsCD },
        StringCase("pairLike", .pair, .like, []) { _ in Word.Fetches.pairLike },
        StringCase("pairLikeC", .pair, .like, [.c]) { _ in Word.Fetches.pairLikeC },
        StringCase("pairLikeD", .pair, .like, [.d]) { _ in Word.Fetches.pairLikeD },
        StringCase("pairLikeCD", .pair, .like, [.c, .d]) { _ in Word.Fetches.pairLikeCD },
        StringCase("anyGlyphEq", .anyGlyph, .equal, []) { Word.Fetches.anyGlyphEq(p: $0.string) },
        StringCase("anyGlyphEqC", .anyGlyph, .equal, [.c]) { Word.Fetches.anyGlyphEqC(p: $0.string) },
        StringCase("anyGlyphEqD", .anyGlyph, .equal, [.d]) { Word.Fetches.anyGlyphEqD(p: $0.string) },
        StringCase("anyGlyphEqCD", .anyGlyph, .equal, [.c, .d]) { Word.Fetches.anyGlyphEqCD(p: $0.string) },
        StringCase("anyGlyphNe", .anyGlyph, .notEqual, []) { Word.Fetches.anyGlyphNe(p: $0.string) },
        StringCase("anyGlyphNeC", .anyGlyph, .notEqual, [.c]) { Word.Fetches.anyGlyphNeC(p: $0.string) },
        StringCase("anyGlyphNeD", .anyGlyph, .notEqual, [.d]) { Word.Fetches.anyGlyphNeD(p: $0.string) },
        StringCase("anyGlyphNeCD", .anyGlyph, .notEqual, [.c, .d]) { Word.Fetches.anyGlyphNeCD(p: $0.string) },
        StringCase("anyGlyphContains", .anyGlyph, .contains, []) { Word.Fetches.anyGlyphContains(p: $0.string) },
        StringCase("anyGlyphContainsC", .anyGlyph, .contains, [.c]) { Word.Fetches.anyGlyphContainsC(p: $0.string) },
        StringCase("anyGlyphContainsD", .anyGlyph, .contains, [.d]) { Word.Fetches.anyGlyphContainsD(p: $0.string) },
        StringCase("anyGlyphContainsCD", .anyGlyph, .contains, [.c, .d]) { Word.Fetches.anyGlyphContainsCD(p: $0.string) },
        StringCase("anyGlyphBegins", .anyGlyph, .beginsWith, []) { Word.Fetches.anyGlyphBegins(p: $0.string) },
        StringCase("anyGlyphBeginsC", .anyGlyph, .beginsWith, [.c]) { Word.Fetches.anyGlyphBeginsC(p: $0.string) },
        StringCase("anyGlyphBeginsD", .anyGlyph, .beginsWith, [.d]) { Word.Fetches.anyGlyphBeginsD(p: $0.string) },
        StringCase("anyGlyphBeginsCD", .anyGlyph, .beginsWith, [.c, .d]) { Word.Fetches.anyGlyphBeginsCD(p: $0.string) },
        StringCase("anyGlyphEnds", .anyGlyph, .endsWith, []) { Word.Fetches.anyGlyphEnds(p: $0.string) },
        StringCase("anyGlyphEndsC", .anyGlyph, .endsWith, [.c]) { Word.Fetches.anyGlyphEndsC(p: $0.string) },
        StringCase("anyGlyphEndsD", .anyGlyph, .endsWith, [.d]) { Word.Fetches.anyGlyphEndsD(p: $0.string) },
        StringCase("anyGlyphEndsCD", .anyGlyph, .endsWith, [.c, .d]) { Word.Fetches.anyGlyphEndsCD(p: $0.string) },
        StringCase("anyGlyphLike", .anyGlyph, .like, []) { Word.Fetches.anyGlyphLike(p: $0.string) },
        StringCase("anyGlyphLikeC", .anyGlyph, .like, [.c]) { Word.Fetches.anyGlyphLikeC(p: $0.string) },
        StringCase("anyGlyphLikeD", .anyGlyph, .like, [.d]) { Word.Fetches.anyGlyphLikeD(p: $0.string) },
        StringCase("anyGlyphLikeCD", .anyGlyph, .like, [.c, .d]) { Word.Fetches.anyGlyphLikeCD(p: $0.string) },
        StringCase("allGlyphEq", .allGlyph, .equal, []) { Word.Fetches.allGlyphEq(p: $0.string) },
        StringCase("allGlyphEqC", .allGlyph, .equal, [.c]) { Word.Fetches.allGlyphEqC(p: $0.string) },
        StringCase("allGlyphEqD", .allGlyph, .equal, [.d]) { Word.Fetches.allGlyphEqD(p: $0.string) },
        StringCase("allGlyphEqCD", .allGlyph, .equal, [.c, .d]) { Word.Fetches.allGlyphEqCD(p: $0.string) },
        StringCase("allGlyphNe", .allGlyph, .notEqual, []) { Word.Fetches.allGlyphNe(p: $0.string) },
        StringCase("allGlyphNeC", .allGlyph, .notEqual, [.c]) { Word.Fetches.allGlyphNeC(p: $0.string) },
        StringCase("allGlyphNeD", .allGlyph, .notEqual, [.d]) { Word.Fetches.allGlyphNeD(p: $0.string) },
        StringCase("allGlyphNeCD", .allGlyph, .notEqual, [.c, .d]) { Word.Fetches.allGlyphNeCD(p: $0.string) },
        StringCase("allGlyphContains", .allGlyph, .contains, []) { Word.Fetches.allGlyphContains(p: $0.string) },
        StringCase("allGlyphContainsC", .allGlyph, .contains, [.c]) { Word.Fetches.allGlyphContainsC(p: $0.string) },
        StringCase("allGlyphContainsD", .allGlyph, .contains, [.d]) { Word.Fetches.allGlyphContainsD(p: $0.string) },
        StringCase("allGlyphContainsCD", .allGlyph, .contains, [.c, .d]) { Word.Fetches.allGlyphContainsCD(p: $0.string) },
        StringCase("allGlyphBegins", .allGlyph, .beginsWith, []) { Word.Fetches.allGlyphBegins(p: $0.string) },
        StringCase("allGlyphBeginsC", .allGlyph, .beginsWith, [.c]) { Word.Fetches.allGlyphBeginsC(p: $0.string) },
        StringCase("allGlyphBeginsD", .allGlyph, .beginsWith, [.d]) { Word.Fetches.allGlyphBeginsD(p: $0.string) },
        StringCase("allGlyphBeginsCD", .allGlyph, .beginsWith, [.c, .d]) { Word.Fetches.allGlyphBeginsCD(p: $0.string) },
        StringCase("allGlyphEnds", .allGlyph, .endsWith, []) { Word.Fetches.allGlyphEnds(p: $0.string) },
        StringCase("allGlyphEndsC", .allGlyph, .endsWith, [.c]) { Word.Fetches.allGlyphEndsC(p: $0.string) },
        StringCase("allGlyphEndsD", .allGlyph, .endsWith, [.d]) { Word.Fetches.allGlyphEndsD(p: $0.string) },
        StringCase("allGlyphEndsCD", .allGlyph, .endsWith, [.c, .d]) { Word.Fetches.allGlyphEndsCD(p: $0.string) },
        StringCase("allGlyphLike", .allGlyph, .like, []) { Word.Fetches.allGlyphLike(p: $0.string) },
        StringCase("allGlyphLikeC", .allGlyph, .like, [.c]) { Word.Fetches.allGlyphLikeC(p: $0.string) },
        StringCase("allGlyphLikeD", .allGlyph, .like, [.d]) { Word.Fetches.allGlyphLikeD(p: $0.string) },
        StringCase("allGlyphLikeCD", .allGlyph, .like, [.c, .d]) { Word.Fetches.allGlyphLikeCD(p: $0.string) },
        StringCase("noneGlyphEq", .noneGlyph, .equal, []) { Word.Fetches.noneGlyphEq(p: $0.string) },
        StringCase("noneGlyphEqC", .noneGlyph, .equal, [.c]) { Word.Fetches.noneGlyphEqC(p: $0.string) },
        StringCase("noneGlyphEqD", .noneGlyph, .equal, [.d]) { Word.Fetches.noneGlyphEqD(p: $0.string) },
        StringCase("noneGlyphEqCD", .noneGlyph, .equal, [.c, .d]) { Word.Fetches.noneGlyphEqCD(p: $0.string) },
        StringCase("noneGlyphNe", .noneGlyph, .notEqual, []) { Word.Fetches.noneGlyphNe(p: $0.string) },
        StringCase("noneGlyphNeC", .noneGlyph, .notEqual, [.c]) { Word.Fetches.noneGlyphNeC(p: $0.string) },
        StringCase("noneGlyphNeD", .noneGlyph, .notEqual, [.d]) { Word.Fetches.noneGlyphNeD(p: $0.string) },
        StringCase("noneGlyphNeCD", .noneGlyph, .notEqual, [.c, .d]) { Word.Fetches.noneGlyphNeCD(p: $0.string) },
        StringCase("noneGlyphContains", .noneGlyph, .contains, []) { Word.Fetches.noneGlyphContains(p: $0.string) },
        StringCase("noneGlyphContainsC", .noneGlyph, .contains, [.c]) { Word.Fetches.noneGlyphContainsC(p: $0.string) },
        StringCase("noneGlyphContainsD", .noneGlyph, .contains, [.d]) { Word.Fetches.noneGlyphContainsD(p: $0.string) },
        StringCase("noneGlyphContainsCD", .noneGlyph, .contains, [.c, .d]) { Word.Fetches.noneGlyphContainsCD(p: $0.string) },
        StringCase("noneGlyphBegins", .noneGlyph, .beginsWith, []) { Word.Fetches.noneGlyphBegins(p: $0.string) },
        StringCase("noneGlyphBeginsC", .noneGlyph, .beginsWith, [.c]) { Word.Fetches.noneGlyphBeginsC(p: $0.string) },
        StringCase("noneGlyphBeginsD", .noneGlyph, .beginsWith, [.d]) { Word.Fetches.noneGlyphBeginsD(p: $0.string) },
        StringCase("noneGlyphBeginsCD", .noneGlyph, .beginsWith, [.c, .d]) { Word.Fetches.noneGlyphBeginsCD(p: $0.string) },
        StringCase("noneGlyphEnds", .noneGlyph, .endsWith, []) { Word.Fetches.noneGlyphEnds(p: $0.string) },
        StringCase("noneGlyphEndsC", .noneGlyph, .endsWith, [.c]) { Word.Fetches.noneGlyphEndsC(p: $0.string) },
        StringCase("noneGlyphEndsD", .noneGlyph, .endsWith, [.d]) { Word.Fetches.noneGlyphEndsD(p: $0.string) },
        StringCase("noneGlyphEndsCD", .noneGlyph, .endsWith, [.c, .d]) { Word.Fetches.noneGlyphEndsCD(p: $0.string) },
        StringCase("noneGlyphLike", .noneGlyph, .like, []) { Word.Fetches.noneGlyphLike(p: $0.string) },
        StringCase("noneGlyphLikeC", .noneGlyph, .like, [.c]) { Word.Fetches.noneGlyphLikeC(p: $0.string) },
        StringCase("noneGlyphLikeD", .noneGlyph, .like, [.d]) { Word.Fetches.noneGlyphLikeD(p: $0.string) },
        StringCase("noneGlyphLikeCD", .noneGlyph, .like, [.c, .d]) { Word.Fetches.noneGlyphLikeCD(p: $0.string) },
    ]
}

// MARK: - Random numbers

typealias SplitMix = SeededGenerator
