import Foundation
import StrataSchema
import Testing

/// The JSON Schema's part for `Codable<T>` attributes and abstract entities: what it accepts
/// and what it rejects for the same reason `strata validate` does.
@Suite struct ShapesJSONSchemaTests {
    static let rejections: [SchemaRejection] = [
        SchemaRejection(
            "a default on a Codable attribute", noteModel(attributes: "s: { type: Codable<Style>, default: x }"),
            .type, at: "/entities/Note/attributes/s/default", cli: "a Codable attribute has no default literal ('Note.s')"),
        SchemaRejection(
            "an indexed Codable attribute", noteModel(attributes: "s: { type: \"Codable<[String]>\", indexed: true }"),
            .const, at: "/entities/Note/attributes/s/indexed", cli: "'indexed' on 'Note.s': a Codable attribute"),
        SchemaRejection(
            "a unique Codable attribute", noteModel(attributes: "s: { type: Codable<Style>, unique: true }"),
            .const, at: "/entities/Note/attributes/s/unique", cli: "'unique' on 'Note.s': a Codable attribute"),
        SchemaRejection(
            "'abstract' is not a boolean", noteModel(entity: "abstract: maybe"),
            .type, at: "/entities/Note/abstract", cli: "'abstract' must be true or false, not 'maybe'"),
        SchemaRejection(
            "'extends' is not a name", noteModel(entity: "extends: 3x"),
            .pattern, at: "/entities/Note/extends", cli: "unknown entity '3x' in 'extends' of 'Note'"),
        SchemaRejection(
            "a fetch on an abstract entity", noteModel(entity: "abstract: true\n    fetches: { all: }"),
            .propertyNames, at: "/entities/Note/fetches/all", cli: "abstract entity 'Note' has no table to fetch from"),
    ]

    @Test(arguments: rejections)
    func rejects(_ row: SchemaRejection) async throws {
        try await JSONSchemaTests().rejects(row)
    }

    @Test func acceptsCodableAttributesAndAbstractEntities() throws {
        let yaml = """
            entities:
              Base:
                abstract: true
                attributes: { name: String, style: { type: Codable<Style>, optional: true } }
                relationships:
                fetches:
                unique: [[name]]
              Leaf:
                extends: Base
                attributes:
                  points: "Codable<[Point]>"
                  map: { type: "Codable<[String: MyKit.Value]>", optional: true, indexed: false }

            """
        #expect(!SchemaPipeline.load(files: [ModelFile(path: "Model.yaml", text: yaml)]).hasErrors)
        let failures = try JSONSchemaTests.validator().validate(try JSONSchemaTests.json(yaml))
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))")
    }
}
