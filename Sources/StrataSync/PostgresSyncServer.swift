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
/// It keeps one connection, opened when first needed and opened again after it was lost.
public actor PostgresSyncServer: SyncServer {
    /// What the server may do to the database's schema.
    public enum SchemaPolicy: Sendable {
        /// Create missing tables and add missing columns (additive changes only).
        case createAndExtend
        /// Touch nothing: the tables must exist (made from ``PostgresSchema/sql`` by whoever
        /// manages the database) and hold every column the devices have.
        case requireExisting
    }

    let configuration: PostgresConnection.Configuration
    let schema: PostgresSchema
    let policy: SchemaPolicy
    let requestTimeout: Duration
    let logger: Logger
    private var connection: PostgresConnection?
    /// One transaction at a time on the connection (a new gate after a timeout: the request
    /// abandoned then may never leave the old one).
    private var gate = AsyncGate()
    private var nextConnectionID = 1
    /// Whether the server's tables were seen to have the count triggers of this model.
    var countTriggersChecked = false

    /// A server for `schema`'s entities (all, or those in `entities`). A push, pull or hello
    /// that takes longer than `requestTimeout` fails (its connection is closed, and the next
    /// request opens another).
    public init(
        configuration: PostgresConnection.Configuration, schema: SchemaDescriptor, entities: Set<String>? = nil,
        policy: SchemaPolicy = .createAndExtend, requestTimeout: Duration = .seconds(60),
        logger: Logger = Logger(label: "strata.sync")
    ) throws {
        self.requestTimeout = requestTimeout
        self.configuration = configuration
        self.schema = try PostgresSchema(schema: schema, entities: entities)
        self.policy = policy
        self.logger = logger
    }

    deinit {
        // Kept alive until closed: postgres-nio wants every connection closed first.
        if let connection, !connection.isClosed {
            let future: EventLoopFuture<Void> = connection.close()
            future.whenComplete { _ in withExtendedLifetime(connection) {} }
        }
    }

    /// Closes the connection (a later call opens another).
    public func close() async {
        if let connection { try? await connection.close() }
        connection = nil
    }

    func connected() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        connection = nil
        nextConnectionID += 1
        let new = try await PostgresConnection.connect(configuration: configuration, id: nextConnectionID, logger: logger)
        connection = new
        return new
    }

    /// Runs `body` in a transaction on the connection; a lost connection is dropped so the
    /// next call opens another.
    func transaction<T: Sendable>(
        _ begin: String = "BEGIN", _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let gate = gate
        await gate.enter()
        defer { gate.leave() }
        let connection = try await connected()
        do {
            try await connection.query(PostgresQuery(unsafeSQL: begin), logger: logger)
            do {
                let value = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return value
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        } catch {
            if connection.isClosed, self.connection === connection { self.connection = nil }
            throw error
        }
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

    /// Runs `operation`, or fails with ``SyncTimeoutError`` once ``requestTimeout`` has passed
    /// and drops the connection: a server that stopped answering mid-request (seen after an
    /// immediate restart, with a connection that never failed) must not hold the sync forever.
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = requestTimeout
        let once = ResumeOnce<T>()
        let configuration = configuration  // (errors are said in words: SyncConnectionError)
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            let work = Task {
                do { once.resume(.success(try await operation())) } catch {
                    once.resume(.failure(SyncConnectionError.translating(error, configuration: configuration)))
                }
            }
            once.timer = Task {
                try await Task.sleep(for: timeout)
                if once.resume(.failure(SyncTimeoutError(timeout: timeout))) {
                    work.cancel()
                    self.dropConnection()
                }
            }
        }
    }

    func dropConnection() {
        gate = AsyncGate()
        if let connection, !connection.isClosed {
            let future: EventLoopFuture<Void> = connection.close()
            future.whenComplete { _ in withExtendedLifetime(connection) {} }
        }
        connection = nil
    }

    func answer(_ hello: SyncHello) async throws -> SyncWelcome {
        let version = schema.version
        return try await transaction { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(PostgresSchema.logLock))"), logger: logger)
            let existing = try await self.columns(connection)
            if existing.isEmpty || existing["strata_sync_meta"] == nil {
                guard policy == .createAndExtend else { throw SyncModelError.serverHasNoTables }
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
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                let after = try await self.columns(connection)
                for entity in schema.tables.entities {
                    for column in entity.columns where after[entity.name]?[column.name] == nil {
                        var definition = schema.columnDefinition(column, of: entity)
                        if !column.isOptional, entity.descriptor.attribute(named: column.name)?.defaultValue == nil {
                            definition = definition.replacingOccurrences(of: " NOT NULL", with: "")
                        }
                        try await connection.query(
                            PostgresQuery(unsafeSQL: "ALTER TABLE \(quoted(entity.name)) ADD COLUMN \(definition)"), logger: logger)
                    }
                }
                let text = String(decoding: try JSONEncoder().encode(version), as: UTF8.self)
                try await connection.query(
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

    func meta(_ key: String, _ connection: PostgresConnection) async throws -> String? {
        let rows = try await connection.query("SELECT value FROM strata_sync_meta WHERE key = \(key)", logger: logger)
        for try await value in rows.decode(String.self) { return value }
        return nil
    }

    /// Table → column → type name, for the tables of the current schema.
    func columns(_ connection: PostgresConnection) async throws -> [String: [String: String]] {
        let rows = try await connection.query(
            """
            SELECT c.relname::text, a.attname::text, format_type(a.atttypid, NULL) FROM pg_attribute a \
            JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
            """, logger: logger)
        var result: [String: [String: String]] = [:]
        for try await (table, column, type) in rows.decode((String, String, String).self) {
            result[table, default: [:]][column] = Self.normalizedType(type)
        }
        return result
    }

    static func normalizedType(_ type: String) -> String {
        type == "timestamp with time zone" ? "timestamp(3) with time zone" : type
    }

    // MARK: - Signals

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
    /// The server has no sync tables, and the server may not create them.
    case serverHasNoTables
    /// The device synced with another server (or one restored from an earlier backup).
    case anotherServer(expected: UUID, found: UUID)

    public var description: String {
        switch self {
        case .incompatible(let device, let server, let details):
            "this device's model \(device) does not fit the server's model \(server.map(\.description) ?? "(unknown)"): "
                + details.joined(separator: "; ")
        case .serverHasNoTables:
            "the server has no Strata sync tables, and may not create them (SchemaPolicy.requireExisting)"
        case .anotherServer(let expected, let found):
            "this store synced with server \(expected), and the server now answers as \(found): another database, or one restored from an earlier backup"
        }
    }
}

extension PostgresSyncServer {
    /// Every object and link of the synced tables (see ``SyncContents``).
    public func contents() async throws -> SyncContents {
        try await transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            var result = SyncContents()
            for entity in schema.tables.entities {
                let ids = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(quoted(entity.primaryKey))::text FROM \(quoted(entity.name))"), logger: logger)
                var all: [UUID] = []
                for try await id in ids.decode(String.self) { if let id = UUID(uuidString: id) { all.append(id) } }
                result.objects[entity.name] = try await self.rows(of: entity, ids: all, connection)
            }
            for join in schema.tables.joins {
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT \(quoted(join.column))::text, \(quoted(join.inverseColumn))::text FROM \(quoted(join.name))"),
                    logger: logger)
                var links: Set<String> = []
                for try await (a, b) in rows.decode((String, String).self) { links.insert("\(a) \(b)") }
                result.links[join.name] = links
            }
            return result
        }
    }
}

/// A request to the server took longer than its timeout; the connection was dropped.
public struct SyncTimeoutError: StrataError {
    public var timeout: Duration
    public var description: String { "the sync server did not answer within \(timeout)" }
}

/// Resumes a continuation once, from whichever task gets there first.
final class ResumeOnce<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var done = false
    var timer: Task<Void, any Error>? {
        get { lock.withLock { storedTimer } }
        set {
            let finished = lock.withLock { () -> Bool in
                storedTimer = newValue
                return done
            }
            if finished { newValue?.cancel() }
        }
    }
    private var storedTimer: Task<Void, any Error>?

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        lock.withLock { self.continuation = continuation }
    }

    /// True for the first call.
    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let (continuation, timer): (CheckedContinuation<T, any Error>?, Task<Void, any Error>?) = lock.withLock {
            guard !done else { return (nil, nil) }
            done = true
            defer { self.continuation = nil }
            return (self.continuation, storedTimer)
        }
        guard let continuation else { return false }
        timer?.cancel()
        continuation.resume(with: result)
        return true
    }
}
