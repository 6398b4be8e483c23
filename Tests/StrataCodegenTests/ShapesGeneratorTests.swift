import StrataSchema
import Testing

@testable import StrataCodegen

/// Generated code for `Codable<T>` attributes and abstract entities, beyond the Shapes
/// reference model.
@Suite struct ShapesGeneratorTests {
    @Test func keywordsInACodableTypeAreEscaped() {
        #expect(SwiftNames.typeExpression("[class: Kit.default]") == "[`class`: Kit.`default`]")
        #expect(SwiftNames.typeExpression("Box<Int, [String?]>") == "Box<Int, [String?]>")
        #expect(SwiftNames.type(.codable("Kit.Style")) == "Kit.Style")
    }

    @Test func abstractEntitiesAreProtocolsWithoutTablesOrDescriptors() throws {
        let result = SchemaPipeline.load(files: [ModelFile(path: "m.yaml", text: """
            entities:
              Base:
                abstract: true
                attributes: { name: String, extra: { type: "Codable<[class]>", optional: true } }
              Leaf: { extends: Base }

            """)])
        let schema = try #require(result.schema, "\(result.diagnostics)")
        let files = try Generator.generate(schema, modelFiles: ["m.yaml"])
        let code = files[0].contents
        #expect(code.contains("public protocol Base: Strata.StrataEntity {"))
        #expect(code.contains("    var extra: [`class`]? { get set }"))
        #expect(code.contains("    static var name: Strata.TypedColumn<Self, Swift.String> { get }"))
        #expect(!code.contains("static var extra"))
        #expect(code.contains("public struct Leaf: Strata.StrataEntity, Swift.Identifiable, Base {"))
        #expect(code.contains("self.extra = try columns.optionalJSONValue(2, \"extra\", of: \"Leaf\")"))
        let descriptor = files[1].contents
        #expect(descriptor.contains("name: \"Leaf\"") && !descriptor.contains("name: \"Base\""))
        #expect(descriptor.contains(".init(name: \"extra\", type: .json, isOptional: true)"))
    }
}
