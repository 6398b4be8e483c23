import Foundation
import Testing
import StrataTestSupport

/// The built `StrataDemo` executable, run as `make demo DEMO_ARGS=--interactive` runs it:
/// standard input, standard output and the exit status of a real process.
@Suite("Demo: the executable")
struct DemoProcessTests {
    /// `StrataDemo` in the build's products folder, beside the test bundle.
    static func executable() throws -> URL {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["STRATA_DEMO_EXECUTABLE"] {
            candidates.append(URL(fileURLWithPath: path))
        }
        if let argument = CommandLine.arguments.first {
            // Linux: .../debug/StrataPackageTests.xctest
            var url = URL(fileURLWithPath: argument).deletingLastPathComponent()
            candidates.append(url.appendingPathComponent("StrataDemo"))
            // macOS: .../debug/StrataPackageTests.xctest/Contents/MacOS/StrataPackageTests
            for _ in 0..<3 { url.deleteLastPathComponent() }
            candidates.append(url.appendingPathComponent("StrataDemo"))
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("StrataDemo"))
        }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "StrataDemo not found beside the tests (run `swift build --build-tests`); tried \(candidates.map(\.path))")
    }

    /// Runs the executable with `arguments` and `input` on standard input.
    static func run(_ arguments: [String], input: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        let executable = try executable()
        return try await offThePool { try runBlocking(executable, arguments, input: input) }
    }

    static func runBlocking(_ executable: URL, _ arguments: [String], input: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        return (process.waitForExit().status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test("--interactive reads a piped script from standard input and exits 0 at its end")
    func interactiveScript() async throws {
        let script = """
            # a comment, skipped
            add "Reading list" Dune
            rename Home House
            delete urgent
            move Dune Work
            list

            """
        let run = try await Self.run(["--in-memory", "--interactive"], input: script)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty)
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for expected in [
            "Store: in memory",
            "Interactive mode: type `help` for the commands, `quit` or end of input to stop.",
            "strata> add \"Reading list\" Dune",
            "batch  s+[3]",
            "       +  section 3 Reading list",
            "strata> rename Home House",
            "       ~  section 1 Home → House",
            "refused: Cannot delete tag 'urgent': 1 note still uses it (delete rule deny on",
            "strata> move Dune Work",
            "== 6. list ===================================================================",
        ] {
            #expect(lines.contains(expected), "missing line: \(expected)")
        }
        #expect(!run.stdout.contains("# a comment"))
        #expect(!run.stdout.contains("MISMATCH") && !run.stdout.contains("\u{1B}["))
        for line in lines { #expect(line.count <= 80, "too wide: \(line)") }
    }

    @Test("A bad argument: usage on standard error, status 2")
    func badArgument() async throws {
        let run = try await Self.run(["--bogus"], input: "")
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("error: unknown argument '--bogus'\nUsage: StrataDemo"))
    }
}
