import Foundation
import Logging
import NIOCore
import PostgresNIO
import Strata
import StrataSQL

/// A device of one user could not act as another user's device: its id was first seen
/// with another user's token (a relay answers 403).
package struct SyncDeviceOwnerError: StrataError {
    package var device: UUID
    package var description: String {
        "the device \(device.syncText) belongs to another user: a device id is bound to the user who first synced with it"
    }
}

/// Pushes and pulls for one signed-in user (what a relay asks): each user is served their
/// objects only (the model's `access:`), and a change that reaches outside them is refused.
extension PostgresSyncServer {
    /// ``pull(_:)`` for `user`: the objects outside the user's data that the window names are
    /// answered as deleted (their ids only), so that an object that left the user's data
    /// leaves the user's devices.
    package func pull(_ request: SyncPullRequest, user: String) async throws -> SyncPullResult {
        try await withDeadline {
            let batch = try await self.answerInBatch(request, user: user)
            return request.columnar ? batch.columnarResult : batch.result
        }
    }

    /// ``pull(_:user:)``'s columnar answer (``SyncPullRequest/columnar``) as its JSON, written
    /// straight from the rows read (see ``PullBatch/columnarJSON()``).
    package func pullJSON(_ request: SyncPullRequest, user: String) async throws -> [UInt8] {
        var columnar = request
        columnar.columnar = true
        let asked = columnar
        return try await withDeadline { try await self.answerInBatch(asked, user: user) }.columnarJSON()
    }

    /// ``readSnapshot(batchSize:user:into:)``, each batch handed to `body` as the JSON of its
    /// columnar ``SyncPullResult`` (one line of a relay's snapshot stream).
    package func readSnapshotJSON(batchSize: Int, user: String, into body: @escaping @Sendable ([UInt8]) async -> Bool) async throws {
        try await readSnapshot(batchSize: batchSize, user: user) { answer in
            guard let json = try? answer.batch.columnarJSON() else { return false }
            return await body(json)
        }
    }

    /// ``push(_:)`` for `user`: each change is checked against the user's data before and
    /// after it applies, and refused (a ``SyncRefusal`` whose reason starts with
    /// ``accessRefusalPrefix``) when it reaches outside.
    package func push(_ push: SyncPush, user: String) async throws -> SyncPushResult {
        try await withDeadline { try await self.apply(push, user: user) }
    }

    /// Binds `device` to `user` at its first request, and throws ``SyncDeviceOwnerError`` when
    /// it was bound to another user.
    ///
    /// The bindings are the database's (`strata_sync_devices`): a binding is added once, with
    /// `ON CONFLICT DO NOTHING`, and never changed, so every relay of one database reads the
    /// same owner for a device, whichever relay bound it. The server remembers the bindings
    /// it read, for ``bindingMemory`` at most, to spare a transaction per request: a
    /// remembered binding only lets through a device and user that the database bound, and
    /// refuses nothing (a device not remembered, or remembered with another user, is looked
    /// up again). A binding deleted from the database by hand, or lost to a restored backup,
    /// is thus honoured by every relay within ``bindingMemory``.
    package func bind(device: UUID, to user: String) async throws {
        let id = device.syncText
        if let known = boundDevices[id], known.user == user, known.seen.duration(to: .now) < Self.bindingMemory { return }
        try await withDeadline {
            try await self.transaction { connection in
                let exists = try await connection.run("SELECT to_regclass('strata_sync_devices') IS NOT NULL", logger: self.logger)
                var found = false
                for value in try exists.decode(Bool.self) { found = value }
                if !found {
                    // Two first requests at once would both create it: one at a time.
                    try await connection.run(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(PostgresSchema.logLock))"), logger: self.logger)
                    try await connection.run(
                        """
                        CREATE TABLE IF NOT EXISTS strata_sync_devices (device text PRIMARY KEY, "user" text NOT NULL, \
                        at timestamptz NOT NULL DEFAULT now())
                        """, logger: self.logger)
                }
                let rows = try await connection.run(
                    """
                    WITH added AS (INSERT INTO strata_sync_devices (device, "user") VALUES (\(id), \(user)) \
                    ON CONFLICT (device) DO NOTHING RETURNING "user") \
                    SELECT "user" FROM added UNION ALL SELECT "user" FROM strata_sync_devices WHERE device = \(id)
                    """, logger: self.logger)
                for owner in try rows.decode(String.self) where owner != user { throw SyncDeviceOwnerError(device: device) }
            }
        }
        remember(device: id, user: user)
    }

    func remember(device: String, user: String) {
        if boundDevices.count > 100_000 { boundDevices.removeAll() }
        boundDevices[device] = (user, .now)
    }

    /// How long ``bind(device:to:)`` trusts a binding it read before reading it again.
    package static var bindingMemory: Duration { .seconds(60) }

    /// The start of the reason of a change refused for reaching outside the user's data.
    package static var accessRefusalPrefix: String { "outside the user's data: " }

    func apply(_ push: SyncPush, user: String) async throws -> SyncPushResult {
        try await Self.$pushUser.withValue(schema.access.isDeclared ? user : nil) {
            try await self.apply(push)
        }
    }

    /// What the user of the current push may reach, for ``applyChanges(_:skipping:_:)``.
    @TaskLocal static var pushUser: String?

    /// The changes of a push for `user`, one at a time, each checked (see ``checked(_:_:)``);
    /// a change a constraint refuses is tried again after the others, as in ``applyChanges(_:skipping:_:)``.
    func applyChecked(_ changes: [SyncChange], kept: [Int], user: String, _ connection: PostgresConnection) async throws -> [SyncRefusal] {
        try await connection.run(PostgresQuery(unsafeSQL: ServerAccess.setUser, binds: binds(user)), logger: logger)
        return try await oneByOne(
            changes, connection, apply: { try await self.checked($0, connection) },
            refusal: { index, change, reason in try await self.accessRefusal(kept[index], change, reason, connection) })
    }

    /// A refusal whose server values are the object's row only when the user may read it
    /// (else none: the device lets the object go).
    func accessRefusal(_ index: Int, _ change: SyncChange, _ reason: String, _ connection: PostgresConnection) async throws -> SyncRefusal {
        var current: [String: String?]?
        if let id = change.id, let entity = schema.tables.entity(named: change.table),
           try await isVisible(entity.name, id, connection) == true
        {
            current = try await rows(of: entity, ids: [id], connection)[id]
        }
        return SyncRefusal(index: index, change: change, reason: reason, serverValues: current)
    }

    func binds(_ values: String...) -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }

    /// Whether object `id` of `entity` is in the user's data now; nil when it does not exist.
    func isVisible(_ entity: String, _ id: UUID, _ connection: PostgresConnection) async throws -> Bool? {
        let sql = "SELECT \(schema.access.state(entity, id: "$1::uuid"))"
        let rows = try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds(id.syncText)), logger: logger)
        for value in try rows.decode(Bool?.self) { return value }
        return nil
    }

    /// Applies one change of the current push's user, checked: the objects it changes or
    /// deletes must be in the user's data before, those it inserts or changes after; the
    /// objects it refers to or links must be in it; an owner attribute it sets must hold the
    /// user's id (or the value it had); objects a delete rule reaches (a cascade, a key set
    /// to nil) must be in it. Returns why it was refused or not applied; throws a
    /// constraint's refusal.
    func checked(_ change: SyncChange, _ connection: PostgresConnection) async throws -> String? {
        let prefix = Self.accessRefusalPrefix
        if let join = schema.tables.join(named: change.table) {
            for (column, entity) in [(join.column, join.entity), (join.inverseColumn, join.destination)] {
                if let id = change.link?[column], try await isVisible(entity, id, connection) == false {
                    return prefix + "links \(entity) \(id.syncText), which is not in the user's data"
                }
            }
            return try await apply(change, connection)
        }
        guard let entity = schema.tables.entity(named: change.table), let id = change.id else { return try await apply(change, connection) }
        let uuid = id.syncText
        let before = try await isVisible(entity.name, id, connection)
        if before == false {
            return prefix + (change.kind == .insert
                ? "\(entity.name) \(uuid) exists in another user's data"
                : "\(entity.name) \(uuid) is not in the user's data")
        }
        if change.kind == .delete, before == nil { return nil }
        if change.kind != .delete {
            for (column, destination) in entity.references {
                guard let text = change.values[column] ?? nil, let target = SyncValue.uuid(text) else { continue }
                if try await isVisible(destination, target, connection) == false {
                    return prefix + "\(entity.name).\(column) refers to \(destination) \(target.syncText), which is not in the user's data"
                }
            }
            if case .users(let owner?, _)? = entity.descriptor.access, change.values.keys.contains(owner) {
                // An owner is set when the object is made, to the user's own id; it never
                // changes through a relay (a trusted process may hand an object over).
                let isUUID = entity.descriptor.attribute(named: owner)?.type == .uuid
                func normal(_ text: String?) -> String? { isUUID ? text?.lowercased() : text }
                let given = normal(change.values[owner] ?? nil)
                if change.kind == .insert {
                    if given == nil || given != normal(Self.pushUser) {
                        return prefix + "\(entity.name).\(owner) set to another user's id"
                    }
                } else {
                    let sql = "SELECT o.\(quoted(owner))::text FROM \(quoted(entity.name)) o WHERE o.\(quoted(entity.primaryKey)) = $1::uuid"
                    let rows = try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds(uuid)), logger: logger)
                    var current: String?
                    for value in try rows.decode(String?.self) { current = value }
                    if before != nil, normal(current) != given {
                        return prefix + "\(entity.name).\(owner) changed: an owner is set when the object is made, to the user's own id"
                    }
                }
            }
        }
        let mark = try await logPosition(connection)
        try await connection.run("SAVEPOINT strata_access", logger: logger)
        if let reason = try await apply(change, connection) {
            try await connection.run("RELEASE SAVEPOINT strata_access", logger: logger)
            return reason
        }
        if change.kind != .delete, try await isVisible(entity.name, id, connection) == false {
            try await connection.run("ROLLBACK TO SAVEPOINT strata_access", logger: logger)
            return prefix + "the change would put \(entity.name) \(uuid) outside the user's data"
        }
        // What else the change reached: objects and links a delete rule deleted or changed.
        let rows = try await connection.run(
            PostgresQuery(unsafeSQL: """
                SELECT DISTINCT tbl, id, a, b FROM strata_sync_log WHERE seq > \(mark) AND origin IS NOT NULL \
                AND (id IS NULL OR id <> $1::uuid)
                """, binds: binds(uuid)), logger: logger)
        let reached = try rows.decode((String, UUID?, UUID?, UUID?).self).map { $0 }
        if !reached.isEmpty {
            try await connection.run("ROLLBACK TO SAVEPOINT strata_access", logger: logger)
            for (table, other, a, b) in reached {
                if let other, try await isVisible(table, other, connection) == false {
                    return prefix + "it reaches \(table) \(other.syncText) (a delete rule), which is not in the user's data"
                }
                if let join = schema.tables.join(named: table), let a, let b {
                    for (entity, id) in [(join.entity, a), (join.destination, b)] {
                        if try await isVisible(entity, id, connection) == false {
                            return prefix + "it reaches a link to \(entity) \(id.syncText) (a delete rule), which is not in the user's data"
                        }
                    }
                }
            }
            if let reason = try await apply(change, connection) {
                try await connection.run("RELEASE SAVEPOINT strata_access", logger: logger)
                return reason
            }
        }
        try await connection.run("RELEASE SAVEPOINT strata_access", logger: logger)
        return nil
    }

    /// Every object and link in `user`'s data (see ``contents()``), read in one snapshot: what
    /// each of the user's devices holds once it has pulled.
    package func contents(user: String) async throws -> SyncContents {
        try await race(timeout: nil) {
            try await self.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
                try await connection.run(PostgresQuery(unsafeSQL: ServerAccess.setUser, binds: self.binds(user)), logger: self.logger)
                let access = self.schema.access
                var result = SyncContents()
                for entity in self.schema.tables.entities {
                    let key = quoted(entity.primaryKey)
                    let ids = try await connection.run(
                        PostgresQuery(unsafeSQL: "SELECT t.\(key)::text FROM \(quoted(entity.name)) t WHERE \(access.visible(entity.name, "t"))"),
                        logger: self.logger)
                    var all: [UUID] = []
                    for id in try ids.decode(String.self) { if let id = SyncValue.uuid(id) { all.append(id) } }
                    result.objects[entity.name] = try await self.rows(of: entity, ids: all, connection)
                }
                for join in self.schema.tables.joins {
                    let a = "j.\(quoted(join.column))", b = "j.\(quoted(join.inverseColumn))"
                    let sql = "SELECT \(a)::text, \(b)::text FROM \(quoted(join.name)) j "
                        + "WHERE \(access.linkVisible(join, a: a, b: b))"
                    let rows = try await connection.run(PostgresQuery(unsafeSQL: sql), logger: self.logger)
                    var links: Set<String> = []
                    for (a, b) in try rows.decode((String, String).self) { links.insert("\(a) \(b)") }
                    result.links[join.name] = links
                }
                return result
            }
        }
    }

    /// The log's last position (the push holds the log's lock: no other writer adds to it).
    func logPosition(_ connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.run("SELECT coalesce(max(seq), 0)::int8 FROM strata_sync_log", logger: logger)
        for value in try rows.decode(Int64.self) { return value }
        return 0
    }
}
