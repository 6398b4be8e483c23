import Foundation
import StrataCodegen
import StrataSchema
import Testing

/// Reference tests: `Resources/<name>.yaml` → the expected files in `Resources/<name>/`,
/// compared byte for byte. Run with `STRATA_RECORD=1` to re-record the expected files.
@Suite struct ReferenceTests {
    static let cases: [(name: String, modelName: String)] = [
        ("Notes", "NotesModel"),
        ("EdgeCases", "EdgeModel"),
        ("Predicates", "PredicateModel"),
        ("Todos", "TodosModel"),
        ("Naming", "NamingModel"),
        ("Shapes", "ShapesModel"),
        ("Rules", "RulesModel"),
        ("Keys", "KeysModel"),
        ("Pairs", "PairsModel"),
        ("Shadows", "ShadowsModel"),
    ]

    @Test(arguments: cases.map(\.name))
    func generatedCodeMatchesReference(name: String) throws {
        let modelName = Self.cases.first { $0.name == name }!.modelName
        let input = TestResources.directory.appendingPathComponent(name + ".yaml")
        let contents = try Data(contentsOf: input)
        let result = SchemaPipeline.load(files: [ModelFile(path: name + ".yaml", contents: Array(contents))], modelName: modelName)
        // EdgeCases names entities like runtime and Foundation types on purpose: warnings say
        // how to write those types in the app's code; nothing else is reported.
        let expected: [String] = name == "EdgeCases"
            ? [("entity", "Store", "Strata", "94:3"), ("entity", "Predicate", "Foundation", "107:3"), ("entity", "Date", "Foundation", "113:3")]
                .map { kind, type, module, position in
                    "EdgeCases.yaml:\(position): warning: \(kind) '\(type)' hides \(module).\(type) in the code of the target "
                        + "that generates it: write \(module).\(type) there for the \(module) type (generated code always does), "
                        + "or rename the \(kind)"
                }
            : []
        if name == "Shadows" {
            // Every entity and enum of Shadows is named like a type `import Strata` brings in.
            let types = result.schema.map { $0.entities.count + $0.enums.count } ?? 0
            #expect(result.diagnostics.count == types && types > 30, "\(result.diagnostics)")
            #expect(result.diagnostics.allSatisfy { $0.severity == .warning && $0.message.contains(" hides ") }, "\(result.diagnostics)")
        } else {
            #expect(result.diagnostics.map(\.description) == expected)
        }
        let schema = try #require(result.schema)
        let files = try Generator.generate(schema, modelFiles: [name + ".yaml"])
        #expect(files.map(\.name) == [name + ".strata.swift", modelName + "+Schema.strata.swift"])

        let expectedDirectory = TestResources.directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["STRATA_RECORD"] == "1" {
            try FileManager.default.createDirectory(at: expectedDirectory, withIntermediateDirectories: true)
            for file in files {
                try Data(file.contents.utf8).write(to: expectedDirectory.appendingPathComponent(file.name))
            }
            return
        }
        for file in files {
            let expectedURL = expectedDirectory.appendingPathComponent(file.name)
            let expected = (try? String(contentsOf: expectedURL, encoding: .utf8)) ?? ""
            #expect(
                file.contents == expected,
                "\(name)/\(file.name) differs from the reference (STRATA_RECORD=1 re-records):\n\(LineDiff.render(expected: expected, actual: file.contents))"
            )
        }
    }

    /// `strata diagram` of each reference model → `Resources/<name>.mmd`.
    @Test(arguments: cases.map(\.name))
    func diagramMatchesReference(name: String) throws {
        let modelName = Self.cases.first { $0.name == name }!.modelName
        let input = TestResources.directory.appendingPathComponent(name + ".yaml")
        let file = ModelFile(path: name + ".yaml", contents: Array(try Data(contentsOf: input)))
        let schema = try #require(SchemaPipeline.load(files: [file], modelName: modelName).schema)
        let diagram = MermaidRenderer.render(schema)
        let expectedURL = TestResources.directory.appendingPathComponent(name + ".mmd")
        if ProcessInfo.processInfo.environment["STRATA_RECORD"] == "1" {
            try Data(diagram.utf8).write(to: expectedURL)
            return
        }
        let expected = (try? String(contentsOf: expectedURL, encoding: .utf8)) ?? ""
        #expect(
            diagram == expected,
            "\(name).mmd differs from the reference (STRATA_RECORD=1 re-records):\n\(LineDiff.render(expected: expected, actual: diagram))"
        )
    }

    @Test func generationIsDeterministic() throws {
        let input = TestResources.directory.appendingPathComponent("EdgeCases.yaml")
        let file = ModelFile(path: "EdgeCases.yaml", contents: Array(try Data(contentsOf: input)))
        let schema = try #require(SchemaPipeline.load(files: [file], modelName: "EdgeModel").schema)
        let first = try Generator.generate(schema, modelFiles: ["EdgeCases.yaml"])
        let second = try Generator.generate(schema, modelFiles: ["EdgeCases.yaml"])
        #expect(first == second)
    }
}

enum TestResources {
    /// The checked-in `Resources` folder (not the copy in the test bundle), so that
    /// `STRATA_RECORD=1` writes where git sees it.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources")
}

/// A small line diff for failure messages: `-` expected, `+` actual, with a few lines of context.
enum LineDiff {
    static func render(expected: String, actual: String) -> String {
        let a = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let b = actual.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let difference = b.difference(from: a)
        var removed: [Int: String] = [:]
        var inserted: [Int: String] = [:]
        for change in difference {
            switch change {
            case .remove(let offset, let element, _): removed[offset] = element
            case .insert(let offset, let element, _): inserted[offset] = element
            }
        }
        var output: [String] = []
        var i = 0
        var j = 0
        var shown = 0
        while (i < a.count || j < b.count) && shown < 80 {
            if i < a.count, let line = removed[i] {
                output.append("\(i + 1): - \(line)")
                i += 1
                shown += 1
            } else if j < b.count, let line = inserted[j] {
                output.append("\(j + 1): + \(line)")
                j += 1
                shown += 1
            } else {
                i += 1
                j += 1
            }
        }
        return output.joined(separator: "\n")
    }
}

@Suite struct MultiFileTests {
    @Test func eachModelFileGetsItsOwnOutput() throws {
        let files = [
            ModelFile(path: "Models/Notes.yaml", text: """
                enums:
                  Priority: [low, high]
                entities:
                  Note:
                    attributes: { title: String, priority: { type: Priority, default: low } }
                    relationships:
                      tags: { to: Tag, many: true, inverse: notes }
                """),
            ModelFile(path: "Models/Tags.yml", text: """
                entities:
                  Tag:
                    attributes: { name: String }
                    relationships:
                      notes: { to: Note, many: true, inverse: tags }
                """),
        ]
        let result = SchemaPipeline.load(files: files, modelName: "Split")
        let schema = try #require(result.schema, "\(result.diagnostics)")
        let generated = try Generator.generate(schema, modelFiles: files.map(\.path))
        #expect(generated.map(\.name) == ["Notes.strata.swift", "Tags.strata.swift", "Split+Schema.strata.swift"])
        #expect(generated[0].contents.contains("public enum Priority:\n"))
        #expect(generated[0].contents.contains("public struct Note: Strata.StrataEntity"))
        #expect(!generated[0].contents.contains("public struct Tag: "))
        #expect(generated[1].contents.contains("public struct Tag: Strata.StrataEntity"))
        #expect(generated[2].contents.contains("public enum Split {"))
        #expect(!generated[2].contents.contains("public struct"))
    }

    @Test func theOrderOfTheFilesDoesNotMatter() throws {
        let files = [
            ModelFile(path: "Models/B.yaml", text: "entities:\n  Beta:\n    attributes: { name: String }\n"),
            ModelFile(path: "Models/A.yaml", text: "enums:\n  E: [x, y]\nentities:\n  Alpha:\n    attributes: { e: E }\n"),
        ]
        func generate(_ files: [ModelFile]) throws -> [String] {
            let schema = try #require(SchemaPipeline.load(files: files).schema)
            return try Generator.generate(schema, modelFiles: files.map(\.path)).map { "\($0.name)\n\($0.contents)" }
        }
        let forwards = try generate(files), backwards = try generate(files.reversed())
        #expect(forwards.sorted() == backwards.sorted())
        #expect(forwards.last?.contains("Alpha") == true)
    }

    @Test func hiddenModelFilesInAFolderAreLeftOut() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-hidden-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["Notes.yaml", ".Notes.yaml", "Tags.yml", "README.md"] {
            try Data("x: 1\n".utf8).write(to: directory.appendingPathComponent(name))
        }
        let expanded = SchemaPipeline.expand(directory.path).map { ($0 as NSString).lastPathComponent }
        #expect(expanded == ["Notes.yaml", "Tags.yml"])
    }

    @Test func clashingOutputNamesAreErrors() throws {
        let files = [
            ModelFile(path: "A/Notes.yaml", text: "entities:\n  Note:\n    attributes: { title: String }\n"),
            ModelFile(path: "B/notes.yml", text: "entities:\n  Tag:\n    attributes: { name: String }\n"),
        ]
        let schema = try #require(SchemaPipeline.load(files: files).schema)
        #expect(throws: SchemaError.self) { try Generator.generate(schema, modelFiles: files.map(\.path)) }
    }
}

@Suite struct LineDiffTests {
    @Test func showsRemovedAndInsertedLinesWithNumbers() {
        let diff = LineDiff.render(expected: "a\nb\nc\n", actual: "a\nB\nc\nd\n")
        #expect(diff == "2: - b\n2: + B\n4: + d")
    }
}
