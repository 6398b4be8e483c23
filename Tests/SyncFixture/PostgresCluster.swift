import Foundation
import PostgresNIO
import StrataSync

/// A private PostgreSQL cluster in a temporary folder, listening on a Unix socket in that
/// folder only (no TCP port), made with `initdb` and run with `pg_ctl`: what the sync tests
/// and `make sync-demo` run against. Run as root, the server runs as the `postgres` user
/// (PostgreSQL refuses root); otherwise as the current user.
///
/// ``startTLS()`` makes one that also listens on 127.0.0.1 with TLS, inside a network
/// namespace of its own (see PostgresCluster+TLS.swift).
public final class PostgresCluster: @unchecked Sendable {
    /// The folder holding the data folder, the socket and the log.
    public let folder: URL
    public var dataFolder: URL { folder.appendingPathComponent("data") }
    public var logFile: URL { folder.appendingPathComponent("server.log") }
    /// The socket's path (`.s.PGSQL.<port>` in ``folder``).
    public var socketPath: String { folder.appendingPathComponent(".s.PGSQL.\(port)").path }
    /// The server's port: the socket's name, and the TCP port of a TLS cluster.
    public let port: Int
    /// The network namespace the server runs in (a TLS cluster's), nil for the others.
    public let namespace: String?
    /// What the server listens on, and any other settings, as `-c` options of `postgres`.
    let listenOptions: String
    /// The superuser, made by `initdb`.
    public let user = "strata"
    public let database = "strata"
    let binaries: URL

    /// PostgreSQL's programs (`initdb`, `pg_ctl`, `postgres`), newest version first; nil
    /// when PostgreSQL is not installed.
    public static func binaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        for path in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let bin = URL(fileURLWithPath: String(path))
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        return nil
    }

    static var isRoot: Bool { getuid() == 0 }

    /// Makes a cluster in a new temporary folder and starts it, blocking the calling thread
    /// (tests call ``start()``, which runs it off the cooperative pool; see `offThePool`).
    public static func startBlocking() throws -> PostgresCluster {
        guard let binaries = binaries() else { throw ClusterError("PostgreSQL is not installed (no initdb); run scripts/bootstrap") }
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cluster = PostgresCluster(folder: folder, binaries: binaries)
        if isRoot { try cluster.run("/bin/chown", ["postgres:postgres", folder.path], asServer: false) }
        try cluster.run(binaries.appendingPathComponent("initdb").path, [
            "-D", cluster.dataFolder.path, "-U", cluster.user, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync",
        ])
        try cluster.startServerBlocking()
        try cluster.watchOwner()
        try cluster.run(binaries.appendingPathComponent("createdb").path, ["-h", folder.path, "-p", "\(cluster.port)", "-U", cluster.user, cluster.database])
        return cluster
    }

    init(folder: URL, binaries: URL, port: Int = 5432, namespace: String? = nil, listenOptions: String = "-c listen_addresses=''") {
        self.folder = folder
        self.binaries = binaries
        self.port = port
        self.namespace = namespace
        self.listenOptions = listenOptions
    }

    /// Starts the server (after ``stop()`` or ``kill()``).
    public func startServerBlocking() throws {
        try run(binaries.appendingPathComponent("pg_ctl").path, [
            "-D", dataFolder.path, "-l", logFile.path, "-w", "-t", "60", "-o",
            "\(listenOptions) -c unix_socket_directories='\(folder.path)' -c fsync=off -c max_connections=200",
            "start",
        ], inNamespace: true, capture: false)
    }

    /// Stops the server and removes the folder when this process ends, however it ends (a
    /// crash or SIGKILL included): a shell waits for it.
    func watchOwner() throws {
        let stop = "\(Self.isRoot ? "/usr/sbin/runuser -u postgres -- " : "")\(binaries.appendingPathComponent("pg_ctl").path) -D '\(dataFolder.path)' -m immediate stop"
        let deleteNamespace = namespace.map { "; \(Self.ip) netns delete \($0)" } ?? ""
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop); rm -rf '\(folder.path)'\(deleteNamespace)"
        try run("/bin/sh", ["-c", "(\(script)) >/dev/null 2>&1 &"], asServer: false, capture: false)
    }

    /// Stops the server: `fast` ends every connection and shuts down cleanly.
    public func stopBlocking(mode: String = "fast") throws {
        try run(binaries.appendingPathComponent("pg_ctl").path, ["-D", dataFolder.path, "-m", mode, "-w", "stop"])
    }

    /// Stops the server and starts it again: every connection is cut.
    public func restartBlocking() throws {
        try stopBlocking(mode: "immediate")
        try startServerBlocking()
    }

    /// Stops the server and removes the folder (and the network namespace).
    public func destroy() {
        try? stopBlocking(mode: "immediate")
        try? FileManager.default.removeItem(at: folder)
        if let namespace { Self.deleteNamespace(namespace) }
    }

    /// A connection configuration for the superuser (or `user`).
    public func configuration(user: String? = nil, database: String? = nil) -> PostgresConnection.Configuration {
        PostgresConnection.Configuration(
            unixSocketPath: socketPath, username: user ?? self.user, password: nil, database: database ?? self.database)
    }

    /// Makes a new, empty database and returns its name.
    public func makeDatabaseBlocking() throws -> String {
        let name = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try psqlBlocking("CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL with `psql` and returns what it printed (unaligned, tuples only).
    @discardableResult
    public func psqlBlocking(_ sql: String, user: String? = nil, database: String? = nil) throws -> String {
        try run(binaries.appendingPathComponent("psql").path, [
            "-h", folder.path, "-p", "\(port)", "-U", user ?? self.user, "-d", database ?? self.database, "-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t",
            "-c", sql,
        ])
    }

    /// Programs are started one at a time (Foundation's `Process` was seen to crash when
    /// several tests started programs at once; kept, as the order of a cluster's programs).
    static let launches = NSLock()

    /// Runs a program in ``folder`` and returns its output: as the server's user when
    /// `asServer`, and in the cluster's network namespace (if it has one) when `inNamespace`.
    @discardableResult
    func run(_ program: String, _ arguments: [String], asServer: Bool = true, inNamespace: Bool = false, capture: Bool = true) throws -> String {
        var argv = [program] + arguments
        if asServer && Self.isRoot { argv = ["/usr/sbin/runuser", "-u", "postgres", "--"] + argv }
        if inNamespace, let namespace { argv = [Self.ip, "netns", "exec", namespace] + argv }
        return try Self.run(argv, in: folder, capture: capture, name: URL(fileURLWithPath: program).lastPathComponent, logFile: logFile)
    }

    /// Runs `argv` in `folder` and returns its output (nothing unless `capture`); throws when
    /// it fails, with what it printed.
    ///
    /// Spawned and waited for here, not with Foundation's `Process`: it was seen never to
    /// return from `waitUntilExit()` after `pg_ctl start` (the server left running holds
    /// what the program inherited). The program inherits no descriptor but its standard
    /// ones (`closefrom`): a server started here would otherwise hold, for its whole life,
    /// the test process's sockets and pipes of that moment (a connection the test closed
    /// would stay open on the server; a device process's end would never be seen).
    /// Its output goes to files (a server that `pg_ctl start` leaves running would keep a
    /// pipe open), read once it has ended.
    @discardableResult
    static func run(_ argv: [String], in folder: URL, capture: Bool = true, name: String? = nil, logFile: URL? = nil) throws -> String {
        launches.lock()
        defer { launches.unlock() }
        let name = name ?? URL(fileURLWithPath: argv[0]).lastPathComponent
        let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("strata-run-\(UUID().uuidString)")
        let outPath = outputs.path + ".out", errPath = outputs.path + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, capture ? outPath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, capture ? errPath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = folder.path.withCString { SpawnActions.addChdir(&actions, $0) }
        _ = SpawnActions.addCloseFrom(&actions, 3)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw ClusterError("cannot start \(argv[0]): \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = capture ? ((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "") : ""
        guard status == 0 else {
            let errors = capture ? ((try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "") : ""
            let exit = status & 0x7f == 0 ? (status >> 8) & 0xff : status
            throw ClusterError("\(name) failed (\(exit))\(capture ? ": " + errors + output : "")\(logFile.map { "; see \($0.path)" } ?? "")")
        }
        return output
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` and `…_addclosefrom_np` (2.29 and 2.34),
    /// which Swift's Glibc module does not declare: looked up by name.
    public enum SpawnActions {
        public typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        public typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

        public static let addChdir: AddChdir = unsafeBitCast(symbol("posix_spawn_file_actions_addchdir_np"), to: AddChdir.self)
        public static let addCloseFrom: AddCloseFrom = unsafeBitCast(symbol("posix_spawn_file_actions_addclosefrom_np"), to: AddCloseFrom.self)

        static func symbol(_ name: String) -> UnsafeMutableRawPointer {
            guard let found = dlsym(nil, name) else { fatalError("\(name) is missing: glibc 2.34 or later is needed") }
            return found
        }
    }

    public struct ClusterError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
