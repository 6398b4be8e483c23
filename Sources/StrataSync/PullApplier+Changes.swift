import Foundation
import GRDB
import GRDBSQLite
import Strata

/// The changes of a pull, one at a time: objects, links, and the answers to pushes (see
/// ``PullApplier``).
extension PullApplier {
    // MARK: - Objects

    /// Inserts or updates an object with the server's values, keeping the columns changed
    /// here and not pushed yet.
    func upsert(_ change: SyncChange, _ db: Database) throws {
        guard let entity = tables.entity(named: change.table), let id = change.id else { return }
        let uuid = id.syncText
        let server = change.values.filter { entity.column(named: $0.key) != nil }
        let record = try rows.record(uuid, db)  // the object, or its tombstone
        if let record, !record.isDeleted {
            let rowid = record.rowid
            var wanted = server
            var pending: Set<String> = []  // the columns changed here, not pushed yet
            var changed: [String: String?] = [:]  // their agreed values (and those changed back)
            if record.isAgreed {
                let current = try rows.values(entity, [rowid], db)[rowid] ?? [:]
                changed = try rows.changedColumns(entity, rowid, db)
                for (column, agreed) in changed {
                    guard let value = current[column], value != agreed else { continue }
                    wanted[column] = value
                    pending.insert(column)
                }
                wanted = wanted.filter { current[$0.key] != $0.value }
            } else {
                wanted = [:]  // pushed, answer lost: the push under way holds the same values
            }
            try attempt(change, db) {
                var base = server
                if !wanted.isEmpty {
                    let (names, values, missing) = try rows.databaseValues(entity, wanted, db)
                    let sets = names.map { "\(quoted($0)) = ?" }.joined(separator: ", ")
                    try db.cachedStatement(sql: "UPDATE \(quoted(entity.name)) SET \(sets) WHERE \(quoted(entity.primaryKey)) = ?")
                        .execute(arguments: StatementArguments(values + [rowid.databaseValue]))
                    try keepPositions(entity, rowid, server: server, written: wanted, pending: pending, db)
                    try recordMissing(missing, of: change, base: &base, db)
                }
                // An agreed object without bases stays so (what the pull wrote is agreed).
                if !record.isAgreed || !changed.isEmpty {
                    try rows.agreeAfterPull(entity, rowid, server: base, keeping: pending, db)
                }
            }
        } else if record?.isDeleted == true {
            return  // deleted here, not pushed yet: the deletion wins
        } else {
            try attempt(change, db) { try insert(change, entity, uuid, server, db) }
        }
    }

    /// Inserts an object the server sent and this store does not know, agreed (what the store
    /// writes into it is the server's as far as the sync is concerned).
    func insert(_ change: SyncChange, _ entity: SyncedTables.Entity, _ uuid: String, _ values: [String: String?], _ db: Database) throws {
        let key = quoted(entity.primaryKey), table = quoted(entity.name)
        let rowid = (try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(\(key)), 0) + 1 FROM \(table)")) ?? 1)
        let (names, databaseValues, missing) = try rows.databaseValues(entity, values, db)
        var base = values
        try recordMissing(missing, of: change, base: &base, db)
        try rows.insertAgreed(uuid, entity.name, rowid, db)
        let columns = ([key] + names.map(quoted)).joined(separator: ", ")
        let marks = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
        try db.cachedStatement(sql: "INSERT INTO \(table) (\(columns)) VALUES (\(marks))")
            .execute(arguments: StatementArguments([rowid.databaseValue] + databaseValues))
    }

    /// A pulled object's to-ones whose destinations this store does not hold (refused here
    /// by a rule, or deleted here and not pushed yet) were written as nil: their base is nil
    /// too, so that nil is never taken for a change of this device's and pushed, and the
    /// change is recorded as not applied here, so that the next pull reads the server again
    /// from the start and brings the destination and the reference together.
    func recordMissing(_ missing: [String], of change: SyncChange, base: inout [String: String?], _ db: Database) throws {
        guard !missing.isEmpty else { return }
        for column in missing { base[column] = .some(nil) }
        try SyncConflict.record(
            .notAppliedHere, table: change.table, object: change.id,
            reason: "the destination of \(missing.joined(separator: ", ")) is not in this store", local: nil, server: change.values, db)
    }

    /// Writes the server's position of each ordered to-one of the object `rowid` that the
    /// store's triggers changed while the pull wrote its values (a parent pulled with a
    /// position equal to the one the row had here reads to them as "moved without a
    /// position": they place it last). What the sync writes must be the server's, or it would
    /// differ from the server for good. `written`: the values the pull wrote; `pending`: the
    /// columns changed here and not pushed yet (kept).
    func keepPositions(
        _ entity: SyncedTables.Entity, _ rowid: Int64, server: [String: String?], written: [String: String?], pending: Set<String>,
        _ db: Database
    ) throws {
        for (offset, column) in entity.columns.enumerated() where column.kind == .position && offset > 0 {
            let reference = entity.columns[offset - 1].name
            guard written.keys.contains(reference), !pending.contains(column.name), let wanted = server[column.name] else { continue }
            let value = SyncValue.databaseValue(of: wanted, as: .int)
            try db.cachedStatement(
                sql: "UPDATE \(quoted(entity.name)) SET \(quoted(column.name)) = ? WHERE \(quoted(entity.primaryKey)) = ? AND \(quoted(column.name)) IS NOT ?"
            ).execute(arguments: [value, rowid, value])
        }
    }

    func delete(_ change: SyncChange, _ db: Database) throws {
        guard let entity = tables.entity(named: change.table), let id = change.id else { return }
        let uuid = id.syncText
        guard let object = try rows.object(uuid, db) else {
            try rows.forget(uuid, db)  // deleted here too
            return
        }
        let current = try rows.values(entity, [object.rowid], db)[object.rowid]
        let changed = object.isAgreed ? try rows.changedColumns(entity, object.rowid, db) : [:]
        if let current, changed.contains(where: { current[$0.key] != nil && current[$0.key]! != $0.value }) {
            try SyncConflict.record(
                .deletedOnServer, table: entity.name, object: id,
                reason: "changed here and deleted on the server: the deletion wins", local: current, server: nil, db)
        }
        try attempt(change, db) {
            try db.execute(
                sql: "DELETE FROM \(quoted(entity.name)) WHERE \(quoted(entity.primaryKey)) = ?", arguments: [object.rowid])
            try rows.forget(uuid, db)
        }
    }

    /// A reference changed here and not pushed yet that leads to an object the server
    /// deleted goes back to the server's: the server never had the object there, so a
    /// delete rule here must not take it (or clear its reference) with the deleted one.
    func undoPendingReferences(to deletes: [SyncChange], _ db: Database) throws {
        var doomed: [String: [Int64: String]] = [:]  // entity → local key → sync id
        for change in deletes {
            guard let uuid = change.id?.syncText, let object = try rows.object(uuid, db) else { continue }
            doomed[change.table, default: [:]][object.rowid] = uuid
        }
        guard !doomed.isEmpty else { return }
        for entity in tables.entities {
            for (column, destination) in entity.references {
                guard let targets = doomed[destination] else { continue }
                let list = targets.keys.map(String.init).joined(separator: ",")
                let found = try Row.fetchAll(db, sql: """
                    SELECT \(quoted(entity.primaryKey)), \(quoted(column)) FROM \(quoted(entity.name)) \
                    WHERE \(quoted(column)) IN (\(list))
                    """)
                for row in found {
                    let rowid: Int64 = row[0], target: Int64 = row[1]
                    guard let (uuid, isAgreed) = try rows.object(entity.name, rowid, db), isAgreed,
                          let agreed = try rows.changedColumns(entity, rowid, db)[column], agreed != targets[target]
                    else { continue }
                    let restored: DatabaseValue = try agreed.flatMap { try rows.object($0, db)?.rowid.databaseValue } ?? .null
                    // The server's destination is not here either: a required reference
                    // cannot go back, and the delete rule takes the object as before.
                    if restored.isNull && entity.column(named: column)?.isOptional != true { continue }
                    let local = try rows.values(entity, [rowid], db)[rowid]
                    let base = try local.map { try rows.base(entity, rowid, current: $0, db) }
                    try db.execute(
                        sql: "UPDATE \(quoted(entity.name)) SET \(quoted(column)) = ? WHERE \(quoted(entity.primaryKey)) = ?",
                        arguments: [restored, rowid])
                    try rows.agree(entity, rowid, on: [column: agreed], db)
                    try SyncConflict.record(
                        .deletedOnServer, table: entity.name, object: SyncValue.uuid(uuid),
                        reason: "\(column) was changed here to an object the server deleted: it goes back to the server's",
                        local: local, server: base, db)
                }
            }
        }
    }

    // MARK: - Links

    func applyLink(_ change: SyncChange, _ db: Database) throws {
        guard let join = tables.join(named: change.table), let a = change.link?[join.column]?.syncText,
              let b = change.link?[join.inverseColumn]?.syncText
        else { return }
        let linked = change.kind == .link
        // An object missing here (deleted here and not pushed yet, or refused by a rule here:
        // then the server is read again) leaves the link as it was.
        guard let left = try rows.object(a, db), let right = try rows.object(b, db) else { return }
        let here = try rows.linkExists(join, left.rowid, right.rowid, db)
        let agreed = try rows.isAgreedLink(join, a, b, db)
        if here != agreed {
            // Changed here, not pushed yet: this device's change is pushed next and wins.
            try rows.setAgreedLink(join.name, a, b, linked, db)
            return
        }
        try attempt(change, db) {
            if linked && !here {
                try db.execute(
                    sql: "INSERT INTO \(quoted(join.name)) (\(quoted(join.column)), \(quoted(join.inverseColumn))) VALUES (?, ?)",
                    arguments: [left.rowid, right.rowid])
            } else if !linked && here {
                try db.execute(
                    sql: "DELETE FROM \(quoted(join.name)) WHERE \(quoted(join.column)) = ? AND \(quoted(join.inverseColumn)) = ?",
                    arguments: [left.rowid, right.rowid])
            }
            try rows.setAgreedLink(join.name, a, b, linked, db)
        }
    }

    /// Runs one change in a savepoint; when a rule of this store refuses it, records the
    /// conflict and goes on.
    func attempt(_ change: SyncChange, _ db: Database, _ body: () throws -> Void) throws {
        guard isolatesChanges else { return try body() }
        do {
            try db.inSavepoint {
                try body()
                return .commit
            }
        } catch let error as DatabaseError where error.resultCode != .SQLITE_BUSY && error.resultCode != .SQLITE_IOERR {
            try SyncConflict.record(
                .notAppliedHere, table: change.table, object: change.id, reason: "\(error)", local: nil, server: change.values, db)
        } catch let error as any StrataError {
            try SyncConflict.record(
                .notAppliedHere, table: change.table, object: change.id, reason: "\(error)", local: nil, server: change.values, db)
        }
    }

    /// An error that ``attempt(_:_:_:)`` records as a change not applied here.
    static func isRefusal(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError { return error.resultCode != .SQLITE_BUSY && error.resultCode != .SQLITE_IOERR }
        return error is any StrataError
    }

    // MARK: - Answers to pushes

    /// The server applied `change`: the object's base (or the link's agreed state) moves
    /// to what was pushed. `current`: whether the object still holds the values pushed (the
    /// push is recorded in the transaction that read them), so that they need no reading.
    func applied(_ change: SyncChange, current: Bool = false, _ db: Database) throws {
        if let join = tables.join(named: change.table) {
            guard let a = change.link?[join.column], let b = change.link?[join.inverseColumn] else { return }
            try rows.setAgreedLink(join.name, a.syncText, b.syncText, change.kind == .link, db)
            return
        }
        guard let uuid = change.id?.syncText else { return }
        switch change.kind {
        case .insert, .update:
            guard let entity = tables.entity(named: change.table), let object = try rows.object(uuid, db) else { return }
            try rows.agree(entity, object.rowid, on: change.values, current: current ? change.values : nil, db)
        case .delete:
            try rows.forget(uuid, db)
        case .link, .unlink:
            break
        }
    }

    /// The server refused a change: record it, and take the server's state of the object.
    func takeServerState(after refusal: SyncRefusal, _ db: Database) throws {
        let change = refusal.change
        if let join = tables.join(named: change.table) {
            try SyncConflict.record(
                .refusedByServer, table: change.table, object: nil, reason: refusal.reason,
                local: change.link.map { $0.mapValues { Optional($0.syncText) } }, server: nil, db)
            guard let a = change.link?[join.column]?.syncText, let b = change.link?[join.inverseColumn]?.syncText
            else { return }
            if let left = try rows.object(a, db), let right = try rows.object(b, db) {
                if change.kind == .link {
                    try db.execute(
                        sql: "DELETE FROM \(quoted(join.name)) WHERE \(quoted(join.column)) = ? AND \(quoted(join.inverseColumn)) = ?",
                        arguments: [left.rowid, right.rowid])
                } else if try !rows.linkExists(join, left.rowid, right.rowid, db) {
                    // An unlink refused (a count rule): the link is the server's, and comes back.
                    try db.execute(
                        sql: "INSERT INTO \(quoted(join.name)) (\(quoted(join.column)), \(quoted(join.inverseColumn))) VALUES (?, ?)",
                        arguments: [left.rowid, right.rowid])
                }
            }
            try rows.setAgreedLink(join.name, a, b, change.kind != .link, db)
            return
        }
        guard let entity = tables.entity(named: change.table), let id = change.id else { return }
        let uuid = id.syncText
        let object = try rows.object(uuid, db)
        let local = try object.flatMap { try rows.values(entity, [$0.rowid], db)[$0.rowid] } ?? change.values
        try SyncConflict.record(
            .refusedByServer, table: entity.name, object: id, reason: refusal.reason, local: local,
            server: refusal.serverValues, db)
        if let server = refusal.serverValues {
            if let object {
                let (names, values, _) = try rows.databaseValues(entity, server, db)
                let sets = names.map { "\(quoted($0)) = ?" }.joined(separator: ", ")
                try attempt(change, db) {
                    try db.execute(
                        sql: "UPDATE \(quoted(entity.name)) SET \(sets) WHERE \(quoted(entity.primaryKey)) = ?",
                        arguments: StatementArguments(values + [object.rowid.databaseValue]))
                    try rows.agree(entity, object.rowid, on: server, db)
                }
            } else {
                // A deletion refused (a `deny` rule on the server): the object comes back,
                // and so must whatever the server holds that refers to it.
                try rows.forget(uuid, db)
                try attempt(change, db) { try insert(change, entity, uuid, server, db) }
                try LocalSyncState.set("cursor", "0", db)
            }
        } else if let object {
            // Objects moved here into this one, and known to the server elsewhere, stay.
            try undoPendingReferences(to: [SyncChange(kind: .delete, table: entity.name, id: id)], db)
            try attempt(change, db) {
                try db.execute(
                    sql: "DELETE FROM \(quoted(entity.name)) WHERE \(quoted(entity.primaryKey)) = ?", arguments: [object.rowid])
                try rows.forget(uuid, db)
            }
        } else {
            try rows.forget(uuid, db)
        }
    }
}
