import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// The sync article's quick start, run as written: its recipe makes a private cluster (as
/// the `postgres` user when the tests run as root, as the article says), and its program,
/// built as the `StrataSyncQuickStart` target, syncs two stores through it.
@Suite("The sync article's quick start")
struct SyncQuickStartTests {
    static let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Strata/Strata.docc/SyncThroughPostgreSQL.md")

    /// The article's ```sh block that makes the cluster.
    static func recipe() throws -> String {
        let text = try String(contentsOf: article, encoding: .utf8)
        let blocks = text.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains("initdb") && $0.contains("NOTES_PG") })
    }

    static var program: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("StrataSyncQuickStart").path
    }

    @Test func theRecipesClusterAndTheProgramSyncTwoStores() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.program), "build it first: swift build --build-tests")
        let folder = try TemporaryDirectory()
        let root = getuid() == 0
        let pg = folder.url.appendingPathComponent("notes-pg")
        // In the folder, as the article runs it: `$PWD/notes-pg`.
        var shell = ["/bin/sh", "-c", "cd \"$1\" && eval \"$2\"", "sh", folder.url.path, try Self.recipe()]
        if root {
            // The article's advice for root: a folder for postgres, the programs run as postgres.
            try FileManager.default.createDirectory(at: pg, withIntermediateDirectories: true)
            _ = try FirstRun.run("/bin/chown", ["postgres", pg.path])
            _ = try FirstRun.run("/bin/chmod", ["755", folder.url.path])
            shell = ["/usr/sbin/runuser", "-u", "postgres", "--"] + shell
        }
        let argv = shell
        let made = try await offThePool { try FirstRun.spawn(argv) }
        let pgCtl = "\(PostgresCluster.binaries()?.path ?? "/usr/bin")/pg_ctl"
        defer {
            let stop = [pgCtl, "-D", pg.appendingPathComponent("data").path, "-m", "immediate", "stop"]
            _ = try? FirstRun.spawn(root ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + stop : stop)
        }
        try #require(made.status == 0, "the recipe failed: \(made.output)")

        let laptop = folder.url.appendingPathComponent("laptop"), phone = folder.url.appendingPathComponent("phone")
        for device in [laptop, phone] { try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true) }
        // The program's own lines: a library's log line (a timestamp first, as postgres-nio's
        // warning of a connection asked for while its pool was starting) is not the program's.
        func printed(_ output: String) -> String {
            output.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { line in !(line.first?.isNumber == true && (line.contains(" warning ") || line.contains(" info "))) }
                .joined(separator: "\n")
        }
        let first = try await offThePool { try FirstRun.run(Self.program, [], in: laptop, environment: ["NOTES_PG": pg.path]) }
        #expect(first.status == 0, "\(first.output)")
        #expect(printed(first.output).hasPrefix("pushed 1 (0 refused by the server), pulled 0 (0 conflicts); 0 conflicts recorded\n"), "\(first.output)")
        #expect(first.output.contains("synced through "), "\(first.output)")
        // Another store pulls what the first pushed.
        let second = try await offThePool { try FirstRun.run(Self.program, [], in: phone, environment: ["NOTES_PG": pg.path]) }
        #expect(second.status == 0, "\(second.output)")
        #expect(printed(second.output).hasPrefix("pushed 1 (0 refused by the server), pulled 1 (0 conflicts)"), "\(second.output)")
    }
}

/// Runs programs for the quick start test, their output to a file (a server that a program
/// leaves running must not hold a pipe open).
enum FirstRun {
    /// Runs `argv` with posix_spawn and waits for it: Foundation's `Process` was seen never to
    /// return from `waitUntilExit()` after `pg_ctl start` (see PostgresCluster).
    static func spawn(_ argv: [String]) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("strata-spawn-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        _ = PostgresCluster.SpawnActions.addCloseFrom(&actions, 3)  // the server it starts holds nothing of ours
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { return (spawned, "cannot start \(argv[0])") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws
        -> (status: Int32, output: String)
    {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("strata-run-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let status = process.waitForExit().status
        return (status, try String(contentsOf: log, encoding: .utf8))
    }
}
