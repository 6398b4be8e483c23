import Foundation
import StrataDemoKit

/// Runs the demo in-process and returns what it printed, and its exit status.
func runDemo(_ arguments: [String], input: [String] = []) async -> (transcript: String, status: Int32, errors: String) {
    var lines: [String] = []
    var errors: [String] = []
    let output = DemoOutput { lines.append($0) }
    let status = await StrataDemoApp.run(
        arguments: arguments, environment: [:], input: .lines(input), output: output, style: .plain,
        errorOutput: { errors.append($0) })
    return (lines.map { $0 + "\n" }.joined(), status, errors.joined(separator: "\n"))
}

/// Compares `actual` with the checked-in reference file `name` (in `Reference/`); with
/// `STRATA_RECORD=1` in the environment, writes `actual` there instead.
/// Returns nil when they agree, else a description of the first difference.
func compareWithReference(_ actual: String, named name: String, filePath: String = #filePath) throws -> String? {
    let url = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        .appendingPathComponent("Reference").appendingPathComponent(name)
    if ProcessInfo.processInfo.environment["STRATA_RECORD"] == "1" {
        try actual.write(to: url, atomically: true, encoding: .utf8)
        return nil
    }
    guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
        return "missing reference \(name); run the tests with STRATA_RECORD=1 to record it"
    }
    if expected == actual { return nil }
    let e = expected.components(separatedBy: "\n"), a = actual.components(separatedBy: "\n")
    for index in 0..<max(e.count, a.count) {
        let old = index < e.count ? e[index] : "<end>", new = index < a.count ? a[index] : "<end>"
        if old != new {
            return "\(name):\(index + 1) differs (STRATA_RECORD=1 re-records)\n- expected: \(old)\n+ actual:   \(new)"
        }
    }
    return "\(name) differs"
}
