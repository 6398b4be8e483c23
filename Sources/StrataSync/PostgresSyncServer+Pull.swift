import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO
import Strata
import StrataSQL

/// A pull: a window of the log read in one snapshot, with the current rows of the objects
/// and links it names.
extension PostgresSyncServer {
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
            binds, connection)
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
        _ connection: PostgresConnection
    ) async throws -> PullBatch.Objects {
        let list = Self.selectList(of: entity, key: key, exists: exists, order: order)
        let rows = try await connection.run(PostgresQuery(unsafeSQL: "SELECT \(list) FROM \(source)", binds: binds), logger: logger)
        return try Self.objects(of: entity, rows, ordered: order != nil)
    }

    /// Rows selected as ``readObjects(of:key:exists:order:from:_:_:)`` selects them
    /// (`ordered`: with the `order` column), as the objects of `entity`.
    static func objects(of entity: SyncedTables.Entity, _ rows: [PostgresRow], ordered: Bool) throws -> PullBatch.Objects {
        let columns = entity.columns
        var objects = PullBatch.Objects(table: entity.name, columns: columns.map(\.name))
        objects.types = columns.map(\.valueType)
        objects.ids.reserveCapacity(rows.count)
        objects.rows.reserveCapacity(rows.count)
        objects.values.reserveCapacity(rows.count * columns.count)
        var places: [Int64] = []
        for row in rows {
            var cells = row.makeIterator()
            guard let idCell = cells.next(), let id = try idCell.decode(UUID?.self), let existsCell = cells.next() else { continue }
            if ordered { places.append(try cells.next()?.decode(Int64.self) ?? 0) }
            guard try existsCell.decode(Bool.self) else {
                objects.appendDeleted(id)
                continue
            }
            for column in columns {
                objects.values.append(try cells.next().map { try Self.storedValue(of: $0, as: column.valueType) } ?? .null)
            }
            objects.appendRow(id)
        }
        if ordered {
            let sorted = objects.ids.indices.sorted { places[$0] < places[$1] }
            objects.ids = sorted.map { objects.ids[$0] }
            objects.rows = sorted.map { objects.rows[$0] }
        }
        return objects
    }

    /// The columns ``objects(of:_:ordered:)`` reads: `key`, `exists`, `order` (when given),
    /// then each column of `entity`'s table `t`.
    static func selectList(of entity: SyncedTables.Entity, key: String, exists: String, order: String? = nil) -> String {
        ([key, exists] + (order.map { [$0] } ?? []) + entity.columns.map { selection(of: $0) }).joined(separator: ", ")
    }

    /// How ``readObjects(of:key:exists:order:from:_:_:)`` selects `column` of the table
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
    static func storedValue(of cell: PostgresCell, as type: ValueType) throws -> StoredValue {
        guard var bytes = cell.bytes else { return .null }
        switch (cell.dataType, bytes.readableBytes) {
        case (.int8, 8): return .integer(bytes.readInteger(as: Int64.self)!)
        case (.int4, 4): return .integer(Int64(bytes.readInteger(as: Int32.self)!))
        case (.int2, 2): return .integer(Int64(bytes.readInteger(as: Int16.self)!))
        case (.bool, 1): return .integer(bytes.readInteger(as: UInt8.self)! == 0 ? 0 : 1)
        case (.float8, 8): return .real(Double(bitPattern: bytes.readInteger(as: UInt64.self)!))
        case (.uuid, 16), (.bytea, _): return .blob(Data(bytes.readableBytesView))
        case (.timestamptz, 8): return SyncValue.dateText(microsecondsSince2000: bytes.readInteger(as: Int64.self)!).map(StoredValue.text) ?? .null
        case (.text, _), (.varchar, _): return StoredValue(SyncValue.databaseValue(of: String(buffer: bytes), as: type))
        default: return StoredValue(SyncValue.databaseValue(of: try cell.decode(String.self), as: type))
        }
    }

    // MARK: - Pull

    func answer(_ request: SyncPullRequest) async throws -> SyncPullResult {
        let batch = try await answerInBatch(request)
        return request.columnar ? batch.columnarResult : batch.result
    }

    /// The answer to `request`, each table's objects read into one array of stored values (see
    /// ``PullBatch``). The server reads the log: which entries the answer covers, and per table
    /// the objects and links they name (other devices' entries, each object or link once, in
    /// the order of its first entry), each object with its current row.
    ///
    /// For a `user` (a relay's pull), where the model declares per-user data: the objects and
    /// links outside the user's data are answered as deleted, so that those that left it leave
    /// the user's devices (the log names, with no origin, every object whose users changed
    /// because another object changed: see ``ServerAccess``), except the objects made after the
    /// device's cursor by another device, which it cannot hold.
    func answerInBatch(_ request: SyncPullRequest, user: String? = nil) async throws -> PullBatch {
        let access = schema.access
        let filters = user != nil && access.isDeclared
        return try await transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            // Entries of the device's own pushes are left out, unless it asks for them (no
            // origin is the empty text).
            let device = request.includingOwnChanges ? "" : request.device.syncText
            if let user, filters {
                try await connection.run(PostgresQuery(unsafeSQL: ServerAccess.setUser, binds: binds(user)), logger: logger)
            }
            // The entries the answer covers: the first `limit` after the cursor (in this
            // transaction's snapshot, every query below sees the same), counted by table.
            let window = try await connection.run(
                """
                SELECT tbl, count(*)::int8, max(seq) FROM \
                (SELECT seq, tbl FROM strata_sync_log WHERE seq > \(request.cursor) ORDER BY seq LIMIT \(request.limit)) e GROUP BY tbl
                """, logger: logger)
            var count: Int64 = 0
            var cursor = request.cursor
            var named: [String: Int] = [:]  // the tables the entries name, with how many each
            for (table, entries, last) in try window.decode((String, Int64, Int64).self) {
                count += entries
                cursor = max(cursor, last)
                named[table] = Int(entries)
            }
            let range = "seq > \(request.cursor) AND seq <= \(cursor) AND origin IS DISTINCT FROM $1"
            let leavesOutNew = filters ? try await self.marksInserts(connection) : false
            var batch: [PullBatch.Objects] = []
            for entity in schema.tables.entities {
                guard named[entity.name] != nil else { continue }
                var binds = PostgresBindings()
                binds.append(device)
                binds.append(entity.name)
                let present = "t.\(quoted(entity.primaryKey)) IS NOT NULL"
                let exists = filters ? "(\(present) AND \(access.visible(entity.name, "t")))" : "(\(present))"
                // For a user: an object outside the user's data that another device (or
                // none) made after the cursor is left out, not answered as deleted: the
                // device's state is the server's at its cursor (and its own changes), so it
                // cannot hold it. Made after the cursor: the first entry the window has of it
                // is its insert (an object that existed at the cursor and was made again has a
                // deletion first). Without this, every pull would carry every other user's new
                // objects since the cursor.
                var unseen = ""
                if leavesOutNew {
                    binds.append(request.device.syncText)
                    unseen = " WHERE NOT e.strata_made_after OR \(exists)"
                }
                let made = leavesOutNew
                    ? ", (array_agg(created AND origin IS DISTINCT FROM $3 ORDER BY seq))[1] AS strata_made_after" : ""
                let objects = try await readObjects(
                    of: entity, key: "e.strata_id", exists: exists,
                    order: "e.strata_seq",
                    from: """
                        (SELECT id AS strata_id, min(seq) AS strata_seq\(made) FROM strata_sync_log \
                        WHERE \(range) AND tbl = $2 AND id IS NOT NULL GROUP BY id) e \
                        LEFT JOIN \(quoted(entity.name)) t ON t.\(quoted(entity.primaryKey)) = e.strata_id\(unseen)
                        """, binds, connection)
                if !objects.ids.isEmpty { batch.append(objects) }
            }
            var links: [SyncChange] = []
            for join in schema.tables.joins where named[join.name] != nil {
                var binds = PostgresBindings()
                binds.append(device)
                binds.append(join.name)
                let column = quoted(join.column), inverse = quoted(join.inverseColumn)
                let rows = try await connection.run(
                    PostgresQuery(unsafeSQL: """
                        SELECT e.a, e.b, EXISTS (SELECT 1 FROM \(quoted(join.name)) j WHERE j.\(column) = e.a AND j.\(inverse) = e.b) \
                        \(filters ? "AND \(access.linkVisible(join, a: "e.a", b: "e.b"))" : "") \
                        FROM (SELECT a, b, min(seq) AS strata_seq FROM strata_sync_log \
                        WHERE \(range) AND tbl = $2 AND id IS NULL AND a IS NOT NULL AND b IS NOT NULL GROUP BY a, b) e \
                        ORDER BY e.strata_seq
                        """, binds: binds), logger: logger)
                for (a, b, exists) in try rows.decode((UUID, UUID, Bool).self) {
                    links.append(SyncChange(kind: exists ? .link : .unlink, table: join.name, link: [join.column: a, join.inverseColumn: b]))
                }
            }
            return PullBatch(objects: batch, links: links, cursor: cursor, hasMore: count == request.limit)
        }
    }
}
