import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO
import Strata
import StrataSQL

/// The server of record: a PostgreSQL database that devices push to and pull from, reached
/// directly with postgres-nio. Use it in trusted processes (services, workers, desktop
/// tools); a device that must not hold database credentials talks to a relay of yours that
/// holds one of these (see the sync article).
///
/// ```swift
/// let server = PostgresSyncServer(
///     configuration: .init(host: "db.example.com", username: "strata_sync", password: secret,
///                          database: "notes", tls: .require(try .init(configuration: .makeClientConfiguration()))),
///     schema: StrataModel.schema)
/// let sync = try StoreSync(store: store, server: server)
/// ```
///
/// Requests go through a pool of connections, postgres-nio's `PostgresClient`, made from the
/// configuration (its TLS, connect timeout and startup options). The server runs the pool
/// itself, in a task of its own: the first request starts it, ``close()`` stops it, a later
/// request starts it again; there is nothing for you to run. (A `PostgresClient` is a
/// `Service` that its owner runs; the server owns its pool instead so that a sync needs a
/// `StoreSync` and a server only, and so that it can start another pool after ``close()``
/// or after the server went away.) Each push, pull or hello is one transaction on one
/// connection of the pool, so the requests of several stores run side by side; the pool
/// opens connections as needed (20 at most) and closes those idle for a minute.
/// ``changeSignals()`` listens on a connection of its own.
///
/// A request that waits for a connection the server does not let in (a wrong password, no
/// server there) fails within about a second with the reason (``SyncConnectionError``),
/// where the pool alone would keep it waiting while it tries again; one that takes longer
/// than `requestTimeout` fails with ``SyncTimeoutError``.
public actor PostgresSyncServer: SyncServer {
    /// What the server may do to the database's schema.
    public enum SchemaPolicy: Sendable {
        /// Create missing tables and add missing columns (additive changes only).
        case createAndExtend
        /// Touch nothing: the tables must exist (made from ``PostgresSchema/sql`` by whoever
        /// manages the database) and hold every column the devices have.
        case requireExisting
    }

    /// The configuration given: the pool's (``clientConfiguration``), the connections of
    /// ``changeSignals()`` and of the check of an unreachable server, and the words of
    /// ``SyncConnectionError``.
    let configuration: PostgresConnection.Configuration
    /// The pool's configuration, made from ``configuration``.
    let clientConfiguration: PostgresClient.Configuration
    let schema: PostgresSchema
    let policy: SchemaPolicy
    let requestTimeout: Duration
    let logger: Logger
    /// The pool, and the task that runs it: made by the first request, ended by ``close()``
    /// (or by a request that found the server unreachable), made again by the next request.
    private var client: (pool: PostgresClient, run: Task<Void, Never>)?
    /// The connection that each request under way holds (by request: see ``request``).
    private var leased: [Int: PostgresConnection] = [:]
    /// The requests under way that wait for a connection of the pool.
    private var waiting: Set<Int> = []
    private var lastRequest = 0
    private var lastConnectionID = 0
    /// Whether a request that waits for the pool is trying the server on a connection of its
    /// own (one at a time, however many wait), and when the last such try ended, with its error.
    private var probing = false
    private var lastProbe: (ended: ContinuousClock.Instant, error: (any Error)?)?
    /// Whether the server's tables were seen to have the count triggers of this model.
    var countTriggersChecked = false
    /// Whether the server's log was seen to mark inserts (``PostgreSQLDDL/logMarksInserts``).
    var logMarksInserts = false
    /// The devices seen bound to a user (``bind(device:to:)``), by lowercase id, with when
    /// the database last said so.
    var boundDevices: [String: (user: String, seen: ContinuousClock.Instant)] = [:]

    /// The request (of ``race(timeout:_:)``) that the current task serves.
    @TaskLocal static var request: Int?

    /// A server for `schema`'s entities (all, or those in `entities`), reached with
    /// `configuration` (a host and port, or a Unix socket; a configuration of an established
    /// channel cannot be pooled, and is refused). A push, pull or hello that takes longer than
    /// `requestTimeout` (a snapshot: any one of its statements) fails with
    /// ``SyncTimeoutError``: the connection it held is closed (the pool opens another for the
    /// next request), and a request that still waited for one leaves a pool that could not
    /// open one, which the next request makes again. The pool holds at most
    /// `maximumConnections` connections (requests beyond wait for one); besides them, the
    /// server opens one for ``changeSignals()`` while its stream lives, and, while requests
    /// wait for the pool, one at a time to find out whether the server can be reached.
    public init(
        configuration: PostgresConnection.Configuration, schema: SchemaDescriptor, entities: Set<String>? = nil,
        policy: SchemaPolicy = .createAndExtend, requestTimeout: Duration = .seconds(60), maximumConnections: Int = 20,
        logger: Logger = Logger(label: "strata.sync")
    ) throws {
        self.requestTimeout = requestTimeout
        self.configuration = configuration
        var clientConfiguration = try Self.clientConfiguration(configuration)
        clientConfiguration.options.maximumConnections = max(1, maximumConnections)
        self.clientConfiguration = clientConfiguration
        self.schema = try PostgresSchema(schema: schema, entities: entities)
        self.policy = policy
        self.logger = logger
    }

    /// The pool's configuration for `configuration`: the same server, role, database, TLS
    /// (its `NIOSSLContext`'s configuration) and connection options.
    static func clientConfiguration(_ configuration: PostgresConnection.Configuration) throws -> PostgresClient.Configuration {
        var result: PostgresClient.Configuration
        if let path = configuration.unixSocketPath {
            result = .init(unixSocketPath: path, username: configuration.username, password: configuration.password, database: configuration.database)
        } else if let host = configuration.host {
            result = .init(
                host: host, port: configuration.port ?? 5432, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: .disable)
        } else {
            throw SyncConfigurationError.establishedChannel
        }
        if let context = configuration.tls.sslContext {
            result.tls = configuration.tls.isEnforced ? .require(context.configuration) : .prefer(context.configuration)
        } else {
            result.tls = .disable
        }
        result.options.connectTimeout = .nanoseconds(configuration.options.connectTimeout.nanoseconds)
        result.options.tlsServerName = configuration.options.tlsServerName
        result.options.requireBackendKeyData = configuration.options.requireBackendKeyData
        result.options.additionalStartupParameters = configuration.options.additionalStartupParameters
        return result
    }

    deinit {
        client?.run.cancel()  // the pool closes its connections
    }

    /// Stops the pool: its connections are closed, requests under way fail. A later request
    /// starts another pool.
    public func close() async {
        guard let client else { return }
        self.client = nil
        client.run.cancel()
        await client.run.value
    }

    /// The pool, started when first needed.
    func pool() async -> PostgresClient {
        if let client { return client.pool }
        let pool = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        // Its task is not the actor's (a server no longer used ends), and the pool is used
        // once it runs (postgres-nio warns of a connection asked for before).
        let (started, start) = AsyncStream<Never>.makeStream()
        let run = Task.detached {
            start.finish()
            await pool.run()
        }
        client = (pool, run)
        for await _ in started {}
        return pool
    }

    /// Stops the pool (its connections are closed); the next request starts another.
    func dropPool() {
        client?.run.cancel()
        client = nil
    }

    /// Runs `body` in a transaction on a connection of the pool, begun with `begin` (`BEGIN
    /// ISOLATION LEVEL REPEATABLE READ READ ONLY` for a pull's snapshot). A transaction that
    /// fails is rolled back; when the connection was lost, or the rollback fails, the
    /// connection is closed, and the pool opens another.
    ///
    /// Not postgres-nio's `withTransaction`: it begins with a plain `BEGIN`, and always sends
    /// `ROLLBACK` after a failure, through its `query`, which never returns on a connection
    /// that was closed (see ``PostgresConnection/run(_:logger:)``) — as the one of a request
    /// past its deadline is.
    func transaction<T: Sendable>(
        _ begin: String = "BEGIN", _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let request = Self.request
        if let request { waiting.insert(request) }
        defer { if let request { waiting.remove(request) } }
        return try await pool().withConnection { connection in
            try Task.checkCancellation()  // (the deadline passed while the pool handed it over)
            if let request {
                waiting.remove(request)
                leased[request] = connection
            }
            defer { if let request { leased[request] = nil } }
            try await connection.run(PostgresQuery(unsafeSQL: begin), logger: logger)
            do {
                let value = try await body(connection)
                try await connection.run("COMMIT", logger: logger)
                return value
            } catch {
                if connection.isClosed { throw error }
                do {
                    try await connection.run("ROLLBACK", logger: logger)
                } catch {
                    let closing: EventLoopFuture<Void> = connection.close()  // not handed out again mid-transaction
                    closing.whenComplete { _ in withExtendedLifetime(connection) {} }
                }
                throw Self.missingTables(error) ?? error
            }
        }
    }

    /// ``SyncModelError/serverHasNoTables`` for a statement that met no sync table (a request
    /// of a client that did not say hello first, on a database without them); nil for any
    /// other error.
    static func missingTables(_ error: any Error) -> SyncModelError? {
        guard let error = error as? PSQLError, error.serverInfo?[.sqlState] == "42P01",
              error.serverInfo?[.message]?.contains("relation \"strata_sync_") == true
        else { return nil }
        return .serverHasNoTables
    }

    // MARK: - Hello

    public func hello(_ hello: SyncHello) async throws -> SyncWelcome {
        try await withDeadline { try await self.answer(hello) }
    }

    public func push(_ push: SyncPush) async throws -> SyncPushResult {
        try await withDeadline { try await self.apply(push) }
    }

    public func pull(_ request: SyncPullRequest) async throws -> SyncPullResult {
        try await withDeadline { try await self.answer(request) }
    }

    /// ``pull(_:)``'s answer as the sync applies it: each table's rows read in binary into
    /// the values the store keeps, in one array (no ``SyncChange`` per object).
    public func pullBatch(_ request: SyncPullRequest) async throws -> SyncPullBatch {
        SyncPullBatch(batch: try await withDeadline { try await self.answerInBatch(request) })
    }

    /// What ends a request first.
    private enum Finish<T: Sendable>: Sendable {
        case answered(T)
        case timedOut
        case unreachable(any Error)
    }

    /// Runs `operation`, racing it (in a task group) with ``requestTimeout`` and with a check
    /// of the server while it waits for a connection; errors said in words
    /// (``SyncConnectionError``).
    ///
    /// - Once the timeout has passed, it fails with ``SyncTimeoutError``: a server that
    ///   stopped answering mid-request (seen after an immediate restart, with a connection
    ///   that never failed) must not hold the sync forever. The connection the request held
    ///   is closed (its query fails at once, and the pool discards the connection rather
    ///   than hand it out mid-transaction); a request still waiting for the pool stops
    ///   waiting, and a pool that holds no connection for another request is stopped
    ///   (one that could not connect waits before trying again).
    /// - While it waits for a connection, the server is tried on a connection of its own
    ///   (after a second, then less and less often): the pool keeps a request waiting while
    ///   it tries again to connect, where this says why it cannot (a refused password, a
    ///   missing database, no server there), and the request fails with that error.
    ///
    /// The caller's cancellation (a background sync stopped) does not reach the race: a
    /// request under way finishes, within its deadline, as its transaction would anyway (the
    /// race runs in a task of its own, awaited here).
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = requestTimeout
        return try await Task { try await self.race(timeout: timeout, operation) }.value
    }

    /// ``withDeadline(_:)`` with another timeout, or none.
    func race<T: Sendable>(timeout: Duration?, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        lastRequest += 1
        let request = lastRequest
        do {
            return try await withThrowingTaskGroup(of: Finish<T>.self) { group in
                defer { group.cancelAll() }
                group.addTask { .answered(try await Self.$request.withValue(request, operation: operation)) }
                if let timeout {
                    group.addTask {
                        try await Task.sleep(for: timeout)
                        return .timedOut
                    }
                }
                group.addTask { .unreachable(try await self.unreachable(while: request)) }
                while let finish = try await group.next() {
                    switch finish {
                    case .answered(let value):
                        return value
                    case .timedOut:
                        abandon(request)
                        throw SyncTimeoutError(timeout: timeout ?? .zero)
                    case .unreachable(let error):
                        if leased.isEmpty { dropPool() }
                        throw error
                    }
                }
                throw CancellationError()  // (the operation always finishes)
            }
        } catch {
            throw SyncConnectionError.translating(error, configuration: configuration)
        }
    }

    /// Returns the error of a connection to the server, opened while `request` waits for a
    /// connection of the pool (never, while the server can be reached): after a second, then
    /// after twice as long each time (a pool that is only slow, on a loaded machine, is not
    /// given a connection to open every second besides its own).
    ///
    /// One try at a time, whatever the number of requests waiting (a loaded server must not be
    /// given a connection per waiting request): a request whose turn comes while another tries
    /// takes the outcome of the try that ended since its last turn, or waits for its next turn.
    func unreachable(while request: Int) async throws -> any Error {
        var delay = Duration.seconds(1)
        var lastTurn = ContinuousClock.now
        while true {
            try await Task.sleep(for: delay)
            guard waiting.contains(request) else { continue }
            delay *= 2
            defer { lastTurn = .now }
            if let probe = lastProbe, probe.ended > lastTurn {
                if let error = probe.error { return error }
                continue  // reachable: the pool is only busy
            }
            guard !probing else { continue }
            probing = true
            defer { probing = false }
            lastConnectionID += 1
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: lastConnectionID, logger: logger)
                try? await connection.close()
                lastProbe = (.now, nil)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                lastProbe = (.now, error)
                if waiting.contains(request) { return error }
            }
        }
    }

    /// A request past its deadline: closes the connection it holds, or stops a pool that
    /// kept it waiting when no other request holds a connection.
    func abandon(_ request: Int) {
        if let connection = leased.removeValue(forKey: request) {
            let closing: EventLoopFuture<Void> = connection.close()
            closing.whenComplete { _ in withExtendedLifetime(connection) {} }
        } else if waiting.contains(request), leased.isEmpty {
            dropPool()
        }
    }

    func answer(_ hello: SyncHello) async throws -> SyncWelcome {
        let version = schema.version
        return try await transaction { connection in
            try await connection.run(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(PostgresSchema.logLock))"), logger: logger)
            let existing = try await self.columns(connection)
            if existing.isEmpty || existing["strata_sync_meta"] == nil {
                guard policy == .createAndExtend else { throw SyncModelError.serverHasNoTables }
            }
            // A server made before its log marked inserts gains the column and the function that
            // fills it, where the policy allows; else pulls answer as they did (see
            // ``marksInserts(_:)``) until the script is applied again.
            if let log = existing["strata_sync_log"], log["created"] == nil, policy == .createAndExtend {
                for statement in [PostgreSQLDDL.logMarksInserts, PostgreSQLDDL.logFunction] {
                    try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            // What the device has that the server lacks, and columns whose types differ.
            var missing: [String] = []
            var differing: [String] = []
            for (table, columns) in hello.tables.sorted(by: { $0.key < $1.key }) {
                let wanted = schema.columnTypes[table] ?? [:]
                for column in columns.sorted() {
                    guard let type = wanted[column] else { continue }
                    if let found = existing[table]?[column] {
                        if found != type { differing.append("\(table).\(column): \(found) on the server, \(type) here") }
                    } else {
                        missing.append("\(table).\(column)")
                    }
                }
            }
            let serverModel = existing["strata_sync_meta"] == nil ? nil : try await self.meta("model", connection).flatMap {
                try? JSONDecoder().decode(SyncModelVersion.self, from: Data($0.utf8))
            }
            if !differing.isEmpty {
                throw SyncModelError.incompatible(device: hello.model, server: serverModel, details: differing)
            }
            if !missing.isEmpty {
                guard policy == .createAndExtend else { throw SyncModelError.incompatible(device: hello.model, server: serverModel, details: missing.map { "\($0) is missing on the server" }) }
                for statement in schema.statements {
                    try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                let after = try await self.columns(connection)
                for entity in schema.tables.entities {
                    for column in entity.columns where after[entity.name]?[column.name] == nil {
                        var definition = schema.columnDefinition(column, of: entity)
                        if !column.isOptional, entity.descriptor.attribute(named: column.name)?.defaultValue == nil {
                            definition = definition.replacingOccurrences(of: " NOT NULL", with: "")
                        }
                        try await connection.run(
                            PostgresQuery(unsafeSQL: "ALTER TABLE \(quoted(entity.name)) ADD COLUMN \(definition)"), logger: logger)
                    }
                }
                let text = String(decoding: try JSONEncoder().encode(version), as: UTF8.self)
                try await connection.run(
                    "INSERT INTO strata_sync_meta (key, value) VALUES ('model', \(text)) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    logger: logger)
            }
            try await self.ensureCountTriggers(connection)
            try await self.ensureTriggers(connection)
            guard let id = try await self.meta("server", connection).flatMap(UUID.init(uuidString:)) else {
                throw SyncModelError.serverHasNoTables
            }
            let model = try await self.meta("model", connection).flatMap {
                try? JSONDecoder().decode(SyncModelVersion.self, from: Data($0.utf8))
            } ?? version
            return SyncWelcome(server: id, model: model)
        }
    }

    /// Whether the server's log marks inserts (a server made by an earlier version does not,
    /// until its script is applied again or a device's hello may extend it); once seen, not
    /// asked again.
    func marksInserts(_ connection: PostgresConnection) async throws -> Bool {
        if logMarksInserts { return true }
        let rows = try await connection.run(
            """
            SELECT count(*)::int8 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
            JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() \
            AND c.relname = 'strata_sync_log' AND a.attname = 'created' AND NOT a.attisdropped
            """, logger: logger)
        for count in try rows.decode(Int64.self) { logMarksInserts = count > 0 }
        return logMarksInserts
    }

    func meta(_ key: String, _ connection: PostgresConnection) async throws -> String? {
        let rows = try await connection.run("SELECT value FROM strata_sync_meta WHERE key = \(key)", logger: logger)
        for value in try rows.decode(String.self) { return value }
        return nil
    }

    /// Table → column → type name, for the tables of the current schema.
    func columns(_ connection: PostgresConnection) async throws -> [String: [String: String]] {
        let rows = try await connection.run(
            """
            SELECT c.relname::text, a.attname::text, format_type(a.atttypid, NULL) FROM pg_attribute a \
            JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
            """, logger: logger)
        var result: [String: [String: String]] = [:]
        for (table, column, type) in try rows.decode((String, String, String).self) {
            result[table, default: [:]][column] = Self.normalizedType(type)
        }
        return result
    }

    static func normalizedType(_ type: String) -> String {
        type == "timestamp with time zone" ? "timestamp(3) with time zone" : type
    }

    // MARK: - Signals

    /// `LISTEN`s on a connection of its own, not one of the pool: it holds the connection as
    /// long as the stream lives, and ``close()`` leaves it open (the stream's consumer ends
    /// it, by ending the stream).
    public nonisolated func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        let (stream, continuation) = AsyncThrowingStream<Void, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            do {
                try await connection.listen(on: "strata_sync") { notifications in
                    continuation.yield()  // listening: anything before this is pulled by the first sync
                    for try await _ in notifications { continuation.yield() }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            try? await connection.close()
        }
        continuation.onTermination = { _ in
            task.cancel()
            Task { try? await connection.close() }
        }
        return stream
    }
}

/// A device's model and the server's tables do not fit together.
public enum SyncModelError: StrataError {
    /// The device's model and the server's disagree on columns in a way that is not
    /// additive (a column with another type), or the server may not be extended.
    case incompatible(device: SyncModelVersion, server: SyncModelVersion?, details: [String])
    /// The server has no sync tables: a hello with ``PostgresSyncServer/SchemaPolicy/requireExisting``,
    /// or a push or pull before any hello made them.
    case serverHasNoTables
    /// The device synced with another server (or one restored from an earlier backup).
    case anotherServer(expected: UUID, found: UUID)

    public var description: String {
        switch self {
        case .incompatible(let device, let server, let details):
            "this device's model \(device) does not fit the server's model \(server.map(\.description) ?? "(unknown)"): "
                + details.joined(separator: "; ")
        case .serverHasNoTables:
            "the server has no Strata sync tables: apply the model's script (strata sql), or let a device's hello make them (SchemaPolicy.createAndExtend)"
        case .anotherServer(let expected, let found):
            "this store synced with server \(expected), and the server now answers as \(found): another database, or one restored from an earlier backup"
        }
    }
}

extension PostgresSyncServer {
    /// Every object and link of the synced tables (see ``SyncContents``), read in one
    /// snapshot (however long that takes: no ``requestTimeout``).
    public func contents() async throws -> SyncContents {
        try await race(timeout: nil) { try await self.readContents() }
    }

    func readContents() async throws -> SyncContents {
        try await transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            var result = SyncContents()
            for entity in schema.tables.entities {
                let ids = try await connection.run(PostgresQuery(unsafeSQL: "SELECT \(quoted(entity.primaryKey))::text FROM \(quoted(entity.name))"), logger: logger)
                var all: [UUID] = []
                for id in try ids.decode(String.self) { if let id = UUID(uuidString: id) { all.append(id) } }
                result.objects[entity.name] = try await self.rows(of: entity, ids: all, connection)
            }
            for join in schema.tables.joins {
                let rows = try await connection.run(
                    PostgresQuery(unsafeSQL: "SELECT \(quoted(join.column))::text, \(quoted(join.inverseColumn))::text FROM \(quoted(join.name))"),
                    logger: logger)
                var links: Set<String> = []
                for (a, b) in try rows.decode((String, String).self) { links.insert("\(a) \(b)") }
                result.links[join.name] = links
            }
            return result
        }
    }
}

/// A request to the server took longer than its timeout (``PostgresSyncServer``'s
/// `requestTimeout`); the connection it held was closed.
public struct SyncTimeoutError: StrataError {
    public var timeout: Duration
    public var description: String { "the sync server did not answer within \(timeout)" }
}

/// A configuration that ``PostgresSyncServer`` cannot use.
public enum SyncConfigurationError: StrataError {
    /// A configuration of an established channel (`PostgresConnection.Configuration(establishedChannel:…)`):
    /// the server keeps a pool of connections, and opens them itself.
    case establishedChannel

    public var description: String {
        switch self {
        case .establishedChannel:
            "PostgresSyncServer opens its connections itself (a pool): give it a host and port, or a Unix socket, "
                + "not an established channel"
        }
    }
}
