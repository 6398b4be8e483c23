import Foundation
import Testing

@testable import StrataSchema

@Suite("Good models")
struct GoodModelTests {
    /// DESIGN.md's model decodes to exactly this schema, with no diagnostics.
    @Test func designModel() throws {
        let bytes = try Array(Data(contentsOf: resourceURL("Notes.yaml")))
        let result = SchemaPipeline.load(files: [ModelFile(path: "Notes.yaml", contents: bytes)])
        #expect(result.diagnostics == [])
        let schema = try #require(result.schema)
        #expect(schema.enums == Self.expected.enums)
        for (entity, expected) in zip(schema.entities, Self.expected.entities) {
            #expect(entity.attributes == expected.attributes)
            #expect(entity.relationships == expected.relationships)
            for (fetch, expectedFetch) in zip(entity.fetches, expected.fetches) {
                #expect(fetch == expectedFetch)
            }
            #expect(entity == expected)
        }
        #expect(schema == Self.expected)
    }

    static func at(_ line: Int, _ column: Int) -> StrataSchema.SourceLocation {
        StrataSchema.SourceLocation(file: "Notes.yaml", line: line, column: column)
    }

    static let expected = Schema(
        enums: [EnumType(name: "Priority", cases: ["low", "normal", "high"], location: at(3, 3))],
        entities: [
            Entity(
                name: "Notebook", doc: "A notebook groups notes.",
                attributes: [
                    Attribute(name: "name", type: .string, location: at(8, 7)),
                    Attribute(name: "createdAt", type: .date, defaultValue: .now, location: at(9, 7)),
                    Attribute(name: "position", type: .int, defaultValue: .int(0), isIndexed: true, location: at(10, 7)),
                    Attribute(name: "color", type: .string, isOptional: true, location: at(11, 7)),
                ],
                relationships: [
                    Relationship(
                        name: "notes", destination: "Note", isToMany: true, inverse: "notebook", deleteRule: .cascade,
                        location: at(13, 7))
                ],
                uniques: [["name"]],
                location: at(5, 3)),
            Entity(
                name: "Note",
                attributes: [
                    Attribute(name: "title", type: .string, location: at(17, 7)),
                    Attribute(name: "body", type: .string, defaultValue: .string(""), location: at(18, 7)),
                    Attribute(name: "pinned", type: .bool, defaultValue: .bool(false), location: at(19, 7)),
                    Attribute(
                        name: "priority", type: .enumeration("Priority"), defaultValue: .enumCase("normal"),
                        location: at(20, 7)),
                    Attribute(name: "updatedAt", type: .date, location: at(21, 7)),
                ],
                relationships: [
                    Relationship(name: "notebook", destination: "Notebook", inverse: "notes", location: at(23, 7)),
                    Relationship(name: "tags", destination: "Tag", isToMany: true, inverse: "notes", location: at(24, 7)),
                ],
                indexes: [["notebook", "updatedAt"]],
                fetches: [
                    Fetch(name: "all", sort: [SortKey(path: ["title"], descending: false, location: at(27, 21))], location: at(27, 7)),
                    Fetch(
                        name: "pinned",
                        predicate: PredicateSource(
                            text: "pinned == true", location: at(28, 25),
                            expression: .comparison(.keyPath(["pinned"]), .equal, .literal(.bool(true)), [])),
                        sort: [SortKey(path: ["updatedAt"], descending: true, location: at(28, 49))],
                        location: at(28, 7)),
                    Fetch(
                        name: "search",
                        predicate: PredicateSource(
                            text: "title CONTAINS[c] $text OR body CONTAINS[c] $text", location: at(29, 25),
                            expression: .or(
                                .comparison(.keyPath(["title"]), .contains, .parameter("text"), .caseInsensitive),
                                .comparison(.keyPath(["body"]), .contains, .parameter("text"), .caseInsensitive)),
                            parameters: [PredicateParameter(name: "text", type: .string)]),
                        sort: [SortKey(path: ["title"], descending: false, location: at(29, 84))],
                        location: at(29, 7)),
                    Fetch(
                        name: "byNotebook",
                        sort: [
                            SortKey(path: ["pinned"], descending: true, location: at(32, 16)),
                            SortKey(path: ["title"], descending: false, location: at(32, 25)),
                        ],
                        sections: .entity(
                            relationship: "notebook",
                            sort: [
                                SortKey(path: ["position"], descending: false, location: at(31, 46)),
                                SortKey(path: ["name"], descending: false, location: at(31, 56)),
                            ],
                            predicate: nil, orphans: false, location: at(31, 29)),
                        location: at(30, 7)),
                    Fetch(
                        name: "byPriority",
                        sort: [
                            SortKey(path: ["priority"], descending: false, location: at(35, 16)),
                            SortKey(path: ["title"], descending: false, location: at(35, 26)),
                        ],
                        sections: .key(path: ["priority"], descending: false, byFirstLetter: false, location: at(34, 26)),
                        location: at(33, 7)),
                ],
                location: at(15, 3)),
            Entity(
                name: "Tag",
                attributes: [Attribute(name: "name", type: .string, location: at(37, 19))],
                relationships: [
                    Relationship(name: "notes", destination: "Note", isToMany: true, inverse: "tags", location: at(39, 7))
                ],
                location: at(36, 3)),
        ])

    @Test func directoryExpansionReadsSortedYAMLFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "entities:\n  Tag:\n    relationships: { notes: { to: Note, many: true, inverse: tags } }\n"
            .write(to: directory.appendingPathComponent("b.yml"), atomically: true, encoding: .utf8)
        try "entities:\n  Note:\n    relationships: { tags: { to: Tag, many: true, inverse: notes } }\n"
            .write(to: directory.appendingPathComponent("a.yaml"), atomically: true, encoding: .utf8)
        try "not a model".write(to: directory.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        #expect(SchemaPipeline.expand(directory.path).map { URL(fileURLWithPath: $0).lastPathComponent } == ["a.yaml", "b.yml"])
        let result = SchemaPipeline.load(paths: [directory.path])
        #expect(result.diagnostics == [])
        #expect(result.schema?.entities.map(\.name) == ["Note", "Tag"])
    }

    @Test func missingFileIsADiagnostic() {
        let result = SchemaPipeline.load(paths: ["does-not-exist.yaml"])
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == ["error: cannot read model file 'does-not-exist.yaml'"])
    }

    @Test func directoryWithoutModelsIsADiagnostic() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = SchemaPipeline.load(paths: [directory.path])
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == ["error: no model files (*.yaml, *.yml) in '\(directory.path)'"])
    }

    @Test func anchorsAndAliasesResolveToTheAnchoredNode() throws {
        let yaml = """
            entities:
              A:
                attributes: &common
                  name: String
                  createdAt: { type: Date, default: now }
              B:
                attributes: *common
            """
        let result = load(yaml)
        #expect(result.diagnostics == [])
        let schema = try #require(result.schema)
        #expect(schema.entities[1].attributes.map(\.name) == ["name", "createdAt"])
        #expect(schema.entities[1].attributes[1].defaultValue == .now)
    }

    @Test func defaultsOfEveryType() throws {
        let yaml = """
            enums: { P: [low, high] }
            entities:
              A:
                attributes:
                  s: { type: String, default: 007 }
                  i: { type: Int, default: -9223372036854775808 }
                  i32: { type: Int32, default: 2147483647 }
                  i16: { type: Int16, default: -32768 }
                  d: { type: Double, default: 2.5e3 }
                  f: { type: Float, default: 1 }
                  b: { type: Bool, default: true }
                  t: { type: Date, default: now }
                  u: { type: UUID, default: uuid }
                  ul: { type: UUID, default: 0123abcd-0000-4000-8000-00000000ffff }
                  dec: { type: Decimal, default: 12.50 }
                  deci: { type: Decimal, default: 12 }
                  url: { type: URL, default: "https://example.com/a?b=c" }
                  data: { type: Data, default: abc }
                  e: { type: P, default: high, optional: true }
            """
        let result = load(yaml)
        #expect(result.diagnostics == [])
        let attributes = try #require(result.schema?.entities.first?.attributes)
        #expect(attributes.map(\.defaultValue) == [
            .string("007"), .int(Int64.min), .int(2_147_483_647), .int(-32768), .double(2500), .double(1), .bool(true),
            .now, .uuid, .string("0123ABCD-0000-4000-8000-00000000FFFF"), .string("12.50"), .int(12),
            .string("https://example.com/a?b=c"), .string("abc"), .enumCase("high"),
        ])
    }

    @Test func keywordsAreValidNames() throws {
        let yaml = """
            enums: { Kind: [default, class, in] }
            entities:
              Protocol:
                attributes: { class: String, default: { type: Kind, default: class }, func: Int }
                fetches: { where: { where: "class == 'x'", sort: [func] } }
            """
        let result = load(yaml)
        #expect(result.diagnostics == [])
        #expect(result.schema?.entities.first?.fetches.first?.name == "where")
    }

    @Test func sortKeysMayEndAtTheRowID() throws {
        let yaml = """
            entities:
              Notebook:
                attributes: { name: String }
                relationships: { notes: { to: Note, many: true, inverse: notebook } }
              Note:
                attributes: { title: String }
                relationships: { notebook: { to: Notebook, inverse: notes } }
                fetches: { newest: { sort: [notebook.id, -id] } }
            """
        let result = load(yaml)
        #expect(result.diagnostics == [])
        let fetch = try #require(result.schema?.entity(named: "Note")?.fetches.first)
        #expect(fetch.sort.map(\.path) == [["notebook", "id"], ["id"]])
        #expect(fetch.sort.map(\.descending) == [false, true])
    }

    @Test func warningsKeepTheSchema() throws {
        let yaml = "entities:\n  A:\n    attributes: { a: { type: Int, unique: true, indexed: true } }\n"
        let result = load(yaml)
        #expect(result.diagnostics.map(\.description) == [
            "m.yaml:3:19: warning: 'indexed' on 'A.a' is redundant: a unique attribute is already indexed"
        ])
        #expect(result.schema != nil)
    }

    @Test func blockScalarDocsAndPredicates() throws {
        let yaml = """
            entities:
              A:
                doc: |
                  Line one.
                  Line two.
                attributes: { name: String }
                fetches:
                  f:
                    where: >
                      name BEGINSWITH 'a'
                      OR name == $n
            """
        let result = load(yaml)
        #expect(result.diagnostics == [])
        let entity = try #require(result.schema?.entities.first)
        #expect(entity.doc == "Line one.\nLine two.\n")
        #expect(entity.fetches[0].predicate?.parameters == [PredicateParameter(name: "n", type: .string)])
    }
}
