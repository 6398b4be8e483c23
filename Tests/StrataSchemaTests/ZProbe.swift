import Foundation
import Testing
@testable import StrataSchema

@Test func zprobe() {
    for bytes in [Array("entities:\n  A: {}\n".utf8) + [0x00] + Array("x\n".utf8), Array("a: b\nc: \u{01}d\n".utf8), Array("a: \"\\q\"\n".utf8), Array("a: [\n".utf8), Array("a: b\n c\nd: - x\n".utf8)] {
        let result = SchemaPipeline.load(files: [ModelFile(path: "m.yaml", contents: bytes)])
        for d in result.diagnostics { print(d) }
    }
}
