import Foundation
import Testing

@testable import StrataSchema

@Suite("The DESIGN.md model")
struct GoodModelTests {
    @Test func printsDiagnostics() throws {
        let url = try resourceURL("Notes.yaml")
        let result = SchemaPipeline.load(paths: [url.path])
        for d in result.diagnostics { print(d) }
        print(result.schema as Any)
    }
}
