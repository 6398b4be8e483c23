import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO
import Strata
import StrataSQL

/// A push, applied once in one transaction: its changes, in statements of many rows where
/// they allow, each refused one recorded with the server's row.
extension PostgresSyncServer {
    // MARK: - Push

    func apply(_ push: SyncPush) async throws -> SyncPushResult {
        try await transaction { connection in
            try await connection.run(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(PostgresSchema.logLock))"), logger: logger)
            let pushID = push.id.syncText
            let seen = try await connection.run("SELECT result FROM strata_sync_pushes WHERE push = \(pushID)::uuid", logger: logger)
            for text in try seen.decode(String.self) {
                var result = try JSONDecoder().decode(SyncPushResult.self, from: Data(text.utf8))
                result.isRepeat = true
                return result
            }
            let device = push.device.syncText
            try await connection.run("SELECT set_config('strata.device', \(device), true)", logger: logger)
            try await self.ensureCountTriggers(connection)
            // The count rules hold when the push ends: the changes are applied, the count
            // triggers run (they are deferred to the commit); when one refuses an owner's
            // count, the changes of the push that took it out of range are set aside and the
            // push is applied again without them, until every count holds.
            let checksCounts = !schema.tables.countRules.isEmpty
            var countRefused: [Int: String] = [:]
            var refused: [SyncRefusal]
            while true {
                if checksCounts { try await connection.run("SAVEPOINT strata_counts", logger: logger) }
                refused = try await self.applyChanges(push.changes, skipping: Set(countRefused.keys), connection)
                guard checksCounts else { break }
                let name = PostgresSchema.countTriggerName
                do {
                    try await connection.run(PostgresQuery(unsafeSQL: "SET CONSTRAINTS \(name) IMMEDIATE"), logger: logger)
                    try await connection.run(PostgresQuery(unsafeSQL: "SET CONSTRAINTS \(name) DEFERRED"), logger: logger)
                    try await connection.run("RELEASE SAVEPOINT strata_counts", logger: logger)
                    break
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42704" {
                    self.countTriggersChecked = false  // the triggers are gone: look again at the next push
                    throw error
                } catch let error as PSQLError where Self.isRefusal(error) {
                    try await connection.run("ROLLBACK TO SAVEPOINT strata_counts", logger: logger)
                    try await connection.run(PostgresQuery(unsafeSQL: "SET CONSTRAINTS \(name) DEFERRED"), logger: logger)
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
            try await connection.run(
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
        if let user = Self.pushUser { return try await applyChecked(changes, kept: kept, user: user, connection) }
        var refused: [SyncRefusal] = []
        try await connection.run("SAVEPOINT strata_push", logger: logger)
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
            try await connection.run("RELEASE SAVEPOINT strata_push", logger: logger)
        } catch let error as PSQLError where Self.isRefusal(error) {
            try await connection.run("ROLLBACK TO SAVEPOINT strata_push", logger: logger)
            refused = try await oneByOne(
                changes, connection, apply: { try await self.apply($0, connection) },
                refusal: { index, change, reason in try await self.refusal(kept[index], change, reason, connection) })
        }
        return refused
    }

    /// Applies `changes` one by one, each in a savepoint (`apply` answers the reason the rules
    /// refuse one for, nil when it is applied), and returns their refusals in order (made by
    /// `refusal`, from a change's index in `changes`). A change a constraint refuses is tried
    /// once more after the others: a later change of the same push may free what it needs (a
    /// unique name that a deletion or a rename later in the push gives up, the push's order
    /// being inserts, updates, deletions).
    func oneByOne(
        _ changes: [SyncChange], _ connection: PostgresConnection,
        apply: (SyncChange) async throws -> String?,
        refusal: (Int, SyncChange, String) async throws -> SyncRefusal
    ) async throws -> [SyncRefusal] {
        /// The change's refusal if any; nil when a constraint refused it and it is not `final`.
        func attempt(_ index: Int, final: Bool) async throws -> SyncRefusal?? {
            let change = changes[index]
            try await connection.run("SAVEPOINT strata_change", logger: logger)
            do {
                var refused: SyncRefusal?
                if let reason = try await apply(change) { refused = try await refusal(index, change, reason) }
                try await connection.run("RELEASE SAVEPOINT strata_change", logger: logger)
                return .some(refused)
            } catch let error as PSQLError where Self.isRefusal(error) {
                try await connection.run("ROLLBACK TO SAVEPOINT strata_change", logger: logger)
                guard final else { return nil }
                return .some(try await refusal(index, change, Self.reason(error)))
            }
        }
        var refused: [SyncRefusal] = []
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
        return refused
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
            binds.append(a.syncText)
            binds.append(b.syncText)
            let sql = change.kind == .unlink
                ? "DELETE FROM \(quoted(join.name)) WHERE \(quoted(join.column)) = $1::uuid AND \(quoted(join.inverseColumn)) = $2::uuid"
                : "INSERT INTO \(quoted(join.name)) (\(quoted(join.column)), \(quoted(join.inverseColumn))) VALUES ($1::uuid, $2::uuid) ON CONFLICT DO NOTHING"
            try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            return nil
        }
        guard let entity = schema.tables.entity(named: change.table), let id = change.id else {
            return "the server does not sync '\(change.table)'"
        }
        binds.append(id.syncText)
        let key = quoted(entity.primaryKey)
        let table = quoted(entity.name)
        var names: [String] = []
        var values: [String] = []
        // The values of an insert or an update (a delete's, which no device sends, would be
        // parameters its statement does not use, which PostgreSQL refuses).
        for (name, text) in change.values.sorted(by: { $0.key < $1.key }) where change.kind == .insert || change.kind == .update {
            guard let column = entity.column(named: name) else { continue }  // a column this server's model lacks
            binds.append(text)
            names.append(quoted(name))
            values.append(PostgresSchema.fromText("$\(binds.count)", column.valueType))
        }
        switch change.kind {
        case .insert:
            let sql = "INSERT INTO \(table) (\(([key] + names).joined(separator: ", "))) VALUES (\((["$1::uuid"] + values).joined(separator: ", "))) ON CONFLICT (\(key)) DO NOTHING"
            try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        case .update:
            guard !names.isEmpty else { return nil }
            let sets = zip(names, values).map { "\($0) = \($1)" }.joined(separator: ", ")
            let rows = try await connection.run(
                PostgresQuery(unsafeSQL: "UPDATE \(table) SET \(sets) WHERE \(key) = $1::uuid RETURNING 1", binds: binds), logger: logger)
            if rows.isEmpty { return "the object was deleted on the server" }
        case .delete:
            try await connection.run(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(key) = $1::uuid", binds: binds), logger: logger)
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
            json += "{\"k\":\"\(change.id?.syncText ?? "")\""
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
            try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            return []
        default:
            let sets = zip(names, values).map { "\(quoted($0)) = \($1)" }.joined(separator: ", ")
            let sql = """
                UPDATE \(table) SET \(sets) FROM json_to_recordset($1::json) AS v(\(record)) \
                WHERE \(table).\(key) = v.k::uuid RETURNING \(table).\(key)::text
                """
            let rows = try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            var found: Set<String> = []
            for id in try rows.decode(String.self) { found.insert(id) }
            return changes.indices.compactMap { index in
                found.contains(changes[index].id?.syncText ?? "") ? nil : (index, "the object was deleted on the server")
            }
        }
    }

    /// `text` as a JSON string.
    static func jsonString(_ text: String) -> String {
        var bytes: [UInt8] = []
        SyncJSON.appendJSONString(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
