import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO
import Strata
import StrataSQL

/// The rules the server keeps in triggers: counts (`minCount`, `maxCount`), ordered lists
/// and the log's lock, made where a server of an earlier version lacks them.
extension PostgresSyncServer {
    // MARK: - Count rules

    /// Makes sure the server checks this model's count rules: creates the count triggers
    /// that are missing (``SchemaPolicy/createAndExtend``), or fails (``SchemaPolicy/requireExisting``:
    /// apply the script again). Triggers that exist are left as they are (the script of a
    /// newer model replaces them), so that devices of two model versions do not take turns
    /// rewriting them.
    func ensureCountTriggers(_ connection: PostgresConnection) async throws {
        let expected = schema.countTriggerArguments
        guard !countTriggersChecked, !expected.isEmpty else { return }
        let rows = try await connection.run(
            """
            SELECT c.relname::text, encode(t.tgargs, 'escape') FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
            JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = current_schema() AND t.tgname = \(PostgresSchema.countTriggerName)
            """, logger: logger)
        var found: Set<String> = []
        for (table, _) in try rows.decode((String, String).self) { found.insert(table) }
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
            try await connection.run(PostgresQuery(unsafeSQL: PostgreSQLDDL.countFunction), logger: logger)
            for (table, sql) in ddl.countTriggers where missing.contains(table) {
                try await connection.run(PostgresQuery(unsafeSQL: sql), logger: logger)
            }
        }
        countTriggersChecked = true
    }

    /// Makes sure the server has the triggers a server made by an earlier version lacks: the
    /// lock trigger of every synced table (`PostgreSQLDDL.lockTrigger`) and the position
    /// triggers of ordered lists (`PostgreSQLDDL.positionFunction`). Creates those that are
    /// missing (``SchemaPolicy/createAndExtend``: at the first hello of a device of this
    /// version), or fails (``SchemaPolicy/requireExisting``: apply the script again).
    func ensureTriggers(_ connection: PostgresConnection) async throws {
        let ddl = schema.ddl
        let rows = try await connection.run(
            """
            SELECT c.relname::text, t.tgname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
            JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = current_schema() AND t.tgname LIKE 'strata_sync_%'
            """, logger: logger)
        var found: Set<String> = []
        for (table, trigger) in try rows.decode((String, String).self) { found.insert("\(table) \(trigger)") }
        let sqlSchema = schema.tables.sqlSchema
        var statements: [(table: String, sql: [String])] = []
        for table in sqlSchema.tables.map(\.name) + sqlSchema.joinTables.map(\.name)
        where !found.contains("\(table) \(PostgreSQLDDL.lockTriggerName)") {
            statements.append((table, [PostgreSQLDDL.lockTrigger(on: table)]))
        }
        for (table, sql) in ddl.positionTriggers {
            let references = sqlSchema.table(named: table)?.orderedPositions.map(\.reference) ?? []
            let names = references.flatMap { [PostgreSQLDDL.positionTriggerName($0), PostgreSQLDDL.tieTriggerName($0)] }
            if names.contains(where: { !found.contains("\(table) \($0)") }) { statements.append((table, sql)) }
        }
        // Per-user data: all its functions and triggers, when one trigger is missing.
        let access = schema.access.triggers
        if access.contains(where: { entry in entry.trigger.map { !found.contains("\(entry.table) \($0)") } ?? false }) {
            statements += access.map { ($0.table, $0.sql) }
        }
        guard !statements.isEmpty else { return }
        guard policy == .createAndExtend else {
            throw SyncModelError.incompatible(
                device: schema.version, server: try await meta("model", connection).flatMap {
                    try? JSONDecoder().decode(SyncModelVersion.self, from: Data($0.utf8))
                },
                details: Set(statements.map(\.table)).sorted().map {
                    "the table \($0) lacks the sync's triggers of this version (apply PostgresSchema.sql again)"
                })
        }
        for function in [PostgreSQLDDL.lockFunction, PostgreSQLDDL.positionFunction, PostgreSQLDDL.tieFunction] {
            try await connection.run(PostgresQuery(unsafeSQL: function), logger: logger)
        }
        for (_, sql) in statements {
            for statement in sql { try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger) }
        }
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
              let owner = SyncValue.uuid(String(detail[..<space])),
              let count = detail.split(separator: " ").last.flatMap({ Int($0) })
        else { return [] }
        let open = changes.indices.filter { !settled.contains($0) }
        var delta: [Int: Int] = [:]  // index → what the change does to the owner's count
        var ownerInsert: Int?
        for index in open where changes[index].table == table && changes[index].id == owner && changes[index].kind == .insert {
            ownerInsert = index
        }
        var binds = PostgresBindings()
        binds.append(owner.syncText)
        if let join = schema.tables.join(named: rule.linksTable) {
            let other = rule.linksColumn == join.column ? join.inverseColumn : join.column
            let otherEntity = rule.linksColumn == join.column ? join.destination : join.entity
            let rows = try await connection.run(
                PostgresQuery(unsafeSQL: "SELECT \(quoted(other))::text FROM \(quoted(join.name)) WHERE \(quoted(rule.linksColumn)) = $1::uuid", binds: binds),
                logger: logger)
            var linked: Set<UUID> = []
            for id in try rows.decode(String.self) { if let id = SyncValue.uuid(id) { linked.insert(id) } }
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
            ids_.append(ids.map { $0.syncText })
            let rows = try await connection.run(
                PostgresQuery(unsafeSQL: """
                    SELECT \(quoted(entity.primaryKey))::text, \(quoted(rule.linksColumn))::text FROM \(quoted(entity.name)) \
                    WHERE \(quoted(entity.primaryKey)) = ANY($1::text[]::uuid[])
                    """, binds: ids_),
                logger: logger)
            var before: [UUID: UUID?] = [:]  // the objects the server has, and their owners
            for (id, key) in try rows.decode((String, String?).self) {
                if let id = SyncValue.uuid(id) { before[id] = key.flatMap(SyncValue.uuid) }
            }
            let ownerText = owner.syncText
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
}
