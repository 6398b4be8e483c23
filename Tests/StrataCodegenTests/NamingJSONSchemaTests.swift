import Foundation
import StrataCodegen
import StrataSchema
import Testing

/// The JSON Schema of `foreignKey`, index directions and names, `transient` and fixed date
/// defaults: what it accepts, and what it refuses that `strata` refuses too.
@Suite struct NamingJSONSchemaTests {
    @Test func acceptsTheNewOptions() throws {
        let yaml = """
            entities:
              Author:
                relationships: { posts: { to: Post, many: true, inverse: author } }
              Post:
                attributes:
                  title: String
                  at: { type: Date, default: 2024-01-01T09:30:00.250+02:00 }
                  day: { type: Date, default: 2024-01-01 }
                  draft: { type: String, default: "", transient: true }
                relationships:
                  author: { to: Author, inverse: posts, foreignKey: authorRef }
                indexes:
                  - [author, -at, +title]
                  - { name: posts_by_day, columns: [-day] }
            """
        #expect(!SchemaPipeline.load(files: [ModelFile(path: "Model.yaml", text: yaml)]).hasErrors)
        let failures = try JSONSchemaTests.validator().validate(try JSONSchemaTests.json(yaml))
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))")
    }

    static let rejections: [SchemaRejection] = [
        SchemaRejection(
            "Date default of another shape", noteModel(attributes: "at: { type: Date, default: tomorrow }"),
            .pattern, at: "/entities/Note/attributes/at/default",
            cli: "default 'tomorrow' of 'Note.at' is not a valid date: expected ISO 8601"),
        SchemaRejection(
            "transient is not a boolean", noteModel(attributes: "t: { type: Int, default: 0, transient: yes }"),
            .type, at: "/entities/Note/attributes/t/transient", cli: "'transient' must be true or false, not 'yes'"),
        SchemaRejection(
            "an index mapping without columns", noteModel(entity: "indexes: [{ name: byTitle }]"),
            .oneOf, at: "/entities/Note/indexes/0", cli: "an index of 'Note' needs 'columns'"),
        SchemaRejection(
            "an index name that is not an identifier", noteModel(entity: "indexes: [{ name: 'by title', columns: [title] }]"),
            .oneOf, at: "/entities/Note/indexes/0",
            cli: "index name 'by title' of 'Note' is not a valid name"),
        SchemaRejection(
            "foreignKey on a to-many",
            """
            entities:
              A:
                relationships: { bs: { to: B, many: true, inverse: a, foreignKey: x } }
              B:
                relationships: { a: { to: A, inverse: bs } }
            """,
            .const, at: "/entities/A/relationships/bs/many",
            cli: "'foreignKey' applies only to to-one relationships, and 'A.bs' is to-many"),
    ]

    @Test(arguments: rejections)
    func rejects(_ row: SchemaRejection) throws {
        let failures = try JSONSchemaTests.validator().validate(try JSONSchemaTests.json(row.yaml))
        #expect(
            failures.contains { $0.kind == row.kind && $0.path == row.path },
            "expected \(row.kind) at '\(row.path)'; got:\n\(failures.map(\.description).joined(separator: "\n"))")
        let result = SchemaPipeline.load(files: [ModelFile(path: "Bad.yaml", text: row.yaml)])
        #expect(result.diagnostics.contains { $0.message.contains(row.cliMessage) },
                "\(result.diagnostics.map(\.description))")
    }
}
