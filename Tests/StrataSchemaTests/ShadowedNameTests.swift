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
