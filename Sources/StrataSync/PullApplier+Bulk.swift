import Foundation
import GRDB
import GRDBSQLite
import Strata

/// A pull's objects that this store does not know at all (an initial sync, inserts made on
/// the server), written in bulk: their sync ids, then their rows, thousands of rows
/// per statement, in the order and with the local keys that ``PullApplier/upsert(_:_:)``
/// would give them one by one, so that the file ends the same.
///
/// What needs no database (the order, each row's SQLite values, which references
/// lead within the batch) is prepared by ``PullApplier/prepare(_:)`` before the store's
/// writer is reached (for the next batch, while this one is written); the writer gives the
/// local keys, looks up the destinations outside the batch and runs the statements.
extension PullApplier {
    /// A batch's objects prepared for the bulk insert, in the order they are applied.
    struct NewObjects: Sendable, Equatable {
        /// A reference of one object's row: where its value goes in ``values``, and its
        /// destination: an object of the batch applied before it (or itself), by position,
        /// or else its sync id, looked up in the store (`target`: empty with a `position`).
        struct Reference: Sendable, Equatable {
            var value: Int
            var position: Int?
            var target: String
        }

        /// Per object: its sync id's 16 bytes, its entity (an index in `tables.entities`), the
        /// columns the server sent (bits by column offset), and where its values start in
        /// ``values``.
        var uuids: [BulkValue] = []
        var entities: [Int] = []
        var present: [UInt64] = []
        var starts: [Int] = []
        /// The present columns' values of every object, one object after the other, in the
        /// entity's column order; a reference's is NULL here, and set by ``references``.
        var values: [BulkValue] = []
        /// Every reference to a destination (not NULL), in order.
        var references: [Reference] = []
        /// The bytes of every text and blob above, one after the other: the writer binds them
        /// where they are (no string or data value per cell to retain and release, and no
        /// copy by SQLite), and a batch's values are one allocation instead of one per cell.
        var bytes: [UInt8] = []
        var count: Int { uuids.count }

        /// `value`, its text or blob appended to ``bytes``.
        mutating func append(_ value: StoredValue) -> BulkValue {
            switch value {
            case .null: return .null
            case .integer(let int): return .integer(int)
            case .real(let double): return BulkValue(kind: .real, payload: Int64(bitPattern: double.bitPattern))
            case .text(var string): return string.withUTF8 { append($0, as: .text) }
            case .blob(let data):
                // As GRDB binds data (`sqlite3_bind_blob` of the bytes' address): bytes without an
                // address bind NULL; empty data with one, an empty blob.
                return data.withUnsafeBytes { bytes in
                    bytes.baseAddress == nil ? .null : append(bytes.bindMemory(to: UInt8.self), as: .blob)
                }
            }
        }

        /// The 16 bytes of `id` (as `stratasync_ids.uuid` holds them) appended to ``bytes``.
        mutating func appendBytes(of id: UUID) -> BulkValue {
            withUnsafeBytes(of: id.uuid) { append($0.bindMemory(to: UInt8.self), as: .blob) }
        }

        /// `bytes` appended to ``bytes`` as a text or a blob. A text's length stops at its first
        /// NUL, as GRDB binds a string (through a C string).
        mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, as kind: BulkValue.Kind) -> BulkValue {
            let start = self.bytes.count
            self.bytes.append(contentsOf: bytes)
            var length = bytes.count
            if kind == .text, let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) {
                length = UnsafeRawPointer(nul) - UnsafeRawPointer(base)
            }
            return BulkValue(kind: kind, payload: Int64(start), length: length)
        }
    }

    /// A value of ``NewObjects``: a number, or where its text or blob is in
    /// ``NewObjects/bytes``.
    struct BulkValue: Sendable, Equatable {
        enum Kind: UInt8, Sendable { case null, integer, real, text, blob }
        var kind: Kind
        /// The integer, the real's bits, or where the text's or blob's bytes start.
        var payload: Int64
        /// The text's or blob's length in bytes.
        var length: Int = 0

        static let null = BulkValue(kind: .null, payload: 0)
        static func integer(_ value: Int64) -> BulkValue { BulkValue(kind: .integer, payload: value) }
    }

    /// The batch's upserts prepared for the bulk insert (the same for any store: no database
    /// is read), when every one of them can go that way (a known entity of at most 64
    /// columns, each object once); nil otherwise, and then the batch goes change by change.
    /// Whether the store knows none of them is for ``isNew(_:_:)`` to say.
    func prepare(_ changes: [SyncChange]) -> NewObjects? {
        prepare(PullBatch(SyncPullResult(changes: changes, cursor: 0, hasMore: false)))
    }

    /// ``prepare(_:)-([SyncChange])`` of a batch: straight from the server's rows when the
    /// batch holds them (no change, no dictionary per object).
    func prepare(_ batch: PullBatch) -> NewObjects? {
        guard let groups = batch.insertedObjects(tables) else { return nil }
        // Per table of the batch: its entity here, and per column of the entity, where the
        // batch's rows hold it (nil: the server did not send it, and it is left out, as
        // `LocalSyncState.databaseValues` leaves it out).
        var entityIndex: [String: Int] = [:]
        for (index, entity) in tables.entities.enumerated() { entityIndex[entity.name] = index }
        var groupEntity: [Int] = []
        var groupColumns: [[Int?]] = []
        // Per table of the batch, per column of the entity: whether the batch's rows hold its
        // values decoded as the store keeps a value of the column's type here.
        var groupTyped: [[Bool]] = []
        var total = 0
        for group in groups {
            guard let index = entityIndex[group.table], tables.entities[index].columns.count <= BulkLayout.maxColumns else { return nil }
            var offsets: [String: Int] = [:]
            for (offset, name) in group.columns.enumerated() { offsets[name] = offset }
            groupEntity.append(index)
            groupColumns.append(tables.entities[index].columns.map { offsets[$0.name] })
            groupTyped.append(tables.entities[index].columns.map { column in
                guard !group.values.isEmpty, let offset = offsets[column.name] else { return false }
                return group.types[offset] == column.valueType
            })
            total += group.rowCount
        }
        let layouts = tables.entities.map(BulkLayout.init)
        // Every object of the batch by a number of its own (its table's first number plus its
        // row), and by its sync id; the same object twice: the second would be an update of
        // the first, which the bulk insert does not do.
        var ranges: [Range<Int>] = []  // per table of the batch, its objects' numbers
        var objects: [(group: Int, row: Int, id: UUID)] = []
        objects.reserveCapacity(total)
        var byID: [UUID: Int] = [:]
        byID.reserveCapacity(total)
        for (g, group) in groups.enumerated() {
            let first = objects.count
            for (index, id) in group.ids.enumerated() where group.rows[index] >= 0 {
                guard byID.updateValue(objects.count, forKey: id) == nil else { return nil }
                objects.append((g, group.rows[index], id))
            }
            ranges.append(first..<objects.count)
        }
        guard !objects.isEmpty else { return nil }
        // Where column `offset` (of the entity) of an object is in its table's cells; nil when
        // its row does not hold it (the server has no such column, or a change did not send it).
        func cell(_ object: Int, _ offset: Int) -> Int? {
            let (g, row, _) = objects[object]
            guard let column = groupColumns[g][offset] else { return nil }
            let cell = row * groups[g].columns.count + column
            if groups[g].values.isEmpty, groups[g].texts[cell] == nil { return nil }
            return cell
        }
        // The sync id that reference column `offset` of an object holds.
        func destination(_ object: Int, _ offset: Int) -> UUID? {
            guard let cell = cell(object, offset) else { return nil }
            let group = groups[objects[object].group]
            if !group.values.isEmpty, case .blob(let data) = group.values[cell], data.count == 16 {
                return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            }
            return (group.text(at: cell) ?? nil).flatMap(SyncValue.uuid)
        }
        // The order: entity by entity, each object after those of the batch its references
        // lead to (as `ordered(_:)` orders changes); each reference's destination in the
        // batch resolved once.
        var destinations: [Int?] = []
        let referenceOffsets: [[Int]] = tables.entities.map { entity in
            entity.columns.indices.filter { if case .reference = entity.columns[$0].kind { true } else { false } }
        }
        var destinationStarts: [Int] = []  // per object, where its destinations start in `destinations`
        destinationStarts.reserveCapacity(objects.count + 1)
        destinations.reserveCapacity(objects.count)
        for object in objects.indices {
            destinationStarts.append(destinations.count)
            for offset in referenceOffsets[groupEntity[objects[object].group]] {
                destinations.append(destination(object, offset).flatMap { byID[$0] })
            }
        }
        destinationStarts.append(destinations.count)
        var visited = [Bool](repeating: false, count: objects.count)
        var order: [Int] = []
        order.reserveCapacity(objects.count)
        func visit(_ object: Int) {
            guard !visited[object] else { return }
            visited[object] = true
            for slot in destinationStarts[object]..<destinationStarts[object + 1] {
                if let destination = destinations[slot] { visit(destination) }
            }
            order.append(object)
        }
        for name in tables.dependencyOrder {
            for g in groups.indices where groups[g].table == name {
                for object in ranges[g] { visit(object) }
            }
        }

        var new = NewObjects()
        new.uuids.reserveCapacity(objects.count)
        new.entities.reserveCapacity(objects.count)
        new.present.reserveCapacity(objects.count)
        new.starts.reserveCapacity(objects.count + 1)
        var positions = [Int?](repeating: nil, count: objects.count)  // per object, its position once placed
        var cells: [Int?] = []
        for object in order {
            let g = objects[object].group, group = groups[g]
            let index = groupEntity[g]
            let layout = layouts[index]
            positions[object] = new.count
            // The row's values, in the entity's column order: from the values the server's rows
            // hold (of the column's type here), else from their wire text.
            var present: UInt64 = 0
            cells.removeAll(keepingCapacity: true)
            for offset in layout.columns.indices {
                let cell = cell(object, offset)
                if cell != nil { present |= 1 << UInt64(offset) }
                cells.append(cell)
            }
            let decoded = group.values.isEmpty ? nil : group.values
            new.starts.append(new.values.count)
            var slot = destinationStarts[object]
            for (offset, column) in layout.columns.enumerated() {
                let isReference: Bool
                if case .reference = column.kind { isReference = true } else { isReference = false }
                defer { if isReference { slot += 1 } }
                guard let cell = cells[offset] else { continue }
                let typed = groupTyped[g][offset]
                if isReference {
                    // As `LocalSyncState.rowid`: an object of this batch applied before this one (or
                    // this one), else one the store knows (by its sync id's text).
                    let position = destinations[slot].flatMap { positions[$0] }
                    let text = typed && position != nil ? nil : group.text(at: cell) ?? nil
                    if typed ? !decoded![cell].isNull : text != nil {
                        new.references.append(NewObjects.Reference(value: new.values.count, position: position, target: position == nil ? text ?? "" : ""))
                    }
                    new.values.append(.null)
                } else if typed, let decoded {
                    let value = new.append(decoded[cell])
                    new.values.append(value)
                } else {
                    let text = group.text(at: cell) ?? nil
                    let value = new.append(StoredValue(SyncValue.databaseValue(of: text, as: column.valueType)))
                    new.values.append(value)
                }
            }
            new.uuids.append(new.appendBytes(of: objects[object].id))
            new.entities.append(index)
            new.present.append(present)
        }
        new.starts.append(new.values.count)
        return new
    }

    /// Whether this store has never known any of the objects of `new` (no sync id, no
    /// tombstone): then they go in bulk.
    func isNew(_ new: NewObjects, _ db: Database) throws -> Bool {
        let anyKnown = try rows.hasObjects(db)
        guard anyKnown else { return true }
        return try new.bytes.withUnsafeBytes { bytes in
            let ids = new.uuids
            for start in stride(from: 0, to: ids.count, by: 500) {
                let count = min(500, ids.count - start)
                let sql = LocalSyncState.anyKnownSQL(count)
                let statement = count == 500 ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
                statement.setUncheckedArguments(StatementArguments())
                defer { sqlite3_clear_bindings(statement.sqliteStatement) }  // they point into `bytes`
                var index: CInt = 1
                for id in ids[start..<(start + count)] { try Self.bind(id, bytes.baseAddress, to: statement, at: &index) }
                if try Bool.fetchOne(statement) == true { return false }
            }
            return true
        }
    }

    /// Inserts `new` (from ``prepare(_:)``, known new by ``isNew(_:_:)``): what
    /// ``insert(_:_:_:_:)`` does for each, in the same order, with the same local keys, sync
    /// ids and rows. The statements are bound straight from `new`'s arrays.
    func insertNew(_ new: NewObjects, _ db: Database) throws {
        try new.bytes.withUnsafeBytes { try insertNew(new, bytes: $0.baseAddress, db) }
    }

    /// ``insertNew(_:_:)``, with `new`'s ``NewObjects/bytes`` at `bytes` while the statements
    /// run (their texts and blobs are bound where they are).
    private func insertNew(_ new: NewObjects, bytes: UnsafeRawPointer?, _ db: Database) throws {
        let entities = tables.entities
        var nextKey = [Int64?](repeating: nil, count: entities.count)  // per entity, its next local key
        var keys: [Int64] = []  // per position, the object's local key
        keys.reserveCapacity(new.count)
        var targets: [Int64?] = []  // per reference, its destination's local key
        targets.reserveCapacity(new.references.count)
        var looked: [String: Int64?] = [:]  // sync id → local key, of objects known before
        // Runs of objects of one table with the same columns: their first position.
        var runs: [Int] = []
        var reference = 0  // the next of `new.references`
        for position in 0..<new.count {
            let index = new.entities[position], entity = entities[index]
            let key: Int64
            if let next = nextKey[index] {
                key = next
            } else {
                key = try Int64.fetchOne(
                    db, sql: "SELECT COALESCE(MAX(\(quoted(entity.primaryKey))), 0) + 1 FROM \(quoted(entity.name))") ?? 1
            }
            nextKey[index] = key + 1
            keys.append(key)
            if position == 0 || new.entities[position - 1] != index || new.present[position - 1] != new.present[position] {
                runs.append(position)
            }
            // As `LocalSyncState.rowid`: an object of this batch applied before this one (or this
            // one), else a live object the store knows.
            while reference < new.references.count, new.references[reference].value < new.starts[position + 1] {
                let destination = new.references[reference]
                reference += 1
                if let position = destination.position {
                    targets.append(keys[position])
                } else if let before = looked[destination.target] {
                    targets.append(before)
                } else {
                    let target = try rows.rowid(destination.target, db)
                    looked[destination.target] = target
                    // A destination this store does not hold: the batch goes change by change,
                    // which records it (see `recordMissing`).
                    guard target != nil else { throw BulkInsertRefused(error: MissingDestination(syncID: destination.target)) }
                    targets.append(target)
                }
            }
        }
        runs.append(new.count)

        // The sync ids first (the identity trigger of each row then finds its id and
        // adds none), then each run of rows of one table with the same columns.
        // `OR FAIL`: the table has no triggers, so that SQLite then keeps no statement journal
        // for these statements (a failure leaves the rows before it, and the whole transaction
        // is rolled back: see `apply`). The sync ids are random: each statement changes pages
        // all over their index, which SQLite otherwise copied into that journal first.
        let ids = LocalSyncState.bulkIDs
        let numbered = try LocalSyncState.tableNumbers(db)
        let numbers = entities.map { numbered[$0.name] ?? 0 }
        try insertRows(into: ids.table, columns: ids.columns, rows: 0..<new.count, orFail: true, db) { position, statement, index in
            try Self.bind(.integer(LocalSyncState.packedKey(keys[position], numbers[new.entities[position]])), bytes, to: statement, at: &index)
            try Self.bind(new.uuids[position], bytes, to: statement, at: &index)
            try Self.bind(.integer(ids.state), bytes, to: statement, at: &index)
        }
        reference = 0
        for (first, end) in zip(runs, runs.dropFirst()) {
            let entity = entities[new.entities[first]], present = new.present[first]
            let names = entity.columns.indices.filter { present & (1 << UInt64($0)) != 0 }.map { entity.columns[$0].name }
            try insertRows(into: entity.name, columns: [entity.primaryKey] + names, rows: first..<end, db) { position, statement, index in
                try Self.bind(.integer(keys[position]), bytes, to: statement, at: &index)
                for value in new.starts[position]..<new.starts[position + 1] {
                    if reference < new.references.count, new.references[reference].value == value {
                        try Self.bind(targets[reference].map(BulkValue.integer) ?? .null, bytes, to: statement, at: &index)
                        reference += 1
                    } else {
                        try Self.bind(new.values[value], bytes, to: statement, at: &index)
                    }
                }
            }
        }
    }

    /// How many values one statement of the bulk insert binds on `db`: ``SyncOptions``'s
    /// `bulkStatementValues`, or fewer when the connection allows fewer
    /// (`SQLITE_LIMIT_VARIABLE_NUMBER`).
    func valuesPerStatement(_ db: Database) -> Int {
        max(1, min(options.bulkStatementValues, db.maximumStatementArgumentCount))
    }

    /// `INSERT INTO table (columns) VALUES (…), (…), …` of `rows`, each bound by `bindRow`
    /// (its `columns.count` values, from the parameter index it is given), at most
    /// ``valuesPerStatement(_:)`` values per statement.
    private func insertRows(
        into table: String, columns: [String], rows: Range<Int>, orFail: Bool = false, _ db: Database,
        bindRow: (Int, Statement, inout CInt) throws -> Void
    ) throws {
        let width = columns.count
        guard width > 0, !rows.isEmpty else { return }
        let perStatement = max(1, valuesPerStatement(db) / width)
        let head = "INSERT\(orFail ? " OR FAIL" : "") INTO \(quoted(table)) (\(columns.map(quoted).joined(separator: ", "))) VALUES "
        let row = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        func sql(_ rows: Int) -> String { head + Array(repeating: row, count: rows).joined(separator: ", ") }
        let full = rows.count >= perStatement ? sql(perStatement) : ""
        var start = rows.lowerBound
        while start < rows.upperBound {
            let n = min(perStatement, rows.upperBound - start)
            let statement = n == perStatement ? try db.cachedStatement(sql: full) : try db.makeStatement(sql: sql(n))
            // Resets the statement (a cached statement that failed is dropped from GRDB's cache,
            // so this one has not) and clears its bindings; GRDB then runs it as it is bound.
            statement.setUncheckedArguments(StatementArguments())
            // The values are bound where the batch keeps them: no statement keeps them past its run.
            defer { sqlite3_clear_bindings(statement.sqliteStatement) }
            var index: CInt = 1
            for position in start..<(start + n) { try bindRow(position, statement, &index) }
            try statement.execute()
            start += n
        }
    }

    /// Binds `value` (its bytes, if any, at `bytes` + its payload) to parameter `index` of
    /// `statement` as GRDB binds the same value, and moves `index` on. Texts and blobs are
    /// bound where they are: they must stay there until the statement's bindings are cleared.
    static func bind(_ value: BulkValue, _ bytes: UnsafeRawPointer?, to statement: Statement, at index: inout CInt) throws {
        let handle = statement.sqliteStatement
        let code: CInt
        switch value.kind {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer: code = sqlite3_bind_int64(handle, index, value.payload)
        case .real: code = sqlite3_bind_double(handle, index, Double(bitPattern: UInt64(bitPattern: value.payload)))
        case .text:
            // An empty text is copied from "" (a null pointer would bind NULL).
            if value.length > 0, let bytes {
                code = sqlite3_bind_text(handle, index, bytes.assumingMemoryBound(to: CChar.self) + Int(value.payload), CInt(value.length), nil)
            } else {
                code = sqlite3_bind_text(handle, index, "", 0, transient)
            }
        case .blob:
            // An empty blob, not NULL, as GRDB binds data that has an address.
            if value.length > 0, let bytes {
                code = sqlite3_bind_blob(handle, index, bytes + Int(value.payload), CInt(value.length), nil)
            } else {
                code = sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
        guard code == 0 else { throw DatabaseError(resultCode: ResultCode(rawValue: code), sql: statement.sql) }
        index += 1
    }

    /// SQLite's `SQLITE_TRANSIENT`: it copies the value before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}

/// An entity's columns as the bulk insert writes them.
struct BulkLayout {
    /// At most 64 (``PullApplier/prepare(_:)`` leaves wider entities to the change-by-change way).
    static let maxColumns = 64

    let entity: SyncedTables.Entity
    var columns: [SyncedTables.Column] { entity.columns }

    init(_ entity: SyncedTables.Entity) {
        self.entity = entity
    }
}
