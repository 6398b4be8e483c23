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
    private var countTriggersChecked = false

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

    /// ``pull(_:)``'s answer as the sync works on it (see ``PullBatch``).
    func pullBatch(_ request: SyncPullRequest) async throws -> PullBatch {
        try await withDeadline { try await self.answerInBatch(request) }
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

    // MARK: - Push

    func apply(_ push: SyncPush) async throws -> SyncPushResult {
        try await transaction { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(PostgresSchema.logLock))"), logger: logger)
            let pushID = push.id.uuidString.lowercased()
            let seen = try await connection.query("SELECT result FROM strata_sync_pushes WHERE push = \(pushID)::uuid", logger: logger)
            for try await text in seen.decode(String.self) {
                var result = try JSONDecoder().decode(SyncPushResult.self, from: Data(text.utf8))
                result.isRepeat = true
                return result
            }
            let device = push.device.uuidString.lowercased()
            try await connection.query("SELECT set_config('strata.device', \(device), true)", logger: logger)
            try await self.ensureCountTriggers(connection)
            // The count rules hold when the push ends: the changes are applied, the count
            // triggers run (they are deferred to the commit); when one refuses an owner's
            // count, the changes of the push that took it out of range are set aside and the
            // push is applied again without them, until every count holds.
            let checksCounts = !schema.tables.countRules.isEmpty
            var countRefused: [Int: String] = [:]
            var refused: [SyncRefusal]
            while true {
                if checksCounts { try await connection.query("SAVEPOINT strata_counts", logger: logger) }
                refused = try await self.applyChanges(push.changes, skipping: Set(countRefused.keys), connection)
                guard checksCounts else { break }
                let name = PostgresSchema.countTriggerName
                do {
                    try await connection.query(PostgresQuery(unsafeSQL: "SET CONSTRAINTS \(name) IMMEDIATE"), logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: "SET CONSTRAINTS \(name) DEFERRED"), logger: logger)
                    try await connection.query("RELEASE SAVEPOINT strata_counts", logger: logger)
                    break
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42704" {
                    self.countTriggersChecked = false  // the triggers are gone: look again at the next push
                    throw error
                } catch let error as PSQLError where Self.isRefusal(error) {
                    try await connection.query("ROLLBACK TO SAVEPOINT strata_counts", logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: "SET CONSTRAINTS \(name) DEFERRED"), logger: logger)
                    let settled = Set(countRefused.keys).union(refused.map(\.index))
                    let chosen = try await self.countRefusals(error, push.changes, settled: settled, connection)
                    guard !chosen.isEmpty else { throw error }  // no change of the push to give up: the push fails
                    for index in chosen { countRefused[index] = Self.reason(error) }
                }
            }
            for (index, reason) in countRefused {
                refused.append(try await self.refusal(index, push.changes[index], reason, connection))
            }
            refused.sort { $0.index < $1.index }
            let result = SyncPushResult(push: push.id, refused: refused)
            let text = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
            try await connection.query(
                "INSERT INTO strata_sync_pushes (push, device, result) VALUES (\(pushID)::uuid, \(device), \(text))", logger: logger)
            return result
        }
    }

    /// Applies the changes of a push but those in `skipping` (refused for a count rule), and
    /// returns the refusals: all at once first (consecutive inserts or updates of one table in
    /// one statement); change by change, each in a savepoint, when one fails.
    func applyChanges(_ all: [SyncChange], skipping: Set<Int>, _ connection: PostgresConnection) async throws -> [SyncRefusal] {
        let kept = all.indices.filter { !skipping.contains($0) }  // index here → index in the push
        let changes = kept.map { all[$0] }
        var refused: [SyncRefusal] = []
        try await connection.query("SAVEPOINT strata_push", logger: logger)
        do {
            var start = 0
            while start < changes.count {
                let end = self.batchEnd(changes, from: start)
                if end - start > 1 {
                    for (index, reason) in try await self.applyBatch(changes[start..<end], connection) {
                        refused.append(try await self.refusal(kept[index], changes[index], reason, connection))
                    }
                } else if let reason = try await self.apply(changes[start], connection) {
                    refused.append(try await self.refusal(kept[start], changes[start], reason, connection))
                }
                start = end
            }
            try await connection.query("RELEASE SAVEPOINT strata_push", logger: logger)
        } catch let error as PSQLError where Self.isRefusal(error) {
            try await connection.query("ROLLBACK TO SAVEPOINT strata_push", logger: logger)
            refused = []
            // A change a constraint refuses is tried once more after the others: a later
            // change of the same push may free what it needs (a unique name that a
            // deletion or a rename later in the push gives up, the push's order being
            // inserts, updates, deletions).
            /// Applies change `index` in a savepoint; nil when a constraint refused it and it
            /// is not `final` (it is then tried again), else the change's refusal if any.
            func attempt(_ index: Int, final: Bool) async throws -> SyncRefusal?? {
                let change = changes[index]
                try await connection.query("SAVEPOINT strata_change", logger: logger)
                do {
                    var refusal: SyncRefusal?
                    if let reason = try await self.apply(change, connection) {
                        refusal = try await self.refusal(kept[index], change, reason, connection)
                    }
                    try await connection.query("RELEASE SAVEPOINT strata_change", logger: logger)
                    return .some(refusal)
                } catch let error as PSQLError where Self.isRefusal(error) {
                    try await connection.query("ROLLBACK TO SAVEPOINT strata_change", logger: logger)
                    guard final else { return nil }
                    return .some(try await self.refusal(kept[index], change, Self.reason(error), connection))
                }
            }
            var failed: [Int] = []
            for index in changes.indices {
                switch try await attempt(index, final: false) {
                case .some(let refusal): if let refusal { refused.append(refusal) }
                case .none: failed.append(index)
                }
            }
            for index in failed {
                if let refusal = try await attempt(index, final: true) ?? nil { refused.append(refusal) }
            }
            refused.sort { $0.index < $1.index }
        }
        return refused
    }

    // MARK: - Count rules

    /// Makes sure the server checks this model's count rules: creates the count triggers
    /// that are missing (``SchemaPolicy/createAndExtend``), or fails (``SchemaPolicy/requireExisting``:
    /// apply the script again). Triggers that exist are left as they are (the script of a
    /// newer model replaces them), so that devices of two model versions do not take turns
    /// rewriting them.
    func ensureCountTriggers(_ connection: PostgresConnection) async throws {
        let expected = schema.countTriggerArguments
        guard !countTriggersChecked, !expected.isEmpty else { return }
        let rows = try await connection.query(
            """
            SELECT c.relname::text, encode(t.tgargs, 'escape') FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
            JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = current_schema() AND t.tgname = \(PostgresSchema.countTriggerName)
            """, logger: logger)
        var found: Set<String> = []
        for try await (table, _) in rows.decode((String, String).self) { found.insert(table) }
        let missing = expected.keys.filter { !found.contains($0) }.sorted()
        if !missing.isEmpty {
            guard policy == .createAndExtend else {
                throw SyncModelError.incompatible(
                    device: schema.version, server: try await meta("model", connection).flatMap {
                        try? JSONDecoder().decode(SyncModelVersion.self, from: Data($0.utf8))
                    },
                    details: missing.map { "the count rules of \($0) are not checked on the server (apply PostgresSchema.sql again)" })
            }
            let ddl = schema.ddl
            try await connection.query(PostgresQuery(unsafeSQL: PostgreSQLDDL.countFunction), logger: logger)
            for (table, sql) in ddl.countTriggers where missing.contains(table) {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            }
        }
        countTriggersChecked = true
    }

    /// The changes of a push to refuse for the count that `error` (a count trigger's) names:
    /// those of the push that moved the owner's count out of range, the last ones first, as
    /// many as it takes (links or destinations added to an owner with too many; links
    /// removed, destinations moved away or deleted from an owner with too few). When they do
    /// not suffice: the owner's own insert (an owner made with too few), else every other
    /// change of the push that touches the owner, else the push's last deletion (a cascade
    /// took the destinations). Called with the server as it was before the push; `settled`:
    /// the changes refused already.
    func countRefusals(
        _ error: PSQLError, _ changes: [SyncChange], settled: Set<Int>, _ connection: PostgresConnection
    ) async throws -> [Int] {
        guard error.serverInfo?[.constraintName] == PostgresSchema.countTriggerName,
              let table = error.serverInfo?[.tableName], let relationship = error.serverInfo?[.columnName],
              let rule = schema.tables.countRules.first(where: { $0.table == table && $0.relationship == relationship }),
              let detail = error.serverInfo?[.detail], let space = detail.firstIndex(of: " "),
              let owner = UUID(uuidString: String(detail[..<space])),
              let count = detail.split(separator: " ").last.flatMap({ Int($0) })
        else { return [] }
        let open = changes.indices.filter { !settled.contains($0) }
        var delta: [Int: Int] = [:]  // index → what the change does to the owner's count
        var ownerInsert: Int?
        for index in open where changes[index].table == table && changes[index].id == owner && changes[index].kind == .insert {
            ownerInsert = index
        }
        var binds = PostgresBindings()
        binds.append(owner.uuidString.lowercased())
        if let join = schema.tables.join(named: rule.linksTable) {
            let other = rule.linksColumn == join.column ? join.inverseColumn : join.column
            let otherEntity = rule.linksColumn == join.column ? join.destination : join.entity
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT \(quoted(other))::text FROM \(quoted(join.name)) WHERE \(quoted(rule.linksColumn)) = $1::uuid", binds: binds),
                logger: logger)
            var linked: Set<UUID> = []
            for try await id in rows.decode(String.self) { if let id = UUID(uuidString: id) { linked.insert(id) } }
            for index in open {
                let change = changes[index]
                if change.table == join.name, change.link?[rule.linksColumn] == owner, let destination = change.link?[other] {
                    if change.kind == .link, !linked.contains(destination) { delta[index] = 1 }
                    if change.kind == .unlink, linked.contains(destination) { delta[index] = -1 }
                    if delta[index] == nil { delta[index] = 0 }
                } else if change.kind == .delete, change.table == otherEntity, let id = change.id, linked.contains(id) {
                    delta[index] = -1
                }
            }
        } else if let entity = schema.tables.entity(named: rule.linksTable) {
            let ids = open.compactMap { changes[$0].table == entity.name ? changes[$0].id : nil }
            var ids_ = PostgresBindings()
            ids_.append(ids.map { $0.uuidString.lowercased() })
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: """
                    SELECT \(quoted(entity.primaryKey))::text, \(quoted(rule.linksColumn))::text FROM \(quoted(entity.name)) \
                    WHERE \(quoted(entity.primaryKey)) = ANY($1::text[]::uuid[])
                    """, binds: ids_),
                logger: logger)
            var before: [UUID: UUID?] = [:]  // the objects the server has, and their owners
            for try await (id, key) in rows.decode((String, String?).self) {
                if let id = UUID(uuidString: id) { before[id] = key.flatMap(UUID.init(uuidString:)) }
            }
            let ownerText = owner.uuidString.lowercased()
            for index in open {
                let change = changes[index]
                guard change.table == entity.name, let id = change.id else { continue }
                let wasHere = before[id].map { $0 == owner } ?? false
                let comesHere = change.values[rule.linksColumn].map { ($0 ?? "").lowercased() == ownerText }
                switch change.kind {
                case .insert where before[id] == nil && comesHere == true: delta[index] = 1
                case .update where before[id] != nil:
                    if comesHere == true && !wasHere { delta[index] = 1 }
                    if comesHere == false && wasHere { delta[index] = -1 }
                case .delete where wasHere: delta[index] = -1
                default: break
                }
            }
        }
        let tooMany = rule.maxCount.map { count > $0 } ?? false
        let needed = tooMany ? count - (rule.maxCount ?? count) : (rule.minCount ?? count) - count
        var chosen = Array(open.filter { delta[$0] == (tooMany ? 1 : -1) }.reversed().prefix(max(needed, 1)))
        if chosen.count < needed {
            if !tooMany, let ownerInsert {
                chosen = [ownerInsert]
            } else {
                chosen += open.filter { delta[$0] != nil && !chosen.contains($0) }.reversed()
            }
        }
        if chosen.isEmpty, let last = open.last(where: { changes[$0].kind == .delete }) { chosen = [last] }
        return chosen
    }

    /// Whether the server refused a change for its data (a constraint: SQLSTATE class 23; a
    /// value: class 22), which the device settles by taking the server's state. Any other
    /// error (a permission the role lacks, a missing table, the server shutting down) fails
    /// the whole push, which is sent again later: nothing the device holds is given up for it.
    static func isRefusal(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("23") || state.hasPrefix("22")
    }

    static func reason(_ error: PSQLError) -> String {
        let state = error.serverInfo?[.sqlState] ?? ""
        let message = error.serverInfo?[.message] ?? "\(error)"
        let detail = error.serverInfo?[.detail].map { " (\($0))" } ?? ""
        return "\(message)\(detail) [SQLSTATE \(state)]"
    }

    func refusal(_ index: Int, _ change: SyncChange, _ reason: String, _ connection: PostgresConnection) async throws -> SyncRefusal {
        var current: [String: String?]?
        if let id = change.id, let entity = schema.tables.entity(named: change.table) {
            current = try await rows(of: entity, ids: [id], connection)[id]
        }
        return SyncRefusal(index: index, change: change, reason: reason, serverValues: current)
    }

    /// Applies one change; returns why it was not applied when that is not an error (an
    /// update of an object the server no longer has).
    func apply(_ change: SyncChange, _ connection: PostgresConnection) async throws -> String? {
        var binds = PostgresBindings()
        if let join = schema.tables.join(named: change.table) {
            guard let a = change.link?[join.column], let b = change.link?[join.inverseColumn] else { return "a link without its two objects" }
            binds.append(a.uuidString.lowercased())
            binds.append(b.uuidString.lowercased())
            let sql = change.kind == .unlink
                ? "DELETE FROM \(quoted(join.name)) WHERE \(quoted(join.column)) = $1::uuid AND \(quoted(join.inverseColumn)) = $2::uuid"
                : "INSERT INTO \(quoted(join.name)) (\(quoted(join.column)), \(quoted(join.inverseColumn))) VALUES ($1::uuid, $2::uuid) ON CONFLICT DO NOTHING"
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            return nil
        }
        guard let entity = schema.tables.entity(named: change.table), let id = change.id else {
            return "the server does not sync '\(change.table)'"
        }
        binds.append(id.uuidString.lowercased())
        let key = quoted(entity.primaryKey)
        let table = quoted(entity.name)
        var names: [String] = []
        var values: [String] = []
        for (name, text) in change.values.sorted(by: { $0.key < $1.key }) {
            guard let column = entity.column(named: name) else { continue }  // a column this server's model lacks
            binds.append(text)
            names.append(quoted(name))
            values.append(PostgresSchema.fromText("$\(binds.count)", column.valueType))
        }
        switch change.kind {
        case .insert:
            let sql = "INSERT INTO \(table) (\(([key] + names).joined(separator: ", "))) VALUES (\((["$1::uuid"] + values).joined(separator: ", "))) ON CONFLICT (\(key)) DO NOTHING"
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        case .update:
            guard !names.isEmpty else { return nil }
            let sets = zip(names, values).map { "\($0) = \($1)" }.joined(separator: ", ")
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "UPDATE \(table) SET \(sets) WHERE \(key) = $1::uuid RETURNING 1", binds: binds), logger: logger)
            var found = false
            for try await _ in rows { found = true }
            if !found { return "the object was deleted on the server" }
        case .delete:
            try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(key) = $1::uuid", binds: binds), logger: logger)
        case .link, .unlink:
            return "a link change for an entity table"
        }
        return nil
    }

    /// The columns of `change` that this server's model has, sorted.
    func knownColumns(_ change: SyncChange, _ entity: SyncedTables.Entity) -> [String] {
        change.values.keys.filter { entity.column(named: $0) != nil }.sorted()
    }

    /// Where the run of changes from `start` that one statement can apply ends: consecutive
    /// inserts, or updates, of one table with the same columns, each object once, at most 1,000.
    func batchEnd(_ changes: [SyncChange], from start: Int) -> Int {
        let first = changes[start]
        guard first.kind == .insert || first.kind == .update, let id = first.id, let entity = schema.tables.entity(named: first.table)
        else { return start + 1 }
        let columns = knownColumns(first, entity)
        guard !columns.isEmpty else { return start + 1 }
        var ids: Set<UUID> = [id]
        var end = start + 1
        while end < changes.count, end - start < 1_000 {
            let change = changes[end]
            guard change.kind == first.kind, change.table == first.table, let id = change.id, knownColumns(change, entity) == columns,
                  ids.insert(id).inserted
            else { break }
            end += 1
        }
        return end
    }

    /// Applies a run that ``batchEnd(_:from:)`` found, in one statement, as ``apply(_:_:)``
    /// applies each: inserts `ON CONFLICT DO NOTHING`, updates of the objects that exist. The
    /// rows travel as one JSON array (`json_to_recordset`). Returns, by index in the push, why
    /// a change was not applied when that is not an error (an update of an object the server
    /// no longer has).
    func applyBatch(_ changes: ArraySlice<SyncChange>, _ connection: PostgresConnection) async throws -> [(Int, String)] {
        guard let first = changes.first, let entity = schema.tables.entity(named: first.table) else { return [] }
        let names = knownColumns(first, entity)
        var json = "["
        for change in changes {
            if change.id != first.id { json += "," }
            json += "{\"k\":\"\(change.id?.uuidString.lowercased() ?? "")\""
            for (offset, name) in names.enumerated() {
                json += ",\"c\(offset)\":"
                if let text = change.values[name] ?? nil { json += Self.jsonString(text) } else { json += "null" }
            }
            json += "}"
        }
        json += "]"
        var binds = PostgresBindings()
        binds.append(json)
        let key = quoted(entity.primaryKey), table = quoted(entity.name)
        let record = (["k text"] + names.indices.map { "c\($0) text" }).joined(separator: ", ")
        let values = names.enumerated().map { offset, name in
            PostgresSchema.fromText("v.c\(offset)", entity.column(named: name)?.valueType ?? .string)
        }
        switch first.kind {
        case .insert:
            let sql = """
                INSERT INTO \(table) (\(([key] + names.map(quoted)).joined(separator: ", "))) \
                SELECT v.k::uuid, \(values.joined(separator: ", ")) FROM json_to_recordset($1::json) AS v(\(record)) \
                ON CONFLICT (\(key)) DO NOTHING
                """
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            return []
        default:
            let sets = zip(names, values).map { "\(quoted($0)) = \($1)" }.joined(separator: ", ")
            let sql = """
                UPDATE \(table) SET \(sets) FROM json_to_recordset($1::json) AS v(\(record)) \
                WHERE \(table).\(key) = v.k::uuid RETURNING \(table).\(key)::text
                """
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            var found: Set<String> = []
            for try await id in rows.decode(String.self) { found.insert(id) }
            return changes.indices.compactMap { index in
                found.contains(changes[index].id?.uuidString.lowercased() ?? "") ? nil : (index, "the object was deleted on the server")
            }
        }
    }

    /// `text` as a JSON string.
    static func jsonString(_ text: String) -> String {
        var bytes: [UInt8] = []
        LocalSyncState.appendJSONString(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The current rows of `ids` (wire text by column), those that exist.
    func rows(of entity: SyncedTables.Entity, ids: [UUID], _ connection: PostgresConnection) async throws -> [UUID: [String: String?]] {
        guard !ids.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(ids)  // a uuid[], sent in binary
        return try await rows(of: entity, where: "\(quoted(entity.primaryKey)) = ANY($1)", binds, count: ids.count, connection)
    }

    /// The current rows of `entity` that `condition` selects (wire text by column).
    func rows(
        of entity: SyncedTables.Entity, where condition: String, _ binds: PostgresBindings, count: Int, _ connection: PostgresConnection
    ) async throws -> [UUID: [String: String?]] {
        let objects = try await readObjects(
            of: entity, key: "t.\(quoted(entity.primaryKey))", exists: "true", from: "\(quoted(entity.name)) t WHERE \(condition)",
            binds, count: count, connection)
        var result: [UUID: [String: String?]] = [:]
        result.reserveCapacity(objects.ids.count)
        for index in objects.ids.indices { result[objects.ids[index]] = objects.change(at: index).values }
        return result
    }

    /// Reads objects of `entity`: `SELECT key, exists, order, t.column, … FROM source`, where
    /// `source` names the entity's table `t`, `key` is an object's id, `exists` whether `t` has
    /// its row, and `order` (a `bigint`) where the object goes; the objects in that order (or
    /// in the order of the query's rows, without one), their columns decoded into the values
    /// the store keeps (``PullBatch/Objects/values``).
    /// (Sorting the rows here costs less than letting the server sort rows of every column.)
    func readObjects(
        of entity: SyncedTables.Entity, key: String, exists: String, order: String? = nil, from source: String, _ binds: PostgresBindings,
        count: Int, _ connection: PostgresConnection
    ) async throws -> PullBatch.Objects {
        let columns = entity.columns
        let list = ([key, exists] + (order.map { [$0] } ?? []) + columns.map { Self.selection(of: $0) }).joined(separator: ", ")
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(list) FROM \(source)", binds: binds), logger: logger)
        var objects = PullBatch.Objects(table: entity.name, columns: columns.map(\.name))
        objects.types = columns.map(\.valueType)
        objects.ids.reserveCapacity(count)
        objects.rows.reserveCapacity(count)
        objects.values.reserveCapacity(count * columns.count)
        var places: [Int64] = []
        for try await row in rows {
            var cells = row.makeIterator()
            guard let idCell = cells.next(), let id = try idCell.decode(UUID?.self), let existsCell = cells.next() else { continue }
            if order != nil { places.append(try cells.next()?.decode(Int64.self) ?? 0) }
            guard try existsCell.decode(Bool.self) else {
                objects.appendDeleted(id)
                continue
            }
            for column in columns {
                objects.values.append(try cells.next().map { try Self.storedValue(of: $0, as: column.valueType) } ?? .null)
            }
            objects.appendRow(id)
        }
        if order != nil {
            let sorted = objects.ids.indices.sorted { places[$0] < places[$1] }
            objects.ids = sorted.map { objects.ids[$0] }
            objects.rows = sorted.map { objects.rows[$0] }
        }
        return objects
    }

    /// How ``readObjects(of:key:exists:order:from:_:count:_:)`` selects `column` of the table
    /// `t`: numbers, booleans, ids, data and dates as they are (their binary form is read
    /// here), other types as text.
    static func selection(of column: SyncedTables.Column) -> String {
        switch column.valueType {
        case .int, .int32, .int16, .bool, .double, .float, .uuid, .data, .date: "t.\(quoted(column.name))"
        case .string, .url, .enumeration, .json, .decimal: PostgresSchema.toText(column.name, column.valueType, of: "t")
        }
    }

    /// A cell of a row selected by ``selection(of:)``, as the store keeps a value of `type`: the
    /// same value as ``SyncValue/databaseValue(of:as:)`` of the cell's wire text. (A hello
    /// refuses a server whose column types differ from the model's; a cell of another type is
    /// handed to postgres-nio's `String` decoding, whose error a pull then throws.)
    static func storedValue(of cell: PostgresCell, as type: ValueType) throws -> DatabaseValue {
        guard var bytes = cell.bytes else { return .null }
        switch (cell.dataType, bytes.readableBytes) {
        case (.int8, 8): return bytes.readInteger(as: Int64.self)!.databaseValue
        case (.int4, 4): return Int64(bytes.readInteger(as: Int32.self)!).databaseValue
        case (.int2, 2): return Int64(bytes.readInteger(as: Int16.self)!).databaseValue
        case (.bool, 1): return Int64(bytes.readInteger(as: UInt8.self)! == 0 ? 0 : 1).databaseValue
        case (.float8, 8): return Double(bitPattern: bytes.readInteger(as: UInt64.self)!).databaseValue
        case (.uuid, 16), (.bytea, _): return Data(bytes.readableBytesView).databaseValue
        case (.timestamptz, 8):
            return SyncValue.dateText(microsecondsSince2000: bytes.readInteger(as: Int64.self)!).databaseValue
        case (.text, _), (.varchar, _): return SyncValue.databaseValue(of: String(buffer: bytes), as: type)
        default: return SyncValue.databaseValue(of: try cell.decode(String.self), as: type)
        }
    }

    // MARK: - Pull

    func answer(_ request: SyncPullRequest) async throws -> SyncPullResult {
        try await answerInBatch(request).result
    }

    /// The answer to `request`, each table's objects read into one array of stored values (see
    /// ``PullBatch``). The server reads the log: which entries the answer covers, and per table
    /// the objects and links they name (other devices' entries, each object or link once, in
    /// the order of its first entry), each object with its current row.
    func answerInBatch(_ request: SyncPullRequest) async throws -> PullBatch {
        try await transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            let device = request.device.uuidString.lowercased()
            // The entries the answer covers: the first `limit` after the cursor (in this
            // transaction's snapshot, every query below sees the same), counted by table.
            let window = try await connection.query(
                """
                SELECT tbl, count(*)::int8, max(seq) FROM \
                (SELECT seq, tbl FROM strata_sync_log WHERE seq > \(request.cursor) ORDER BY seq LIMIT \(request.limit)) e GROUP BY tbl
                """, logger: logger)
            var count: Int64 = 0
            var cursor = request.cursor
            var named: [String: Int] = [:]  // the tables the entries name, with how many each
            for try await (table, entries, last) in window.decode((String, Int64, Int64).self) {
                count += entries
                cursor = max(cursor, last)
                named[table] = Int(entries)
            }
            let range = "seq > \(request.cursor) AND seq <= \(cursor) AND origin IS DISTINCT FROM $1"
            var batch: [PullBatch.Objects] = []
            for entity in schema.tables.entities {
                guard let entries = named[entity.name] else { continue }
                var binds = PostgresBindings()
                binds.append(device)
                binds.append(entity.name)
                let objects = try await readObjects(
                    of: entity, key: "e.strata_id", exists: "(t.\(quoted(entity.primaryKey)) IS NOT NULL)", order: "e.strata_seq",
                    from: """
                        (SELECT id AS strata_id, min(seq) AS strata_seq FROM strata_sync_log \
                        WHERE \(range) AND tbl = $2 AND id IS NOT NULL GROUP BY id) e \
                        LEFT JOIN \(quoted(entity.name)) t ON t.\(quoted(entity.primaryKey)) = e.strata_id
                        """, binds, count: entries, connection)
                if !objects.ids.isEmpty { batch.append(objects) }
            }
            var links: [SyncChange] = []
            for join in schema.tables.joins where named[join.name] != nil {
                var binds = PostgresBindings()
                binds.append(device)
                binds.append(join.name)
                let column = quoted(join.column), inverse = quoted(join.inverseColumn)
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: """
                        SELECT e.a, e.b, EXISTS (SELECT 1 FROM \(quoted(join.name)) j WHERE j.\(column) = e.a AND j.\(inverse) = e.b) \
                        FROM (SELECT a, b, min(seq) AS strata_seq FROM strata_sync_log \
                        WHERE \(range) AND tbl = $2 AND id IS NULL AND a IS NOT NULL AND b IS NOT NULL GROUP BY a, b) e \
                        ORDER BY e.strata_seq
                        """, binds: binds), logger: logger)
                for try await (a, b, exists) in rows.decode((UUID, UUID, Bool).self) {
                    links.append(SyncChange(kind: exists ? .link : .unlink, table: join.name, link: [join.column: a, join.inverseColumn: b]))
                }
            }
            return PullBatch(objects: batch, links: links, cursor: cursor, hasMore: count == request.limit)
        }
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
