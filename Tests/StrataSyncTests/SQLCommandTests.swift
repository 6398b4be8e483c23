import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// `strata sql --dialect postgresql`: the built command-line tool prints, from the model
/// files, the very script `PostgresSchema(schema:).sql` makes from the generated descriptor.
@Suite struct SQLCommandTests {
    /// The package's root folder (this file is Tests/StrataSyncTests/SQLCommandTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func strata(_ arguments: [String]) async throws -> StrataCLI.Run {
        try await StrataCLI.run(StrataCLI.executable(), arguments, in: root)
    }

    @Test func theCommandPrintsTheServerSchemaOfTheModelFiles() async throws {
        let run = try await Self.strata(["sql", "--dialect", "postgresql", "Tests/SyncFixture/Models"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "")
        let expected = try PostgresSchema(schema: StrataModel.schema).sql
        #expect(run.stdout == expected)
        #expect(run.stdout.contains("CREATE TABLE IF NOT EXISTS \"Card\""))
    }

    /// The reference models of StrataCodegenTests (keys, rules, defaults of every type,
    /// one-to-ones, ordered and self many-to-manys, abstract entities, shadowed names), from
    /// their YAML and from their reference descriptors (Reference/, symlinked).
    static let references: [(file: String, schema: SchemaDescriptor)] = [
        ("EdgeCases", EdgeModel.schema), ("Keys", KeysModel.schema), ("Naming", NamingModel.schema),
        ("Notes", NotesModel.schema), ("Pairs", PairsModel.schema), ("Predicates", PredicateModel.schema),
        ("Rules", RulesModel.schema), ("Shadows", ShadowsModel.schema), ("Shapes", ShapesModel.schema),
        ("Todos", TodosModel.schema),
    ]

    @Test(arguments: references.indices)
    func theCommandMatchesTheDescriptorOfEveryReferenceModel(row: Int) async throws {
        let (file, schema) = Self.references[row]
        // The model's name is recorded by the script: the descriptor's, as the plugin names it.
        let run = try await Self.strata([
            "sql", "--dialect", "postgresql", "--model-name", schema.name, "Tests/StrataCodegenTests/Resources/\(file).yaml",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == (try PostgresSchema(schema: schema).sql), "\(file)")
    }

    /// A model with per-user data: the script has its tables but not the triggers of
    /// `access:` (PostgresSchema's has them), and the command says so on standard error.
    @Test func aModelWithPerUserDataIsNamedOnStandardError() async throws {
        let run = try await Self.strata(["sql", "--dialect", "postgresql", "Tests/SharingFixture/Models"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("CREATE TABLE IF NOT EXISTS \"Board\""))
        #expect(!run.stdout.contains("strata_sync_access"))
        #expect(run.stderr.hasPrefix("note: the triggers of the per-user data (access: of Board,"), "\(run.stderr)")
        #expect(run.stderr.contains("PostgresSchema(schema:).sql"), "\(run.stderr)")
    }

    @Test func anUnknownDialectIsRefused() async throws {
        let run = try await Self.strata(["sql", "--dialect", "sqlite", "Tests/SyncFixture/Models"])
        #expect(run.status == 64)
        #expect(run.stdout == "")
        #expect(run.stderr.contains("Error: Unknown SQL dialect 'sqlite': the supported dialect is 'postgresql'."), "\(run.stderr)")
        let missing = try await Self.strata(["sql", "Tests/SyncFixture/Models"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("Missing expected argument '--dialect <dialect>'"), "\(missing.stderr)")
    }
}
