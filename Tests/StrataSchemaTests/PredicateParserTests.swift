import Testing

@testable import StrataSchema

/// The DESIGN.md model, built in code so these tests don't depend on the YAML front end.
let notesSchema: Schema = {
    let here = SourceLocation(file: "t", line: 1, column: 1)
    return Schema(
        enums: [EnumType(name: "Priority", cases: ["low", "normal", "high"], location: here)],
        entities: [
            Entity(
                name: "Notebook",
                attributes: [
                    Attribute(name: "name", type: .string, location: here),
                    Attribute(name: "position", type: .int, location: here),
                    Attribute(name: "color", type: .string, isOptional: true, location: here),
                    Attribute(name: "small", type: .int16, location: here),
                ],
                relationships: [
                    Relationship(name: "notes", destination: "Note", isToMany: true, inverse: "notebook", location: here),
                    Relationship(name: "owner", destination: "Owner", inverse: "notebooks", isRequired: true, location: here),
                ],
                location: here),
            Entity(
                name: "Note",
                attributes: [
                    Attribute(name: "title", type: .string, location: here),
                    Attribute(name: "body", type: .string, location: here),
                    Attribute(name: "pinned", type: .bool, location: here),
                    Attribute(name: "priority", type: .enumeration("Priority"), location: here),
                    Attribute(name: "updatedAt", type: .date, location: here),
                    Attribute(name: "rating", type: .double, isOptional: true, location: here),
                    Attribute(name: "key", type: .uuid, location: here),
                ],
                relationships: [
                    Relationship(name: "notebook", destination: "Notebook", inverse: "notes", location: here),
                    Relationship(name: "tags", destination: "Tag", isToMany: true, inverse: "notes", location: here),
                ],
                location: here),
            Entity(
                name: "Tag",
                attributes: [Attribute(name: "name", type: .string, location: here)],
                relationships: [
                    Relationship(name: "notes", destination: "Note", isToMany: true, inverse: "tags", location: here)
                ],
                location: here),
            Entity(
                name: "Owner",
                attributes: [Attribute(name: "email", type: .string, location: here)],
                relationships: [
                    Relationship(
                        name: "notebooks", destination: "Notebook", isToMany: true, inverse: "owner", deleteRule: .cascade,
                        location: here)
                ],
                location: here),
        ])
}()

struct GoodPredicate: Sendable, CustomTestStringConvertible {
    var text: String
    var expression: PredicateExpression
    var parameters: [PredicateParameter]
    var testDescription: String { text }

    init(_ text: String, _ expression: PredicateExpression, _ parameters: [PredicateParameter] = []) {
        self.text = text
        self.expression = expression
        self.parameters = parameters
    }
}

struct BadPredicate: Sendable, CustomTestStringConvertible {
    var text: String
    var message: String
    /// The 1-based column of the error inside `text`.
    var column: Int
    var testDescription: String { text }

    init(_ text: String, _ message: String, column: Int) {
        self.text = text
        self.message = message
        self.column = column
    }
}

private func path(_ names: String...) -> PredicateOperand { .keyPath(names) }
private func string(_ value: String) -> PredicateOperand { .literal(.string(value)) }
private func int(_ value: Int64) -> PredicateOperand { .literal(.int(value)) }

@Suite("Predicate parser")
struct PredicateParserTests {
    static let good: [GoodPredicate] = [
        GoodPredicate("pinned == true", .comparison(path("pinned"), .equal, .literal(.bool(true)), [])),
        GoodPredicate("pinned = YES", .comparison(path("pinned"), .equal, .literal(.bool(true)), [])),
        GoodPredicate("true", .constant(true)),
        GoodPredicate("FALSE", .constant(false)),
        GoodPredicate("title != 'a\\'b'", .comparison(path("title"), .notEqual, string("a'b"), [])),
        GoodPredicate("title == \"tab\\there\"", .comparison(path("title"), .equal, string("tab\there"), [])),
        GoodPredicate(
            "title CONTAINS[cd] $text",
            .comparison(path("title"), .contains, .parameter("text"), [.caseInsensitive, .diacriticInsensitive]),
            [PredicateParameter(name: "text", type: .string)]),
        GoodPredicate("title BEGINSWITH[c] 'a'", .comparison(path("title"), .beginsWith, string("a"), [.caseInsensitive])),
        GoodPredicate("title endswith[d] 'a'", .comparison(path("title"), .endsWith, string("a"), [.diacriticInsensitive])),
        GoodPredicate("title LIKE 'a*'", .comparison(path("title"), .like, string("a*"), [])),
        GoodPredicate(
            "pinned == true AND NOT (title == 'x' OR body == 'y')",
            .and(
                .comparison(path("pinned"), .equal, .literal(.bool(true)), []),
                .not(.or(.comparison(path("title"), .equal, string("x"), []), .comparison(path("body"), .equal, string("y"), []))))),
        GoodPredicate(
            "pinned == true || title == 'x' && body == 'y'",
            .or(
                .comparison(path("pinned"), .equal, .literal(.bool(true)), []),
                .and(.comparison(path("title"), .equal, string("x"), []), .comparison(path("body"), .equal, string("y"), [])))),
        GoodPredicate("!(pinned == false)", .not(.comparison(path("pinned"), .equal, .literal(.bool(false)), []))),
        GoodPredicate("priority == 'high'", .comparison(path("priority"), .equal, string("high"), [])),
        GoodPredicate("priority IN {'low', 'normal'}", .inList(path("priority"), [string("low"), string("normal")])),
        GoodPredicate(
            "priority IN $levels", .inParameter(path("priority"), "levels"),
            [PredicateParameter(name: "levels", type: .enumeration("Priority"), isList: true)]),
        GoodPredicate(
            "updatedAt BETWEEN {$from, $to}", .between(path("updatedAt"), .parameter("from"), .parameter("to")),
            [PredicateParameter(name: "from", type: .date), PredicateParameter(name: "to", type: .date)]),
        GoodPredicate("rating == nil", .comparison(path("rating"), .equal, .literal(.null), [])),
        GoodPredicate("notebook != NULL", .comparison(path("notebook"), .notEqual, .literal(.null), [])),
        GoodPredicate("rating >= 2.5", .comparison(path("rating"), .greaterOrEqual, .literal(.double(2.5)), [])),
        GoodPredicate("rating < -1", .comparison(path("rating"), .less, int(-1), [])),
        GoodPredicate(
            "rating == $r", .comparison(path("rating"), .equal, .parameter("r"), []),
            [PredicateParameter(name: "r", type: .double, isOptional: true)]),
        GoodPredicate("notebook.name == 'Work'", .comparison(path("notebook", "name"), .equal, string("Work"), [])),
        // A to-one compared with a parameter: the argument is the destination's id, optional
        // with an optional relationship (nil matches no notebook); required through `owner`.
        GoodPredicate(
            "notebook == $notebook", .comparison(path("notebook"), .equal, .parameter("notebook"), []),
            [PredicateParameter(name: "notebook", type: .int, isOptional: true, objectIDOf: "Notebook")]),
        GoodPredicate(
            "$owner != notebook.owner", .comparison(.parameter("owner"), .notEqual, path("notebook", "owner"), []),
            [PredicateParameter(name: "owner", type: .int, isOptional: true, objectIDOf: "Owner")]),
        GoodPredicate(
            "notebook IN $notebooks", .inParameter(path("notebook"), "notebooks"),
            [PredicateParameter(name: "notebooks", type: .int, isList: true, objectIDOf: "Notebook")]),
        GoodPredicate(
            "notebook.owner.email ==[c] $email",
            .comparison(path("notebook", "owner", "email"), .equal, .parameter("email"), [.caseInsensitive]),
            // `notebook` is optional, so the whole path may be nil.
            [PredicateParameter(name: "email", type: .string, isOptional: true)]),
        GoodPredicate("'Work' == notebook.name", .comparison(string("Work"), .equal, path("notebook", "name"), [])),
        GoodPredicate("title !=[cd] body", .comparison(path("title"), .notEqual, path("body"), [.caseInsensitive, .diacriticInsensitive])),
        GoodPredicate("title LIKE[c] notebook.color", .comparison(path("title"), .like, path("notebook", "color"), [.caseInsensitive])),
        GoodPredicate(
            "'x' ==[c] notebook.color", .comparison(string("x"), .equal, path("notebook", "color"), [.caseInsensitive])),
        GoodPredicate("notebook.color ==[d] nil", .comparison(path("notebook", "color"), .equal, .literal(.null), [.diacriticInsensitive])),
        GoodPredicate("tags.@count IN {0, 2}", .inList(.count(["tags"]), [int(0), int(2)])),
        GoodPredicate(
            "tags.@count BETWEEN {1, $max}", .between(.count(["tags"]), int(1), .parameter("max")),
            [PredicateParameter(name: "max", type: .int)]),
        GoodPredicate("notebook.position < tags.@count", .comparison(path("notebook", "position"), .less, .count(["tags"]), [])),
        GoodPredicate(
            "ANY tags.name == 'x'",
            .quantified(.any, toMany: ["tags"], .comparison(path("name"), .equal, string("x"), []))),
        GoodPredicate(
            "NONE tags.name IN {'a', 'b'}",
            .quantified(.none, toMany: ["tags"], .inList(path("name"), [string("a"), string("b")]))),
        GoodPredicate(
            "ALL notebook.notes.pinned == true",
            .quantified(.all, toMany: ["notebook", "notes"], .comparison(path("pinned"), .equal, .literal(.bool(true)), []))),
        GoodPredicate("tags.@count > 2", .comparison(.count(["tags"]), .greater, int(2), [])),
        GoodPredicate(
            "notebook.notes.@count == $n", .comparison(.count(["notebook", "notes"]), .equal, .parameter("n"), []),
            [PredicateParameter(name: "n", type: .int)]),
        GoodPredicate(
            "title CONTAINS $q OR body CONTAINS $q AND pinned == $p",
            .or(
                .comparison(path("title"), .contains, .parameter("q"), []),
                .and(.comparison(path("body"), .contains, .parameter("q"), []), .comparison(path("pinned"), .equal, .parameter("p"), []))),
            [PredicateParameter(name: "q", type: .string), PredicateParameter(name: "p", type: .bool)]),
        GoodPredicate("#in == 'x'", .comparison(path("in"), .equal, string("x"), [])) ,
    ]

    @Test(arguments: good)
    func parses(_ row: GoodPredicate) throws {
        // `#in` needs an attribute named `in`.
        var schema = notesSchema
        schema.entities[1].attributes.append(Attribute(name: "in", type: .string, location: SourceLocation(file: "t", line: 1, column: 1)))
        let result = PredicateParser.check(row.text, in: schema.entities[1], schema: schema)
        #expect(result.failures == [])
        #expect(result.expression == row.expression)
        #expect(result.parameters == row.parameters)
    }

    static let bad: [BadPredicate] = [
        BadPredicate("", "the predicate is empty", column: 1),
        BadPredicate("title ==", "the predicate ends too early; expected a key path, value or $parameter", column: 9),
        BadPredicate("title 'x'", "expected a comparison operator after 'title', found \"x\"", column: 7),
        BadPredicate("(pinned == true", "expected ')' to close the '(', found the end of the predicate", column: 16),
        BadPredicate("title == 'x", "unterminated string", column: 10),
        BadPredicate("title == 'x' pinned", "expected AND, OR or the end of the predicate, found 'pinned'", column: 14),
        BadPredicate("title == \"\\q\"", "unknown escape '\\q' in string", column: 11),
        BadPredicate("titel == 'x'", "unknown attribute or relationship 'titel' in 'Note'; did you mean 'title'?", column: 1),
        BadPredicate("notebook.nam == 'x'", "unknown attribute or relationship 'nam' in 'Notebook'; did you mean 'name'?", column: 10),
        BadPredicate("title.x == 'x'", "'title' is an attribute of 'Note' and has no member 'x'", column: 7),
        BadPredicate("tags.name == 'x'", "'tags' is a to-many relationship; use ANY, ALL or NONE, or 'tags.@count'", column: 1),
        BadPredicate("ANY title == 'x'", "ANY needs a to-many relationship before 'title', e.g. ANY tags.name == \"x\"", column: 5),
        BadPredicate("ANY notebook.name == 'x'", "ANY needs a to-many relationship before 'name', e.g. ANY tags.name == \"x\"", column: 14),
        BadPredicate("ANY 'x' == 'y'", "ANY needs a key path through a to-many relationship, e.g. ANY tags.name == \"x\"", column: 1),
        BadPredicate("title.@count > 1", "@count needs a to-many relationship, but 'title' is an attribute", column: 1),
        BadPredicate("title == 1", "cannot compare 'title' (String) with 1", column: 10),
        BadPredicate("pinned == 'yes'", "cannot compare 'pinned' (Bool) with \"yes\"", column: 11),
        BadPredicate("updatedAt > '2020-01-01'", "cannot compare 'updatedAt' (Date) with \"2020-01-01\"; compare dates with a $parameter", column: 13),
        BadPredicate("notebook.small == 40000", "40000 is out of range for Int16 ('notebook.small')", column: 19),
        BadPredicate("priority == 'urgent'", "'urgent' is not a case of enum 'Priority'; its cases are low, normal, high", column: 13),
        BadPredicate("priority == 'hihg'", "'hihg' is not a case of enum 'Priority'; did you mean 'high'?", column: 13),
        BadPredicate("priority CONTAINS 'h'", "CONTAINS needs a String, but 'priority' is Priority", column: 10),
        BadPredicate("pinned < true", "'<' can't order Bool values ('pinned')", column: 8),
        BadPredicate("priority >= 'normal'", "'>=' can't order enum values ('priority'): they would compare by raw value, alphabetically; use IN {…}", column: 10),
        BadPredicate("priority BETWEEN {'low', 'high'}", "BETWEEN can't order enum values ('priority'): they would compare by raw value, alphabetically; use IN {…}", column: 10),
        BadPredicate("key > $k", "'>' can't order UUID values ('key')", column: 5),
        BadPredicate("title == nil", "'title' is not optional and is never nil", column: 10),
        BadPredicate("rating > nil", "nil can only be compared with == or !=", column: 10),
        BadPredicate("notebook == 'x'", "'notebook' is a relationship; compare one of its attributes, nil, or a $parameter with == or !=", column: 1),
        BadPredicate("notebook > $n", "'notebook' is a relationship; compare one of its attributes, nil, or a $parameter with == or !=", column: 1),
        BadPredicate("notebook == $n OR title == $n", "parameter '$n' is used as String here but as Notebook.ID before", column: 28),
        BadPredicate("notebook == $n OR notebook.owner == $n", "parameter '$n' is used as Owner.ID here but as Notebook.ID before", column: 37),
        BadPredicate("1 == 2", "a comparison needs a key path on at least one side", column: 3),
        BadPredicate("title == $x AND pinned == $x", "parameter '$x' is used as Bool here but as String before", column: 27),
        BadPredicate("title == $x OR title IN $x", "parameter '$x' is used as [String] here but as String before", column: 25),
        BadPredicate("pinned ==[c] true", "[c]/[d] needs a String, but 'pinned' is Bool", column: 8),
        BadPredicate("title CONTAINS[x] 'a'", "unknown comparison option '[x]'; use [c], [d] or [cd]", column: 15),
        BadPredicate("title ==[] 'a'", "unknown comparison option '[]'; use [c], [d] or [cd]", column: 9),
        BadPredicate("rating ==[c] nil", "[c]/[d] needs a String, but 'rating' is Double", column: 8),
        BadPredicate("notebook !=[c] nil", "[c] and [d] apply only to string comparisons", column: 10),
        BadPredicate("title <[c] 'a'", "[c] and [d] apply only to string comparisons", column: 7),
        BadPredicate("'abc' CONTAINS title", "the left side of CONTAINS must be a key path", column: 1),
        BadPredicate("ANY $x BEGINSWITH tags.name", "the left side of BEGINSWITH must be a key path", column: 5),
        BadPredicate("title == 1.5.2", "expected AND, OR or the end of the predicate, found '.'", column: 13),
        BadPredicate("rating BETWEEN {1}", "BETWEEN needs exactly two bounds, {low, high}; found 1", column: 8),
        BadPredicate("title IN {}", "the list after IN is empty", column: 7),
        BadPredicate("title == 99999999999999999999", "integer '99999999999999999999' is out of range for a 64-bit integer", column: 10),
        BadPredicate("title == 'é' AND titel == 'x'", "unknown attribute or relationship 'titel' in 'Note'; did you mean 'title'?", column: 18),
        BadPredicate("AND == 1", "expected a key path, value or $parameter, found keyword 'AND'", column: 1),
        BadPredicate("title ~ 'x'", "unexpected character '~'", column: 7),
        BadPredicate("tags.@sum > 1", "unknown aggregate '@sum'; only '@count' is supported", column: 6),
    ]

    @Test(arguments: bad)
    func rejects(_ row: BadPredicate) {
        let result = PredicateParser.check(row.text, in: notesSchema.entities[1], schema: notesSchema)
        #expect(result.expression == nil)
        #expect(result.failures.first?.message == row.message)
        #expect(result.failures.first.map { $0.offset + 1 } == row.column)
    }

    @Test func deepParenthesesAreRefused() {
        let text = String(repeating: "(", count: 10_000) + "pinned == true" + String(repeating: ")", count: 10_000)
        let result = PredicateParser.check(text, in: notesSchema.entities[1], schema: notesSchema)
        #expect(result.failures.first?.message == "the predicate is nested too deeply")
    }
}
