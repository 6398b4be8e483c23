@_exported import StrataTestSupport
import Foundation
import Testing

@testable import StrataSchema


/// Inputs that must produce diagnostics, never a crash or a hang.
@Suite("Malformed input")
struct MalformedInputTests {
    /// Any result must be consistent: a schema exactly when there is no error.
    func checkConsistent(_ result: SchemaLoadResult) {
        #expect((result.schema == nil) == result.hasErrors)
    }

    @Test func everyTruncationOfTheDesignModel() throws {
        let bytes = try Array(Data(contentsOf: resourceURL("Notes.yaml")))
        var failures = 0
        for length in 0..<bytes.count {
            let result = SchemaPipeline.load(files: [ModelFile(path: "t.yaml", contents: Array(bytes[..<length]))])
            checkConsistent(result)
            if result.hasErrors { failures += 1 }
        }
        // Most prefixes cut a relationship pair or a mapping in half.
        #expect(failures > bytes.count / 2)
    }

    @Test func randomBinaryGarbage() {
        var generator = SeededGenerator(seed: 0x5EED)
        for _ in 0..<300 {
            let count = Int.random(in: 0..<2_000, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let result = SchemaPipeline.load(files: [ModelFile(path: "g.yaml", contents: bytes)])
            checkConsistent(result)
            if count > 0 { #expect(result.hasErrors) }
        }
    }

    @Test func randomMutationsOfTheDesignModel() throws {
        let original = try Array(Data(contentsOf: resourceURL("Notes.yaml")))
        let alphabet = Array("{}[],:-&*!|>'\"#%@` \n\tabcAZ09.$?".utf8) + [0x00, 0xC3, 0xFF]
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<500 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = alphabet.randomElement(using: &generator)!
            }
            checkConsistent(SchemaPipeline.load(files: [ModelFile(path: "m.yaml", contents: bytes)]))
        }
    }

    @Test func tenThousandNestedFlowSequences() {
        let yaml = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(diagnostics(yaml) == ["m.yaml:1:257: error: nesting deeper than 256 levels is not supported"])
    }

    @Test func tenThousandNestedBlockSequences() {
        // `- - - x`: compact block sequences, one level per `- `, all on one line.
        let yaml = "a:\n  " + String(repeating: "- ", count: 10_000) + "x\n"
        let result = load(yaml)
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == [
            "m.yaml:2:513: error: nesting deeper than 256 levels is not supported"
        ])
    }

    @Test func fiveMegabyteScalar() throws {
        let doc = String(repeating: "x", count: 5 * 1024 * 1024)
        let result = load("entities:\n  A:\n    doc: \(doc)\n    attributes: { a: Int }\n")
        #expect(result.diagnostics == [])
        #expect(result.schema?.entities.first?.doc?.utf8.count == 5 * 1024 * 1024)
    }

    @Test func billionLaughs() {
        var yaml = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1...9 {
            let aliases = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            yaml += "a\(level): &a\(level) [\(aliases)]\n"
        }
        let result = load(yaml)
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == [
            "m.yaml:6:45: error: the document expands to more than 1000000 nodes (aliases counted in full)"
        ])
    }

    @Test func selfReferencingAnchorIsNotAnAlias() {
        // libyaml reports an anchor used inside its own node as an unknown alias, not a cycle.
        #expect(diagnostics("a: &x [*x]\n") == ["m.yaml:1:8: error: unknown alias '*x'"])
    }

    @Test(arguments: [
        ([0xC3] as [UInt8], "m.yaml:1:11: error: the model file is not valid UTF-8 (byte 0xC3); save it as UTF-8"),
        ([0xED, 0xA0, 0x80], "m.yaml:1:11: error: the model file is not valid UTF-8 (byte 0xED); save it as UTF-8"),
        ([0xC0, 0xAF], "m.yaml:1:11: error: the model file is not valid UTF-8 (byte 0xC0); save it as UTF-8"),
        ([0xFE, 0xFF, 0x00], "m.yaml:1:11: error: the model file is not valid UTF-8 (byte 0xFE); save it as UTF-8"),
    ])
    func invalidUTF8(_ bad: [UInt8], _ expected: String) {
        let bytes = Array("entities: ".utf8) + bad
        let result = SchemaPipeline.load(files: [ModelFile(path: "m.yaml", contents: bytes)])
        #expect(result.diagnostics.map(\.description) == [expected])
    }

    @Test func controlCharactersAreReportedWhereTheyAre() {
        let bytes = Array("entities:\n  A: {}\n".utf8) + [0x00] + Array("x\n".utf8)
        let result = SchemaPipeline.load(files: [ModelFile(path: "m.yaml", contents: bytes)])
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == [
            "m.yaml:3:1: error: YAML syntax: control characters are not allowed"
        ])
        #expect(diagnostics("a: é\u{01}") == ["m.yaml:1:5: error: YAML syntax: control characters are not allowed"])
    }

    @Test func byteOrderMarkIsAccepted() {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("entities:\n  A: { attributes: { a: Int } }\n".utf8)
        let result = SchemaPipeline.load(files: [ModelFile(path: "m.yaml", contents: bytes)])
        #expect(result.diagnostics == [])
    }
}
