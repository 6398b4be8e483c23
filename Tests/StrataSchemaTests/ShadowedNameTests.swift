import Foundation
import Testing

@testable import StrataSchema

/// Names that `import Strata` also brings into the app's code — Strata's own types, the GRDB
/// types it re-exports, Foundation's — are allowed for entities and enums, with a warning
/// that says how to write the other type.
@Suite("Shadowed type names")
struct ShadowedNameTests {
    @Test("an entity or enum named like a re-exported GRDB type, a Strata type or a Foundation type is warned about")
    func warned() {
        let diagnostics = diagnostics("""
            enums:
              Configuration: [a, b]
            entities:
              Row:
                attributes: { cells: Int }
              Database:
                attributes: { name: String }
              ChangeBatch:
                attributes: { size: Int }
              Note:
                attributes: { title: String }
            """)
        let hidden = diagnostics.compactMap { line -> String? in
            guard let range = line.range(of: "warning: ") else { return nil }
            return line[range.upperBound...].split(separator: " ").prefix(3).joined(separator: " ")
        }
        #expect(hidden == ["enum 'Configuration' hides", "entity 'Row' hides", "entity 'Database' hides", "entity 'ChangeBatch' hides"], "\(diagnostics)")
        #expect(diagnostics.contains {
            $0.hasSuffix("warning: entity 'Row' hides GRDB.Row in the code of the target that generates it: write GRDB.Row there for the GRDB type (generated code always does), or rename the entity")
        }, "\(diagnostics)")
        #expect(diagnostics.contains { $0.contains("hides Strata.ChangeBatch") })
        #expect(diagnostics.contains { $0.contains("hides GRDB.Configuration") })
        #expect(!diagnostics.contains { $0.contains("Note") })
    }
}

extension ShadowedNameTests {
    @Test("the model's namespace is checked like an entity: a name generated code uses is an error, a hidden type a warning")
    func modelName() {
        func diagnostics(modelName: String) -> [String] {
            SchemaPipeline.load(files: [ModelFile(path: "m.yaml", text: "entities:\n  Note:\n    attributes: { title: String }\n")], modelName: modelName)
                .diagnostics.map(\.description)
        }
        #expect(diagnostics(modelName: "NotesModel") == [])
        #expect(diagnostics(modelName: "Row") == [
            "warning: model name 'Row' hides GRDB.Row in the code of the target that generates it: write GRDB.Row there "
                + "for the GRDB type (generated code always does), or choose another --model-name",
        ])
        #expect(diagnostics(modelName: "Store").first?.hasPrefix("warning: model name 'Store' hides Strata.Store") == true)
        for name in ["Strata", "GRDB", "Swift", "ID", "Fetches"] {
            #expect(diagnostics(modelName: name) == [
                "error: model name '\(name)' clashes with a name the generated code uses; choose another --model-name",
            ])
        }
    }

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let grdbSources = packageRoot.appendingPathComponent(".build/checkouts/GRDB.swift/GRDB")

    /// The names of the public (or open) top-level types declared in the Swift files under
    /// `folder`, underscored names left out: declarations that start a line.
    static func publicTopLevelTypes(under folder: URL) throws -> Set<String> {
        let declaration = /^(?:@\w+(?:\([^)]*\))? )*(?:public|open) (?:final )?(?:indirect )?(?:struct|class|enum|protocol|actor|typealias) (\w+)/
            .anchorsMatchLineEndings()
        var names: Set<String> = []
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: declaration) where !match.1.hasPrefix("_") {
                names.insert(String(match.1))
            }
        }
        return names
    }

    @Test("every public type of the runtime is in the list, and only those")
    func strataTypesAreListed() throws {
        let declared = try Self.publicTopLevelTypes(under: Self.packageRoot.appendingPathComponent("Sources/Strata"))
        #expect(declared.count > 50)
        let listed = Set(ReservedTypeNameRule.strataTypes)
        #expect(declared.subtracting(listed).sorted() == [], "public in Sources/Strata, missing from strataTypes")
        #expect(listed.subtracting(declared).sorted() == [], "in strataTypes, not a public type of Sources/Strata")
        let all = ReservedTypeNameRule.grdbTypes + ReservedTypeNameRule.strataTypes + ReservedTypeNameRule.foundationTypes
        #expect(ReservedTypeNameRule.shadowedTypes.count == all.count, "a name is listed twice")
    }

    /// GRDB's sources are at hand once the package is built with SwiftPM's default build folder.
    @Test(
        "every public type of GRDB is in the list, and only those",
        .enabled(if: FileManager.default.fileExists(atPath: grdbSources.path), "GRDB's sources are not in .build/checkouts"))
    func grdbTypesAreListed() throws {
        let declared = try Self.publicTopLevelTypes(under: Self.grdbSources)
        let listed = Set(ReservedTypeNameRule.grdbTypes)
        #expect(declared.subtracting(listed).sorted() == [], "public in GRDB, missing from grdbTypes")
        #expect(listed.subtracting(declared).sorted() == [], "in grdbTypes, not a public type of GRDB")
    }
}
