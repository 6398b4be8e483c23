import Foundation
import Testing

@testable import StrataSchema

/// Loads one in-memory model file named `m.yaml` and returns its diagnostics as printed.
func diagnostics(_ yaml: String, file: String = "m.yaml") -> [String] {
    SchemaPipeline.load(files: [ModelFile(path: file, text: yaml)]).diagnostics.map(\.description)
}

/// Loads one in-memory model file and returns the result.
func load(_ yaml: String, file: String = "m.yaml") -> SchemaLoadResult {
    SchemaPipeline.load(files: [ModelFile(path: file, text: yaml)])
}

/// A file of this test target's `Resources` folder.
func resourceURL(_ name: String) throws -> URL {
    try #require(Bundle.module.url(forResource: "Resources/" + name, withExtension: nil))
}
