import Foundation
import Testing
@testable import StrataSchema

@Test func zprobe() {
    for path in (ProcessInfo.processInfo.environment["PROBE"] ?? "").split(separator: ":") {
        let result = SchemaPipeline.load(paths: [String(path)])
        print("==", path, result.schema == nil ? "NO SCHEMA" : "ok")
        for d in result.diagnostics { print(d) }
    }
}
