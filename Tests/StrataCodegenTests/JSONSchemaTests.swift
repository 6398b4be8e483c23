import Foundation
import StrataCodegen
import StrataSchema
import StrataTestSupport
import Testing

/// A model the JSON Schema must reject for the same reason `strata validate` does.
struct SchemaRejection: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    /// The keyword that must fail, and where (a JSON Pointer into the model).
    var kind: JSONSchemaValidator.Kind
    var path: String
    /// A part of the diagnostic `strata validate` prints for the same model.
    var cliMessage: String

    init(_ name: String, _ yaml: String, _ kind: JSONSchemaValidator.Kind, at path: String, cli cliMessage: String) {
        self.name = name
        self.yaml = yaml
        self.kind = kind
        self.path = path
        self.cliMessage = cliMessage
    }

    var testDescription: String { name }
}

/// `Note` with the given attribute lines (indented under `attributes:`) and entity lines.
func noteModel(attributes: String = "title: String", entity: String = "") -> String {
    """
    version: 1
    entities:
      Note:
        attributes:
          \(attributes)
    \(entity.isEmpty ? "" : "    " + entity)

    """
}

/// `Notebook.notes` ⇄ `Note.notebook`, with `Note.notebook` written as given.
func notebookModel(notebook: String) -> String {
    """
    entities:
      Notebook:
        attributes: { name: String }
        relationships:
          notes: { to: Note, many: true, inverse: notebook }
      Note:
        attributes: { title: String }
        relationships:
          notebook: \(notebook)

    """
}

@Suite struct JSONSchemaTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let checkedInPath = "Schemas/strata-model.schema.json"

    static func validator() throws -> JSONSchemaValidator {
        let schema = try JSONDecoder().decode(JSONValue.self, from: Data(JSONSchemaRenderer.render().utf8))
        return JSONSchemaValidator(schema: schema)
    }

    /// The YAML of one file as JSON, through StrataSchema's loader.
    static func json(_ yaml: String, path: String = "Model.yaml") throws -> JSONValue {
        let (root, diagnostics) = YAMLLoader.load(ModelFile(path: path, text: yaml))
        let node = try #require(root, "\(diagnostics)")
        return JSONValue(yaml: node)
    }

    // MARK: - The checked-in file

    @Test func checkedInSchemaIsTheRenderersOutput() throws {
        let url = Self.packageRoot.appendingPathComponent(Self.checkedInPath)
        let checkedIn = try #require(FileManager.default.contents(atPath: url.path), "missing \(Self.checkedInPath)")
        let text = String(decoding: checkedIn, as: UTF8.self)
        let rendered = JSONSchemaRenderer.render()
        guard Array(checkedIn) != Array(rendered.utf8) else { return }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let expected = rendered.split(separator: "\n", omittingEmptySubsequences: false)
        let first = zip(lines, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(lines.count, expected.count)
        Issue.record("""
            \(Self.checkedInPath) is stale: run `strata json-schema > \(Self.checkedInPath)`
            first difference at line \(first + 1):
              checked in: \(first < lines.count ? String(lines[first]) : "<end of file>")
              rendered:   \(first < expected.count ? String(expected[first]) : "<end of output>")
            """)
    }

    @Test func cliPrintsTheRenderersOutput() async throws {
        let run = try await CLITests.strata(["json-schema"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == JSONSchemaRenderer.render())
    }

    @Test func validatorSupportsEveryKeywordTheRendererEmits() throws {
        let keywords = try Self.validator().keywords()
        #expect(keywords.subtracting(JSONSchemaValidator.supported).isEmpty,
                "unsupported: \(keywords.subtracting(JSONSchemaValidator.supported).sorted())")
        // The validator can fail: a keyword it doesn't know is a failure, not a pass.
        let strict = JSONSchemaValidator(schema: .object(["maxLength": .integer(1)]))
        #expect(strict.validate(.string("")).map(\.kind) == [.unsupportedKeyword])
    }

    // MARK: - Good models

    /// Every model folder of the repository that `strata` accepts: each of its files must
    /// satisfy the JSON Schema too.
    @Test func everyValidModelOfTheRepositoryConforms() throws {
        let fileManager = FileManager.default
        var folders = [Self.packageRoot.appendingPathComponent("Models")]
        let tests = Self.packageRoot.appendingPathComponent("Tests")
        if let enumerator = fileManager.enumerator(at: tests, includingPropertiesForKeys: nil) {
            for case let url as URL in enumerator where url.lastPathComponent == "Resources" {
                folders.append(url)
            }
        }
        let validator = try Self.validator()
        var checked: [String] = []
        for folder in folders {
            let files = SchemaPipeline.expand(folder.path)
            guard !files.isEmpty else { continue }
            // Files of one folder form one model (entities refer across files); a folder of
            // independent models is checked file by file.
            let together = SchemaPipeline.load(paths: files)
            let models = together.hasErrors ? files.map { [$0] } : [files]
            for model in models where !SchemaPipeline.load(paths: model).hasErrors {
                for file in model {
                    let text = try String(contentsOfFile: file, encoding: .utf8)
                    let failures = validator.validate(try Self.json(text, path: file))
                    #expect(failures.isEmpty, "\(file):\n\(failures.map(\.description).joined(separator: "\n"))")
                    checked.append(String(file.dropFirst(Self.packageRoot.path.count + 1)))
                }
            }
        }
        // The models this test exists for; a path change must not turn it into a no-op.
        for expected in [
            "Models/Notes.yaml", "Models/Tags.yaml", "Tests/StrataCodegenTests/Resources/EdgeCases.yaml",
            "Tests/StrataCodegenTests/Resources/Notes.yaml", "Tests/StrataSchemaTests/Resources/Notes.yaml",
        ] {
            #expect(checked.contains(expected), "\(expected) was not checked; checked \(checked)")
        }
    }

    /// The README tour's model, which readers copy first.
    @Test func readmeTourModelConforms() throws {
        let yaml = try ReadmeModelTests.block("yaml", after: "### 1. Write a model", in: ReadmeModelTests.readme())
        #expect(!SchemaPipeline.load(files: [ModelFile(path: "Models/Notes.yaml", text: yaml)]).hasErrors)
        let failures = try Self.validator().validate(try Self.json(yaml))
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))")
    }

    /// Empty values (`Tag:`, `attributes:`, `all:`) are empty mappings for the decoder, and
    /// single sort keys need no list.
    @Test func schemaAcceptsWhatTheDecoderAccepts() throws {
        let yaml = """
            enums:
            entities:
              Tag:
              Note:
                attributes:
                  title: String
                  score: { type: Decimal, default: 1.50 }
                  flag: { type: Bool, default: TRUE }
                relationships:
                fetches:
                  all:
                  byTitle: { sort: +title }
                  recent: { sort: -title, where: "title != 'x'" }
                unique:

            """
        #expect(!SchemaPipeline.load(files: [ModelFile(path: "Model.yaml", text: yaml)]).hasErrors)
        let failures = try Self.validator().validate(try Self.json(yaml))
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))")
    }

    // MARK: - Bad models

    static let rejections: [SchemaRejection] = [
        SchemaRejection(
            "unknown top-level key", "entitys:\n  Note:\n    attributes: { title: String }\n",
            .additionalProperties, at: "/entitys", cli: "unknown key 'entitys' in the model file; did you mean 'entities'?"),
        SchemaRejection(
            "the file is a list", "- Note\n", .type, at: "",
            cli: "a model file must be a mapping with 'version', 'enums' and 'entities', not a sequence"),
        SchemaRejection(
            "unsupported version", "version: 2\nentities: {}\n", .const, at: "/version",
            cli: "unsupported schema version '2'; this version of Strata reads version 1"),
        SchemaRejection(
            "quoted version", "version: \"1\"\nentities: {}\n", .const, at: "/version",
            cli: "'version' must be the integer 1, not the string \"1\""),
        SchemaRejection(
            "entity name not an identifier", "entities:\n  9Note:\n    attributes: { title: String }\n",
            .propertyNames, at: "/entities/9Note",
            cli: "entity name '9Note' is not a valid identifier; use letters, digits and '_', not starting with a digit"),
        SchemaRejection(
            "entity is a list", "entities:\n  Note: [title]\n", .type, at: "/entities/Note",
            cli: "entity 'Note' must be a mapping with 'attributes', 'relationships', …, not a sequence"),
        SchemaRejection(
            "unknown entity key", noteModel(entity: "indices: [[title]]"), .additionalProperties,
            at: "/entities/Note/indices", cli: "unknown key 'indices' in entity 'Note'; did you mean 'indexes'?"),
        SchemaRejection(
            "attribute name not an identifier", noteModel(attributes: "my-title: String"), .propertyNames,
            at: "/entities/Note/attributes/my-title", cli: "attribute name 'my-title' is not a valid identifier"),
        SchemaRejection(
            "optional type written with ?", noteModel(attributes: "title: String?"), .pattern,
            at: "/entities/Note/attributes/title",
            cli: "'String?' is not a type; write { type: String, optional: true } for an optional attribute"),
        SchemaRejection(
            "optional type with ? in long form", noteModel(attributes: "title: { type: String? }"), .pattern,
            at: "/entities/Note/attributes/title/type", cli: "'String?' is not a type"),
        SchemaRejection(
            "attribute is a list", noteModel(attributes: "title: [String]"), .type,
            at: "/entities/Note/attributes/title",
            cli: "attribute 'Note.title' must be a type name or a mapping with 'type', not a sequence"),
        SchemaRejection(
            "attribute without a type", noteModel(attributes: "title: ~"), .type,
            at: "/entities/Note/attributes/title", cli: "attribute 'title' needs a type"),
        SchemaRejection(
            "long form without type", noteModel(attributes: "title: { optional: true }"), .required,
            at: "/entities/Note/attributes/title", cli: "attribute 'Note.title' needs a 'type'"),
        SchemaRejection(
            "unknown attribute key", noteModel(attributes: "title: { type: String, optinal: true }"),
            .additionalProperties, at: "/entities/Note/attributes/title/optinal",
            cli: "unknown key 'optinal' in attribute 'Note.title'; did you mean 'optional'?"),
        SchemaRejection(
            "optional is not a boolean", noteModel(attributes: "title: { type: String, optional: yes }"), .type,
            at: "/entities/Note/attributes/title/optional", cli: "'optional' must be true or false, not 'yes'"),
        SchemaRejection(
            "indexed is a number", noteModel(attributes: "title: { type: String, indexed: 1 }"), .type,
            at: "/entities/Note/attributes/title/indexed", cli: "'indexed' must be true or false, not '1'"),
        SchemaRejection(
            "default is a list", noteModel(attributes: "title: { type: String, default: [a] }"), .type,
            at: "/entities/Note/attributes/title/default",
            cli: "the default of 'Note.title' must be a scalar, not a sequence"),
        SchemaRejection(
            "default is null", noteModel(attributes: "title: { type: String, default: ~ }"), .type,
            at: "/entities/Note/attributes/title/default",
            cli: "the default of 'Note.title' is null; remove 'default' (an optional attribute is nil unless set)"),
        SchemaRejection(
            "relationship is a scalar", notebookModel(notebook: "Notebook"), .type,
            at: "/entities/Note/relationships/notebook",
            cli: "relationship 'Note.notebook' must be a mapping with 'to' and 'inverse', not a scalar"),
        SchemaRejection(
            "relationship without to", notebookModel(notebook: "{ inverse: notes }"), .required,
            at: "/entities/Note/relationships/notebook",
            cli: "relationship 'Note.notebook' needs 'to', its destination entity"),
        SchemaRejection(
            "relationship without inverse", notebookModel(notebook: "{ to: Notebook }"), .required,
            at: "/entities/Note/relationships/notebook",
            cli: "relationship 'Note.notebook' needs an 'inverse': the relationship of 'Notebook' that points back"),
        SchemaRejection(
            "unknown delete rule", notebookModel(notebook: "{ to: Notebook, inverse: notes, deleteRule: delete }"),
            .enum, at: "/entities/Note/relationships/notebook/deleteRule",
            cli: "unknown delete rule 'delete'; expected nullify, cascade, deny or noAction"),
        SchemaRejection(
            "delete rule in the wrong case", notebookModel(notebook: "{ to: Notebook, inverse: notes, deleteRule: Cascade }"),
            .enum, at: "/entities/Note/relationships/notebook/deleteRule",
            cli: "unknown delete rule 'Cascade'; expected nullify, cascade, deny or noAction; did you mean 'cascade'?"),
        SchemaRejection(
            "many is not a boolean", notebookModel(notebook: "{ to: Notebook, inverse: notes, many: 1 }"), .type,
            at: "/entities/Note/relationships/notebook/many", cli: "'many' must be true or false, not '1'"),
        SchemaRejection(
            "unknown relationship key", notebookModel(notebook: "{ to: Notebook, inverse: notes, optional: true }"),
            .additionalProperties, at: "/entities/Note/relationships/notebook/optional",
            cli: "unknown key 'optional' in relationship 'Note.notebook'"),
        SchemaRejection(
            "destination not an identifier", notebookModel(notebook: "{ to: Note book, inverse: notes }"), .pattern,
            at: "/entities/Note/relationships/notebook/to", cli: "unknown entity 'Note book' in relationship 'Note.notebook'"),
        SchemaRejection(
            "enum is not a list", "enums:\n  Priority: low\nentities: {}\n", .type, at: "/enums/Priority",
            cli: "enum 'Priority' must be a list of case names, e.g. [low, normal, high]"),
        SchemaRejection(
            "enum without cases", "enums:\n  Priority: []\nentities: {}\n", .minItems, at: "/enums/Priority",
            cli: "enum 'Priority' has no cases"),
        SchemaRejection(
            "duplicate enum case", "enums:\n  Priority: [low, high, low]\nentities: {}\n", .uniqueItems,
            at: "/enums/Priority/2", cli: "duplicate case 'low' in enum 'Priority'"),
        SchemaRejection(
            "enum case not an identifier", "enums:\n  Priority: [low, very high]\nentities: {}\n", .pattern,
            at: "/enums/Priority/1", cli: "enum case name 'very high' is not a valid identifier"),
        SchemaRejection(
            "unique is not a list of lists", noteModel(entity: "unique: [title]"), .type,
            at: "/entities/Note/unique/0", cli: "each element of 'unique' is a list of names, e.g. [[title]]"),
        SchemaRejection(
            "empty index", noteModel(entity: "indexes: [[]]"), .minItems, at: "/entities/Note/indexes/0",
            cli: "an element of 'indexes' of 'Note' is empty"),
        SchemaRejection(
            "fetches is a list", noteModel(entity: "fetches: [all]"), .type, at: "/entities/Note/fetches",
            cli: "'fetches' of 'Note' must be a mapping of names, not a sequence"),
        SchemaRejection(
            "unknown fetch key", noteModel(entity: "fetches: { all: { order: [title] } }"), .additionalProperties,
            at: "/entities/Note/fetches/all/order", cli: "unknown key 'order' in fetch 'Note.all'"),
        SchemaRejection(
            "sort key is a mapping", noteModel(entity: "fetches: { all: { sort: [{ title: asc }] } }"), .type,
            at: "/entities/Note/fetches/all/sort/0",
            cli: "a sort key must be a key path such as 'title' or '-notebook.name', not a mapping"),
        SchemaRejection(
            "sort key with a direction word", noteModel(entity: "fetches: { all: { sort: [title desc] } }"), .pattern,
            at: "/entities/Note/fetches/all/sort/0", cli: "sort key: unknown attribute or relationship 'title desc' in 'Note'"),
        SchemaRejection(
            "where is a list", noteModel(entity: "fetches: { all: { where: [title] } }"), .type,
            at: "/entities/Note/fetches/all/where", cli: "'where' must be a predicate string, e.g. \"pinned == true\""),
        SchemaRejection(
            "sections by an unknown grouping", noteModel(entity: "fetches: { all: { sections: { key: title, by: letter } } }"),
            .enum, at: "/entities/Note/fetches/all/sections/by",
            cli: "unknown value 'letter' for 'by'; the only grouping is 'firstLetter'"),
        SchemaRejection(
            "sections with key and entity", noteModel(entity: "fetches: { all: { sections: { key: title, entity: title } } }"),
            .oneOf, at: "/entities/Note/fetches/all/sections",
            cli: "'sections' of 'Note.all' has both 'key' and 'entity'; use one"),
        SchemaRejection(
            "sections with neither key nor entity", noteModel(entity: "fetches: { all: { sections: { descending: true } } }"),
            .oneOf, at: "/entities/Note/fetches/all/sections",
            cli: "'sections' of 'Note.all' needs 'key' (sections by value) or 'entity' (sections by a to-one relationship)"),
        SchemaRejection(
            "key sections with a sort", noteModel(entity: "fetches: { all: { sections: { key: title, sort: [title] } } }"),
            .additionalProperties, at: "/entities/Note/fetches/all/sections/sort",
            cli: "unknown key 'sort' in 'sections' of 'Note.all'"),
        SchemaRejection(
            "orphans is not a boolean",
            noteModel(entity: "fetches: { all: { sections: { entity: title, orphans: some } } }"), .type,
            at: "/entities/Note/fetches/all/sections/orphans", cli: "'orphans' must be true or false, not 'some'"),
    ]

    @Test(arguments: rejections)
    func rejects(_ row: SchemaRejection) async throws {
        let failures = try Self.validator().validate(try Self.json(row.yaml))
        #expect(
            failures.contains { $0.kind == row.kind && $0.path == row.path },
            "expected \(row.kind) at '\(row.path)'; got:\n\(failures.map(\.description).joined(separator: "\n"))")

        let directory = try ScratchDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        try row.yaml.write(to: directory.appendingPathComponent("Bad.yaml"), atomically: true, encoding: .utf8)
        let run = try await CLITests.strata(["validate", "Bad.yaml"], in: directory)
        #expect(run.status == 1, "strata validate accepted the model")
        #expect(run.stderr.contains(row.cliMessage), "stderr was:\n\(run.stderr)")
    }

    // MARK: - The error-message table

    /// `ErrorMessageTests`' helpers, copied: two entities with a relationship pair.
    static func pair(_ aRelationship: String, _ bRelationship: String) -> String {
        """
        entities:
          A:
            attributes: { name: String }
            relationships:
              \(aRelationship)
          B:
            attributes: { title: String }
            relationships:
              \(bRelationship)
        """
    }

    static func defaultModel(_ type: String, _ value: String) -> String {
        "enums:\n  P: [low, high]\nentities:\n  A:\n    attributes:\n      a: { type: \(type), default: \(value) }\n"
    }

    static func fetchModel(_ entityA: String) -> String {
        """
        entities:
          A:
            attributes: { name: String, rank: Int }
            relationships:
              b: { to: B, inverse: as }
              cs: { to: C, many: true, inverse: a }
        \(entityA)
          B:
            attributes: { title: String }
            relationships: { as: { to: A, many: true, inverse: b } }
          C:
            relationships: { a: { to: A, inverse: cs } }
        """
    }

    /// The bad models of `ErrorMessageTests` (StrataSchemaTests) whose mistake a JSON Schema
    /// can express — a local shape, kind or literal rather than a reference to another part
    /// of the model — each with the keyword that catches it and why. Those the schema cannot
    /// express (YAML syntax, unknown types and destinations, inverses, cycles, name clashes
    /// with generated code, enum cases, sort keys and predicates) are `strata`'s alone.
    static let errorMessageTable: [(name: String, yaml: String, kind: JSONSchemaValidator.Kind, path: String, reason: String)] = [
        ("root is a sequence", "- a\n", .type, "", "the root is an object"),
        ("unsupported version", "version: 2\nentities: {}\n", .const, "/version", "version is the constant 1"),
        ("unknown top-level key", "entitys: {}\n", .additionalProperties, "/entitys", "closed set of keys"),
        ("unknown entity key", "entities:\n  A:\n    atributes: { name: String }\n", .additionalProperties,
         "/entities/A/atributes", "closed set of keys"),
        ("unknown key without suggestion", "entities:\n  A:\n    colour: red\n", .additionalProperties,
         "/entities/A/colour", "closed set of keys"),
        ("unknown attribute key", "entities:\n  A:\n    attributes:\n      a: { type: Int, optinal: true }\n",
         .additionalProperties, "/entities/A/attributes/a/optinal", "closed set of keys"),
        ("optional written as String?", "entities:\n  A:\n    attributes: { a: String? }\n", .pattern,
         "/entities/A/attributes/a", "a type name is an identifier"),
        ("attribute without type", "entities:\n  A:\n    attributes: { a: { optional: true } }\n", .required,
         "/entities/A/attributes/a", "the long form requires type"),
        ("option not a bool", "entities:\n  A:\n    attributes: { a: { type: Int, optional: yes } }\n", .type,
         "/entities/A/attributes/a/optional", "optional is a boolean"),
        ("relationship without inverse", pair("b: { to: B }", "a: { to: A, inverse: b }"), .required,
         "/entities/A/relationships/b", "a relationship requires inverse"),
        ("unknown relationship key", pair("b: { to: B, invers: a }", "a: { to: A, inverse: b }"), .additionalProperties,
         "/entities/A/relationships/b/invers", "closed set of keys"),
        ("relationship without destination", pair("b: { inverse: a }", "a: { to: A, inverse: b }"), .required,
         "/entities/A/relationships/b", "a relationship requires to"),
        ("unknown delete rule", pair("b: { to: B, inverse: a, deleteRule: cascde }", "a: { to: A, inverse: b }"), .enum,
         "/entities/A/relationships/b/deleteRule", "delete rules are an enum"),
        ("enum not a list", "enums:\n  P: low\n", .type, "/enums/P", "an enum is an array of cases"),
        ("unique element not a list", "entities:\n  A:\n    attributes: { a: Int }\n    unique: [a]\n", .type,
         "/entities/A/unique/0", "unique is an array of arrays"),
        ("sections with key and entity",
         "entities:\n  A:\n    attributes: { a: Int }\n    fetches:\n      f: { sections: { key: a, entity: a } }\n",
         .oneOf, "/entities/A/fetches/f/sections", "key and entity sections are exclusive alternatives"),
        ("unknown sections key",
         "entities:\n  A:\n    attributes: { a: Int }\n    fetches:\n      f: { sections: { key: a, by: firstLeter } }\n",
         .enum, "/entities/A/fetches/f/sections/by", "by is an enum"),
        ("attribute name not an identifier", "entities:\n  A:\n    attributes: { first-name: String }\n",
         .propertyNames, "/entities/A/attributes/first-name", "names match the identifier pattern"),
        ("entity name starting with a digit", "entities:\n  1A: {}\n", .propertyNames, "/entities/1A",
         "names match the identifier pattern"),
        ("enum case not an identifier", "enums:\n  P: [low, \"very high\"]\n", .pattern, "/enums/P/1",
         "cases match the identifier pattern"),
        ("duplicate enum case", "enums:\n  P: [a, b, a]\n", .uniqueItems, "/enums/P/2", "enum cases are uniqueItems"),
        ("required to-many", pair("b: { to: B, inverse: a, many: true, required: true }", "a: { to: A, inverse: b }"),
         .const, "/entities/A/relationships/b/required", "if many is true, then required must be false"),
        ("minCount on a to-one", pair("b: { to: B, inverse: a, many: true }", "a: { to: A, inverse: b, minCount: 1 }"),
         .required, "/entities/B/relationships/a", "minCount and maxCount apply to to-many relationships"),
        ("negative maxLength", "entities:\n  A:\n    attributes: { a: { type: String, maxLength: -1 } }\n", .minimum,
         "/entities/A/attributes/a/maxLength", "lengths are 0 or more"),
        ("Int16 out of range", defaultModel("Int16", "40000"), .maximum, "/entities/A/attributes/a/default",
         "an Int16 default is an integer within Int16's range"),
        ("Int from a decimal", defaultModel("Int", "1.5"), .type, "/entities/A/attributes/a/default",
         "an Int default is an integer"),
        ("Int from a quoted number", defaultModel("Int", "\"1\""), .type, "/entities/A/attributes/a/default",
         "a quoted scalar is a string"),
        ("Bool from yes", defaultModel("Bool", "yes"), .type, "/entities/A/attributes/a/default",
         "a Bool default is a boolean; yes is a string in YAML 1.2"),
        ("Date other than now or a date", defaultModel("Date", "tomorrow"), .pattern, "/entities/A/attributes/a/default",
         "a Date default is now or an ISO 8601 date-time or date"),
        ("UUID literal malformed", defaultModel("UUID", "1234"), .type, "/entities/A/attributes/a/default",
         "a UUID default is a string (uuid or a UUID literal), and 1234 is a number"),
        ("UUID literal malformed, as text", defaultModel("UUID", "12-34"), .pattern, "/entities/A/attributes/a/default",
         "a UUID default is uuid or matches the UUID pattern"),
        ("URL without scheme", defaultModel("URL", "example"), .pattern, "/entities/A/attributes/a/default",
         "a URL default starts with a scheme"),
        ("Double from text", defaultModel("Double", "abc"), .type, "/entities/A/attributes/a/default",
         "a Double default is a number"),
        ("null default", defaultModel("String", "null"), .type, "/entities/A/attributes/a/default",
         "a default is a scalar, never null"),
        ("name listed twice in one unique constraint", fetchModel("    unique: [[name, rank, name]]"), .uniqueItems,
         "/entities/A/unique/0/2", "the names of a group are uniqueItems"),
        ("empty sort key", fetchModel("    fetches: { f: { sort: [\"-\"] } }"), .pattern,
         "/entities/A/fetches/f/sort/0", "a sort key matches the key-path pattern"),
        // Not in the table, but the same kind of mistake: `strata` says "the predicate is empty".
        ("empty where", fetchModel("    fetches: { f: { where: \"\" } }"), .minLength,
         "/entities/A/fetches/f/where", "a predicate is a non-empty string"),
        ("blank where", fetchModel("    fetches: { f: { sections: { entity: b, where: \"  \" } } }"), .pattern,
         "/entities/A/fetches/f/sections/where", "a predicate has a non-space character"),
        ("name listed twice in one index", fetchModel("    indexes: [[rank, rank]]"), .uniqueItems,
         "/entities/A/indexes/0/1", "the names of a group are uniqueItems"),
    ]

    @Test(arguments: errorMessageTable.indices)
    func rejectsTheErrorMessageTable(row: Int) throws {
        let (name, yaml, kind, path, reason) = Self.errorMessageTable[row]
        let failures = try Self.validator().validate(try Self.json(yaml))
        #expect(
            failures.contains { $0.kind == kind && $0.path == path },
            "\(name) (\(reason)): expected \(kind) at '\(path)'; got:\n\(failures.map(\.description).joined(separator: "\n"))")
        // `strata` rejects it too (in the loader, or in the generator as `strata validate` does).
        let result = SchemaPipeline.load(files: [ModelFile(path: "m.yaml", text: yaml)])
        var errors = result.diagnostics.filter { $0.severity == .error }
        if errors.isEmpty, let schema = result.schema {
            do {
                _ = try Generator.generate(schema)
            } catch let error as SchemaError {
                errors = error.diagnostics
            }
        }
        #expect(!errors.isEmpty, "\(name): strata accepts it")
    }

    /// Mistakes only `strata` sees (cross-references, names, literals, predicates): the JSON
    /// Schema passes them, so an editor's silence is no proof a model is valid.
    static let cliOnly: [(name: String, yaml: String, cliMessage: String)] = [
        ("unknown type name", noteModel(attributes: "title: Strnig"), "unknown type 'Strnig' for attribute 'Note.title'"),
        ("default not a case of the enum", "enums: { P: [low, high] }\n" + noteModel(attributes: "p: { type: P, default: hihg }"),
         "default 'hihg' of 'Note.p' is not a case of enum 'P'"),
        ("Float default out of Float's range", noteModel(attributes: "f: { type: Float, default: 1e39 }"),
         "default 1e39 of 'Note.f' is out of range for Float"),
        ("reserved member name", noteModel(attributes: "id: String"), "attribute name 'id' clashes with the primary key 'Note.id'"),
        ("unknown destination", notebookModel(notebook: "{ to: Notbook, inverse: notes }"), "unknown entity 'Notbook'"),
        ("bad predicate", noteModel(entity: "fetches: { all: { where: \"title === 'x'\" } }"),
         "expected a key path, value or $parameter, found '='"),
        ("min greater than max", noteModel(attributes: "n: { type: Int, min: 5, max: 4 }"),
         "min 5 of 'Note.n' is greater than its max 4"),
        ("maxLength on an Int", noteModel(attributes: "n: { type: Int, maxLength: 4 }"),
         "'maxLength' applies only to String attributes, and 'Note.n' is Int"),
    ]

    @Test(arguments: cliOnly.indices)
    func cliOnlyMistakesPassTheSchema(row: Int) throws {
        let (name, yaml, message) = Self.cliOnly[row]
        let failures = try Self.validator().validate(try Self.json(yaml))
        #expect(failures.isEmpty, "\(name): \(failures.map(\.description))")
        let result = SchemaPipeline.load(files: [ModelFile(path: "Bad.yaml", text: yaml)])
        #expect(result.diagnostics.contains { $0.severity == .error && "\($0)".contains(message) },
                "\(name): \(result.diagnostics.map(\.description))")
    }
}
