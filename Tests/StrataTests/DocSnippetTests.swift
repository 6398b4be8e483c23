import Foundation
import Testing

/// The Swift of the README and the DocC articles is compiled: every ```swift block is in a
/// source file of the snippet targets (`Tests/DocSnippets/`, built with warnings as errors),
/// line for line, so a snippet that stops compiling fails the build, and a block edited in
/// the docs alone fails here. The article *Your first app* is a whole program, run here.
@Suite("Docs' Swift is compiled")
struct DocSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The documents whose Swift is compiled.
    static var documents: [String] {
        let docc = "Sources/Strata/Strata.docc"
        let articles = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(docc).path)) ?? []
        return ["README.md"] + articles.filter { $0.hasSuffix(".md") }.sorted().map { "\(docc)/\($0)" }
    }

    /// Blocks that are not Swift a target can compile, by document and first line, with why.
    static let notCompiled: [(document: String, firstLine: String, reason: String)] = [
        ("README.md", "dependencies: [", "a part of a package manifest"),
        ("Sources/Strata/Strata.docc/YourFirstApp.md", "// swift-tools-version:6.1", "a package manifest"),
    ]

    struct Block {
        var document: String
        var line: Int
        var language: String
        var lines: [String]
        var text: String { lines.joined(separator: "\n") + "\n" }
    }

    /// The fenced code blocks of `document`.
    static func blocks(in document: String) throws -> [Block] {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        var blocks: [Block] = []
        var current: Block?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = current {
                if trimmed == "```" {
                    blocks.append(block)
                    current = nil
                } else {
                    block.lines.append(line)
                    current = block
                }
            } else if trimmed.hasPrefix("```") {
                current = Block(document: document, line: index + 1, language: String(trimmed.dropFirst(3)), lines: [])
            }
        }
        return blocks
    }

    /// Lines without their indentation and trailing spaces, blank lines left out.
    static func normalized(_ lines: [String]) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Every Swift source file of the snippet targets, normalized.
    static func snippetSources() throws -> [(path: String, lines: [String])] {
        let folder = root.appendingPathComponent("Tests/DocSnippets")
        guard let files = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        return try files.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            let text = try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
            return ("Tests/DocSnippets/\(path)", normalized(text.components(separatedBy: "\n")))
        }
    }

    static func contains(_ haystack: [String], _ needle: [String]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start..<(start + needle.count)].elementsEqual(needle)
        }
    }

    @Test("every ```swift block of the README and the articles is in a compiled snippet file")
    func everySwiftBlockIsCompiled() throws {
        let sources = try Self.snippetSources()
        #expect(!sources.isEmpty)
        var blocksSeen = 0
        var exceptionsUsed = Set<String>()
        for document in Self.documents {
            for block in try Self.blocks(in: document) where block.language == "swift" {
                blocksSeen += 1
                let first = block.lines.first?.trimmingCharacters(in: .whitespaces) ?? ""
                if let exception = Self.notCompiled.first(where: { $0.document == document && $0.firstLine == first }) {
                    exceptionsUsed.insert("\(exception.document) \(exception.firstLine)")
                    continue
                }
                let needle = Self.normalized(block.lines)
                #expect(
                    sources.contains { Self.contains($0.lines, needle) },
                    "\(document):\(block.line): this ```swift block is in no file of Tests/DocSnippets: copy it there, as written, where it compiles")
            }
        }
        #expect(blocksSeen > 30)
        // An exception whose block is gone is stale.
        #expect(exceptionsUsed.count == Self.notCompiled.count, "stale exceptions: \(Self.notCompiled.map { "\($0.document) \($0.firstLine)" }.filter { !exceptionsUsed.contains($0) })")
    }

    // MARK: - Your first app

    static let article = "Sources/Strata/Strata.docc/YourFirstApp.md"

    @Test("the article's model and program are the compiled target's files, whole")
    func theFirstAppIsTheArticlesProgram() throws {
        let blocks = try Self.blocks(in: Self.article)
        let folder = Self.root.appendingPathComponent("Tests/DocSnippets/FirstApp")
        let model = try String(contentsOf: folder.appendingPathComponent("Models/Recipes.yaml"), encoding: .utf8)
        let main = try String(contentsOf: folder.appendingPathComponent("main.swift"), encoding: .utf8)
        let view = try String(contentsOf: folder.appendingPathComponent("RecipesView.swift"), encoding: .utf8)
        #expect(blocks.filter { $0.language == "yaml" }.map(\.text) == [model])
        let swift = blocks.filter { $0.language == "swift" }.map(\.text)
        #expect(swift.contains(main), "the article's program differs from Tests/DocSnippets/FirstApp/main.swift")
        #expect(swift.contains(view), "the article's SwiftUI view differs from Tests/DocSnippets/FirstApp/RecipesView.swift")
    }

    /// The program, built beside this test bundle.
    static var firstApp: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("StrataFirstApp").path
    }

    @Test("the program prints what the article shows")
    func theFirstAppPrintsWhatTheArticleShows() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.firstApp), "build it first: swift build --build-tests")
        let shown = try #require(try Self.blocks(in: Self.article).first { $0.language == "text" }).text
        let run = try FirstUseTests.run(Self.firstApp, [])
        #expect(run.reason == .exit && run.status == 0, "\(run.output)")
        #expect(run.output == shown)
    }
}
