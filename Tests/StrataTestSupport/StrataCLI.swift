import Foundation

/// The built `strata` command-line tool, run as a user runs it: exit status, standard output
/// and standard error.
public enum StrataCLI {
    /// What one run printed, and how it ended.
    public struct Run: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The `strata` executable in the build's products folder: `STRATA_EXECUTABLE` when set,
    /// else beside `bundle` (a test target's resource bundle), else beside the test bundle.
    public static func executable(besideBundle bundle: URL? = nil) throws -> URL {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["STRATA_EXECUTABLE"] {
            candidates.append(URL(fileURLWithPath: path))
        }
        if let bundle { candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("strata")) }
        if let argument = CommandLine.arguments.first {
            var url = URL(fileURLWithPath: argument).deletingLastPathComponent()
            candidates.append(url.appendingPathComponent("strata"))
            // macOS: .../debug/StrataPackageTests.xctest/Contents/MacOS/StrataPackageTests
            for _ in 0..<3 { url.deleteLastPathComponent() }
            candidates.append(url.appendingPathComponent("strata"))
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "strata executable not found; run `swift build` first"])
        }
        return found
    }

    /// Runs `executable` with `arguments` in `directory` (the current one when nil), waited
    /// for off the cooperative pool (see `offThePool`).
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil) async throws -> Run {
        try await offThePool { try runBlocking(executable, arguments, in: directory) }
    }

    static func runBlocking(_ executable: URL, _ arguments: [String], in directory: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        return Run(
            status: process.waitForExit().status, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
