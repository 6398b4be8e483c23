import Foundation
import StrataCodegen
import StrataSchema
import Testing

/// What README.md shows of the model tools must be what they print.
@Suite struct ReadmeModelTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func readme() throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The body of the first fenced block that opens with "```<language>" after `marker`.
    static func block(_ language: String, after marker: String, in text: String) throws -> String {
        let start = try #require(text.range(of: marker), "README.md no longer says '\(marker)'")
        let fence = try #require(
            text.range(of: "```\(language)\n", range: start.upperBound..<text.endIndex), "no ```\(language) block")
        let end = try #require(text.range(of: "\n```", range: fence.upperBound..<text.endIndex))
        return String(text[fence.upperBound..<end.lowerBound])
    }

    @Test("The Mermaid diagram is what `strata diagram Models` prints")
    func diagram() throws {
        let shown = try Self.block("mermaid", after: "## The package's own model", in: Self.readme())
        let result = SchemaPipeline.load(paths: [Self.packageRoot.appendingPathComponent("Models").path])
        let schema = try #require(result.schema, "\(result.diagnostics)")
        let rendered = MermaidRenderer.render(schema)
        #expect(shown + "\n" == rendered || shown == rendered, """
            README.md's diagram is stale; replace the ```mermaid block with `strata diagram Models`:
            \(rendered)
            """)
    }

    @Test("The tour's model is valid, and its misspelled sort key gives the error the README shows")
    func tourDiagnostic() throws {
        let readme = try Self.readme()
        let yaml = try Self.block("yaml", after: "### 1. Write a model", in: readme) + "\n"
        let valid = SchemaPipeline.load(files: [ModelFile(path: "Models/Notes.yaml", text: yaml)])
        let schema = try #require(valid.schema)
        #expect(valid.diagnostics.isEmpty, "\(valid.diagnostics)")
        _ = try Generator.generate(schema, modelFiles: ["Models/Notes.yaml"])

        // The README names the mistake: `sort: [-pinned, titel]` in `byNotebook`.
        let mistake = "sort: [-pinned, titel]"
        #expect(readme.contains("here `\(mistake)` in `byNotebook`"))
        let correct = mistake.replacingOccurrences(of: "titel", with: "title")
        #expect(yaml.components(separatedBy: correct).count == 2, "'\(correct)' should occur once in the tour model")
        let broken = yaml.replacingOccurrences(of: correct, with: mistake)
        let result = SchemaPipeline.load(files: [ModelFile(path: "Models/Notes.yaml", text: broken)])

        let shown = try Self.block("", after: "compiler-style error pointing into the YAML", in: readme)
        #expect(result.diagnostics.map(\.description) == [shown])
    }
}
