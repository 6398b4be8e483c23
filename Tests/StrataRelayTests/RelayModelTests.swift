import Foundation
import StrataRelay
import StrataSyncFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// The relay reads the model from its YAML files at run time: the descriptor it makes is the
    /// one the build plugin generates for the same files, value for value.
    @Suite struct RelayModelTests {
        /// The reference models of StrataCodegenTests (keys, rules, defaults of every type,
        /// one-to-ones, ordered and self many-to-manys, abstract entities, shadowed names), with
        /// their reference descriptors (Reference/, symlinked).
        static let references: [(file: String, schema: SchemaDescriptor)] = [
            ("EdgeCases", EdgeModel.schema), ("Keys", KeysModel.schema), ("Naming", NamingModel.schema),
            ("Notes", NotesModel.schema), ("Pairs", PairsModel.schema), ("Predicates", PredicateModel.schema),
            ("Rules", RulesModel.schema), ("Shadows", ShadowsModel.schema), ("Shapes", ShapesModel.schema),
            ("Todos", TodosModel.schema),
        ]

        @Test(arguments: references.indices)
        func theDescriptorFromYAMLIsTheGeneratedOne(row: Int) throws {
            let (file, schema) = Self.references[row]
            let path = packageRoot.appendingPathComponent("Tests/StrataCodegenTests/Resources/\(file).yaml").path
            let loaded = try RelayModel.load(paths: [path], modelName: schema.name)
            #expect(loaded == schema, "\(file)")
            for (mine, theirs) in zip(loaded.entities, schema.entities) where mine != theirs {
                Issue.record("\(file).\(mine.name): \(mine) vs \(theirs)")
            }
            #expect(try PostgresSchema(schema: loaded).version == PostgresSchema(schema: schema).version)
        }

        @Test func theSyncFixtureFromItsFolder() throws {
            let loaded = try RelayModel.load(paths: [packageRoot.appendingPathComponent("Tests/SyncFixture/Models").path])
            #expect(loaded == StrataModel.schema)
        }

        @Test func aModelWithErrorsIsRefusedWithItsDiagnostics() throws {
            let folder = try TemporaryDirectory()
            let path = folder.path("Broken.yaml")
            try "version: 1\nentities:\n  Note:\n    attributes:\n      title: Strin\n".write(toFile: path, atomically: true, encoding: .utf8)
            #expect {
                try RelayModel.load(paths: [path])
            } throws: { error in
                let text = String(describing: error)
                return error is RelayModelError && text.contains("Broken.yaml:5") && text.contains("Strin")
            }
        }
    }
}
