import Foundation
import GRDB
import GRDBSQLite

/// Everything a results request reads from the database, and nothing it remembers: the
/// items with the keys that place them, the ids of items that depend on changed related
/// rows, and the section objects of an entity-sectioned request. Stateless and `Sendable`,
/// like the fetch half of GRDB's `ValueObservation`; ``ResultsEngine`` keeps the state.
///
/// Reads by id go through ``forEachChunk(of:_:)``, at most ``chunkSize`` ids a statement,
/// below SQLite's limit on bound parameters.
struct ResultsFetcher<Item: StrataEntity, Section: Hashable & Sendable>: Sendable {
    let plan: ResultsQueryPlan
    /// The texts of the statements read at every commit, built once (see ``StatementTexts``).
    private let texts = StatementTexts()

    /// The most ids one statement binds.
    static var chunkSize: Int { 500 }
    /// The most ids of a re-read whose statement is cached (one cached statement per count).
    static var cachedRereadMaximum: Int { 8 }

    init(plan: ResultsQueryPlan) {
        self.plan = plan
    }

    /// `?, ?, …`, `count` times.
    static func placeholders(_ count: Int) -> String {
        String(repeating: "?, ", count: max(count - 1, 0)) + (count > 0 ? "?" : "")
    }

    /// Calls `body` with consecutive slices of `ids`, each at most ``chunkSize`` long.
    static func forEachChunk<C: Collection>(of ids: C, _ body: (C.SubSequence) throws -> Void) rethrows {
        var start = ids.startIndex
        while start != ids.endIndex {
            let end = ids.index(start, offsetBy: chunkSize, limitedBy: ids.endIndex) ?? ids.endIndex
            try body(ids[start..<end])
            start = end
        }
    }

    /// The number of rows of the item table, an upper bound of the results' size that SQLite
    /// counts without reading rows, and the range of their ids (nil when empty).
    func tableExtent(_ db: Database) throws -> (count: Int, ids: ClosedRange<Int64>?) {
        let key = quoted(plan.itemKey), table = quoted(plan.itemEntity)
        // Three statements in one: each is then answered from the b-tree (a count of the
        // smallest one's entries, the first and last keys); one SELECT of the three
        // aggregates scanned every row of the table (a tenth of a large batched open).
        let row = try Row.fetchOne(
            db, sql: "SELECT (SELECT count(*) FROM \(table)), (SELECT min(\(key)) FROM \(table)), (SELECT max(\(key)) FROM \(table))")
        guard let row, let low = row[1] as Int64?, let high = row[2] as Int64?, low <= high else { return (row?[0] ?? 0, nil) }
        return (row[0], low...high)
    }

    /// Calls `body` with each item matching the predicate, and whose id is in `ids` when
    /// given, with its keys: in SQL order for the whole results, chunk by chunk for ids.
    func forEachItem(_ db: Database, ids: [Int64]?, _ body: (Item, IndexKeys) throws -> Void) throws {
        // A generated entity's columns were selected in its order: decoded by position.
        let byPosition = Self.decodesByPosition
        try forEachRow(db, ids: ids, keysOnly: false) { row, statement, keys in
            try body(byPosition ? try Item(strataColumns: EntityColumns(statement: statement)) : try Item(row: row), keys)
        }
    }

    /// Every item of the results, read in table order and sorted here (``SortKeyBuffer``),
    /// rather than sorted by SQLite with all their columns: `read` is called with each item
    /// as it is read, then `place` with each item's id, keys and number in the reading order
    /// (0, 1, …), in the results' order; `afterReading` between the two, once every row was
    /// read and before the sort. `capacity`: the most rows expected (the table's).
    /// `patch`: the value of an id made from one held, given the row's columns (nil: decode
    /// the row); taken instead of decoding the row. `leading`, asked for after `afterReading`:
    /// rows (reading numbers) known to be nearly in the results' order, which the sort takes
    /// first (``SortKeyBuffer/sort(leading:)``). Returns false, having called `read` for some items
    /// and `place` for none, when a sort key holds integers and reals both: the caller then
    /// starts over with ``forEachItem(_:ids:_:)``, which SQLite sorts.
    func forEachItemSortedHere(
        _ db: Database, capacity: Int, patching patch: ((Int64, EntityColumns) throws -> Item?)? = nil,
        read: (Item) throws -> Void,
        afterReading: () -> Void = {}, leading: () -> [UInt32] = { [] }, place: (Int64, IndexKeys, Int) throws -> Void
    ) throws -> Bool {
        let byPosition = Self.decodesByPosition
        // A value made from one held is found by its id (read from its column).
        let idColumn = byPosition && patch != nil ? Item.strataColumnNames.firstIndex(of: plan.itemKey).map(Int32.init) : nil
        let text = try selectText(db, idCount: nil, keysOnly: false, sortedInSQL: false)
        let statement = try db.makeStatement(sql: text.sql)
        statement.setUncheckedArguments(text.arguments)
        let sortCount = plan.sort.count, keyColumns = text.keyColumns
        let sqliteStatement = statement.sqliteStatement
        let first = Int32(statement.columnCount - sortCount - keyColumns)
        let keyIndex = first + Int32(sortCount)
        var sortKeys = SortKeyBuffer(descending: plan.sort.map(\.descending), capacity: capacity)
        // Every row's sort values, `sortCount` a row, and section keys, by reading order.
        var sortValues: [DatabaseValue] = [], keys: [DatabaseValue] = [], keyOrders: [DatabaseValue] = []
        sortValues.reserveCapacity(capacity * sortCount)
        if keyColumns > 0 { keys.reserveCapacity(capacity) }
        let rows = try Row.fetchCursor(statement)
        while let row = try rows.next() {
            let item: Item
            if let idColumn, let patch,
                let patched = try patch(sqlite3_column_int64(sqliteStatement, idColumn), EntityColumns(statement: sqliteStatement))
            {
                item = patched
            } else {
                item = byPosition ? try Item(strataColumns: EntityColumns(statement: sqliteStatement)) : try Item(row: row)
            }
            guard sortKeys.append(sqliteStatement, columns: first..<keyIndex, id: item.objectID.rawValue) else {
                return false
            }
            try read(item)
            for index in first..<keyIndex { sortValues.append(EntityColumns.storedValue(sqliteStatement, index)) }
            if keyColumns > 0 { keys.append(DatabaseValue(sqliteStatement: sqliteStatement, index: keyIndex)) }
            if keyColumns > 1 { keyOrders.append(DatabaseValue(sqliteStatement: sqliteStatement, index: keyIndex + 1)) }
        }
        afterReading()
        var sort: [DatabaseValue] = []
        sort.reserveCapacity(sortCount)
        sortKeys.sort(leading: leading())
        for sorted in sortKeys.sortedRows {
            let row = Int(sorted.row)
            sort.removeAll(keepingCapacity: true)
            sort.append(contentsOf: sortValues[(row * sortCount)..<((row + 1) * sortCount)])
            let key = keyColumns > 0 ? keys[row] : .null
            try place(sorted.id, IndexKeys(sort: sort, key: key, keyOrder: keyColumns > 1 ? keyOrders[row] : key), row)
        }
        return true
    }

    /// Whether items are decoded by position from the columns `Item.strataColumnNames`
    /// (generated entities), rather than by name from `t0.*`.
    static var decodesByPosition: Bool { !Item.strataColumnNames.isEmpty }

    /// Like ``forEachItem(_:ids:_:)``, reading only ids and keys (batched loading).
    func forEachKeys(_ db: Database, ids: [Int64]?, _ body: (Int64, IndexKeys) throws -> Void) throws {
        try forEachRow(db, ids: ids, keysOnly: true) { _, statement, keys in try body(sqlite3_column_int64(statement, 0), keys) }
    }

    /// Every item's id and raw section key (and key order), in the results' order: a
    /// compact index's fetch, which keeps nothing else. The rows are read in table order
    /// with their sort keys and sorted here (``SortKeyBuffer``), or by SQL when a sort key
    /// holds integers and reals both. `capacity`: the most rows expected (the table's).
    func forEachRawKey(_ db: Database, capacity: Int, _ body: (Int64, DatabaseValue, DatabaseValue) throws -> Void) throws {
        let (statement, keyColumns) = try rawKeyStatement(db, sortedInSQL: false)
        let sqliteStatement = statement.sqliteStatement
        let sortColumns = (1 + keyColumns)..<(1 + keyColumns + Int32(plan.sort.count))
        var sortKeys = SortKeyBuffer(descending: plan.sort.map(\.descending), capacity: capacity)
        // A section key that is an integer or NULL (entity sections, none) travels with its
        // row; others are kept here, by row number.
        let integer: UInt8 = 1, null: UInt8 = 0, other: UInt8 = 2
        var keys: [DatabaseValue] = [], keyOrders: [DatabaseValue] = []
        let rows = try Int64.fetchCursor(statement)
        while let id = try rows.next() {
            var value: Int64 = 0, kind = null
            if keyColumns == 1, sqlite3_column_type(sqliteStatement, 1) == SQLITE_INTEGER {
                value = sqlite3_column_int64(sqliteStatement, 1)
                kind = integer
            } else if keyColumns > 0, keyColumns > 1 || sqlite3_column_type(sqliteStatement, 1) != SQLITE_NULL {
                value = Int64(keys.count)
                kind = other
            }
            guard sortKeys.append(sqliteStatement, columns: sortColumns, id: id, value: value, kind: kind) else {
                return try forEachRawKeySortedInSQL(db, body)
            }
            if kind == other {
                keys.append(DatabaseValue(sqliteStatement: sqliteStatement, index: 1))
                if keyColumns > 1 { keyOrders.append(DatabaseValue(sqliteStatement: sqliteStatement, index: 2)) }
            }
        }
        sortKeys.sort()
        for row in sortKeys.sortedRows {
            switch row.kind {
            case integer:
                let key = row.value.databaseValue
                try body(row.id, key, key)
            case other:
                let key = keys[Int(row.value)]
                try body(row.id, key, keyColumns > 1 ? keyOrders[Int(row.value)] : key)
            default:
                try body(row.id, .null, .null)
            }
        }
    }

    /// ``forEachRawKey(_:_:)`` sorted by SQLite.
    private func forEachRawKeySortedInSQL(_ db: Database, _ body: (Int64, DatabaseValue, DatabaseValue) throws -> Void) throws {
        let (statement, keyColumns) = try rawKeyStatement(db, sortedInSQL: true)
        let sqliteStatement = statement.sqliteStatement
        // Int64's cursor steps without building rows; the keys are read beside it.
        let ids = try Int64.fetchCursor(statement)
        while let id = try ids.next() {
            let key: DatabaseValue = keyColumns > 0 ? DatabaseValue(sqliteStatement: sqliteStatement, index: 1) : .null
            let keyOrder: DatabaseValue = keyColumns > 1 ? DatabaseValue(sqliteStatement: sqliteStatement, index: 2) : key
            try body(id, key, keyOrder)
        }
    }

    /// The statement of ``forEachRawKey(_:_:)``: the id, the section key columns (their
    /// number is returned), then, unless sorted in SQL, the sort keys.
    private func rawKeyStatement(_ db: Database, sortedInSQL: Bool) throws -> (Statement, keyColumns: Int32) {
        var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
        var selection = SQL(sql: "\(builder.rootAlias).\(quoted(plan.itemKey))")
        let keyColumns = Int32(try appendSectionKeys(to: &selection, &builder))
        if !sortedInSQL {
            for key in plan.sort { selection += ", " + (try builder.orderingExpression(key)) }
        }
        // The condition and the order join what they read before the FROM clause is taken.
        let condition = try plan.predicate.map { try builder.condition($0) }
        let order = sortedInSQL ? try builder.orderingTerms(plan.sort) : nil
        var sql: SQL = "SELECT \(selection) FROM \(condition == nil ? builder.fullScanFromClause : builder.fromClause)"
        if let condition { sql += " WHERE " + condition }
        if let order { sql += " ORDER BY \(order)" }
        return (try SQLRequest<Row>(literal: sql).makePreparedRequest(db, forSingleResult: false).statement, keyColumns)
    }

    private func forEachRow(
        _ db: Database, ids: [Int64]?, keysOnly: Bool, _ body: (Row, SQLiteStatement, IndexKeys) throws -> Void
    ) throws {
        guard let ids else {
            try forEachRow(db, chunk: nil, keysOnly: keysOnly, body)
            return
        }
        try Self.forEachChunk(of: ids) { chunk in try forEachRow(db, chunk: chunk, keysOnly: keysOnly, body) }
    }

    private func forEachRow(
        _ db: Database, chunk: ArraySlice<Int64>?, keysOnly: Bool, _ body: (Row, SQLiteStatement, IndexKeys) throws -> Void
    ) throws {
        if let chunk, chunk.isEmpty { return }
        // A re-read of a few ids (most commits change one row or a few) keeps its statement
        // prepared in the connection's cache and its text here: building and preparing it
        // was a large part of a one-row commit.
        let text: StatementText
        let statement: Statement
        if let chunk, chunk.count <= Self.cachedRereadMaximum {
            text = try texts.text(for: .reread(count: chunk.count, keysOnly: keysOnly)) {
                try selectText(db, idCount: chunk.count, keysOnly: keysOnly)
            }
            statement = try db.cachedStatement(sql: text.sql)
        } else {
            text = try selectText(db, idCount: chunk?.count, keysOnly: keysOnly)
            statement = try db.makeStatement(sql: text.sql)
        }
        if let chunk {
            statement.setUncheckedArguments(text.arguments + StatementArguments(chunk))
        } else {
            statement.setUncheckedArguments(text.arguments)
        }
        let sortCount = plan.sort.count, keyColumns = text.keyColumns
        let sqliteStatement = statement.sqliteStatement
        // A cursor, not `Row.fetchAll`: its rows find columns through the statement. The
        // extra columns follow the entity's own, so they are read by index.
        let rows = try Row.fetchCursor(statement)
        // The sort and section keys follow the item's columns; read by position (text in full).
        let first = Int32(statement.columnCount - sortCount - keyColumns)
        let keyIndex = first + Int32(sortCount)
        // One buffer for every row's sort keys: a row whose keys the body keeps (a section's
        // first, a re-read) makes the next row copy it; the others reuse it.
        var sort: [DatabaseValue] = []
        sort.reserveCapacity(sortCount)
        while let row = try rows.next() {
            sort.removeAll(keepingCapacity: true)
            for index in first..<keyIndex { sort.append(EntityColumns.storedValue(sqliteStatement, index)) }
            let key: DatabaseValue = keyColumns > 0 ? DatabaseValue(sqliteStatement: sqliteStatement, index: keyIndex) : .null
            let keyOrder: DatabaseValue = keyColumns > 1 ? DatabaseValue(sqliteStatement: sqliteStatement, index: keyIndex + 1) : key
            try body(row, sqliteStatement, IndexKeys(sort: sort, key: key, keyOrder: keyOrder))
        }
    }

    /// The text of the statement that reads the items (all of them when `idCount` is nil, in
    /// SQL order when `sortedInSQL`; otherwise those of `idCount` ids, bound after
    /// `arguments`, in no order): their columns (only the id when `keysOnly`), then the sort keys, then the
    /// section keys.
    private func selectText(_ db: Database, idCount: Int?, keysOnly: Bool, sortedInSQL: Bool = true) throws -> StatementText {
        var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
        let alias = builder.rootAlias
        let columns: String
        if keysOnly {
            columns = "\(alias).\(quoted(plan.itemKey))"
        } else if Self.decodesByPosition {
            columns = Item.strataColumnNames.map { "\(alias).\(quoted($0))" }.joined(separator: ", ")
        } else {
            columns = "\(alias).*"
        }
        var selection = SQL(sql: columns)
        for (index, key) in plan.sort.enumerated() {
            selection += ", " + (try builder.orderingExpression(key)) + SQL(sql: " AS \"__strata_s\(index)\"")
        }
        let keyColumns = try appendSectionKeys(to: &selection, &builder)
        var conditions: [SQL] = []
        if let predicate = plan.predicate { conditions.append(try builder.condition(predicate)) }
        // The ids' condition comes last, its values bound after the others'.
        if let idCount {
            conditions.append(SQL(sql: "\(alias).\(quoted(plan.itemKey)) IN (\(Self.placeholders(idCount)))"))
        }
        // Rows re-read by id are placed by their keys: they need no order. The order joins
        // what it reads before the FROM clause is taken.
        let order = idCount == nil && sortedInSQL ? try builder.orderingTerms(plan.sort) : nil
        var sql: SQL = "SELECT \(selection) FROM \(conditions.isEmpty ? builder.fullScanFromClause : builder.fromClause)"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if let order { sql += " ORDER BY \(order)" }
        let (text, arguments) = try sql.build(db)
        return StatementText(sql: text, arguments: arguments, keyColumns: keyColumns)
    }

    /// Appends the raw section key (and, for keyed sections, its ordering value) to
    /// `selection`; returns how many columns it added.
    private func appendSectionKeys(to selection: inout SQL, _ builder: inout SQLQueryBuilder) throws -> Int {
        switch plan.sectionKind {
        case .none:
            return 0
        case .key(let path, let descending, _):
            selection += ", " + (try builder.value(path)) + " AS \"__strata_key\""
            selection += ", " + (try builder.orderingExpression(SortNode(path: path, descending: descending)))
                + " AS \"__strata_keyorder\""
            return 2
        case .entity(let relationship, _, _, _, _):
            selection += ", " + (try builder.value(plan.schema.keyPath(through: relationship, from: plan.itemEntity))) + " AS \"__strata_key\""
            return 1
        }
    }

    /// The sort keys of the item `id` as stored (a compact index's binary search reads them,
    /// once per probe): one cached statement, its values read straight from SQLite (text in
    /// full, as the fetches read them).
    func sortKeys(_ db: Database, of id: Int64) throws -> [DatabaseValue] {
        let text = try texts.text(for: .sortKeys) {
            var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
            var selection: [SQL] = []
            for key in plan.sort { selection.append(try builder.orderingExpression(key)) }
            if selection.isEmpty { selection.append(SQL(sql: "NULL")) }
            let sql: SQL = "SELECT \(selection.joined(separator: ", ")) FROM \(builder.fromClause) WHERE \(SQL(sql: builder.rootAlias)).\(SQL(sql: quoted(plan.itemKey))) = ?"
            let (text, arguments) = try sql.build(db)
            return StatementText(sql: text, arguments: arguments, keyColumns: 0)
        }
        let statement = try db.cachedStatement(sql: text.sql)
        statement.setUncheckedArguments(text.arguments.isEmpty ? [id] : text.arguments + [id])
        let rows = try Row.fetchCursor(statement)
        guard try rows.next() != nil else { throw ResultsError.itemUnavailable(id) }
        let sqliteStatement = statement.sqliteStatement
        return (0..<Int32(plan.sort.count)).map { EntityColumns.storedValue(sqliteStatement, $0) }
    }

    /// Whether an item of the results (by the predicate) that is not a child of `parent` in
    /// the to-one stored in `foreignKey` has the values `prefix` for the first sort keys:
    /// whether other parents' items can sort among `parent`'s children, in a request sorted
    /// by values of the parent and then the position (see `OrderedRequest`).
    func hasItemOfAnotherParent(
        _ db: Database, foreignKey: String, parent: Int64, prefix: ArraySlice<DatabaseValue>
    ) throws -> Bool {
        var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
        var conditions: [SQL] = []
        if let predicate = plan.predicate { conditions.append(try builder.condition(predicate)) }
        conditions.append(SQL(sql: "\(builder.rootAlias).\(quoted(foreignKey)) IS NOT ?", arguments: [parent]))
        for (key, value) in zip(plan.sort, prefix) {
            conditions.append(try builder.orderingExpression(key) + SQL(sql: " IS ?", arguments: [value]))
        }
        // The conditions join what they read before the FROM clause is taken.
        let sql: SQL = "SELECT 1 FROM \(builder.fromClause) WHERE \(conditions.joined(separator: " AND ")) LIMIT 1"
        return try Bool.fetchOne(db, SQLRequest<Bool>(literal: sql)) ?? false
    }

    /// The id and the values of the request's sort keys of every child of `parent` in the
    /// to-one stored in `foreignKey` but `excluded`, whatever the predicate says, in no order.
    /// For a move that renumbers a parent's children in the request's order.
    func childrenSortKeys(
        _ db: Database, foreignKey: String, parent: Int64, excluding excluded: Int64
    ) throws -> [(id: Int64, keys: [DatabaseValue])] {
        var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
        var selection: [SQL] = []
        for key in plan.sort { selection.append(try builder.orderingExpression(key)) }
        let root = builder.rootAlias
        selection.append(SQL(sql: "\(root).\(quoted(plan.itemKey))"))
        let condition = SQL(
            sql: "\(root).\(quoted(foreignKey)) = ? AND \(root).\(quoted(plan.itemKey)) IS NOT ?", arguments: [parent, excluded])
        // The selection joins what it reads before the FROM clause is taken.
        let head: SQL = "SELECT \(selection.joined(separator: ", ")) FROM \(builder.fromClause) WHERE "
        let (text, arguments) = try (head + condition).build(db)
        let statement = try db.makeStatement(sql: text)
        statement.setUncheckedArguments(arguments)
        let sqliteStatement = statement.sqliteStatement
        let count = Int32(plan.sort.count)
        var result: [(id: Int64, keys: [DatabaseValue])] = []
        let rows = try Row.fetchCursor(statement)
        while try rows.next() != nil {
            let keys = (0..<count).map { EntityColumns.storedValue(sqliteStatement, $0) }
            result.append((sqlite3_column_int64(sqliteStatement, count), keys))
        }
        return result
    }

    /// The ids of items whose `foreignKeyPath` is one of `ids` (whatever the predicate says).
    func itemIDs(_ db: Database, where foreignKeyPath: [String], in ids: Set<Int64>) throws -> Set<Int64> {
        var result = Set<Int64>()
        try Self.forEachChunk(of: Array(ids)) { chunk in
            var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
            let value = try builder.value(foreignKeyPath)
            let list = SQL(sql: Self.placeholders(chunk.count), arguments: StatementArguments(Array(chunk)))
            let sql: SQL = "SELECT \(SQL(sql: builder.rootAlias)).\(SQL(sql: quoted(plan.itemKey))) FROM \(builder.fromClause) WHERE \(value) IN (" + list + ")"
            result.formUnion(try Int64.fetchAll(db, SQLRequest(literal: sql, cached: chunk.count <= Self.cachedRereadMaximum)))
        }
        return result
    }

    /// The ids of items linked through `join` to one of the destination objects `ids`.
    func linkedItemIDs(_ db: Database, _ join: ResultsQueryPlan.JoinDependency, to ids: Set<Int64>) throws -> Set<Int64> {
        var result = Set<Int64>()
        try Self.forEachChunk(of: Array(ids)) { chunk in
            let list = chunk.map { _ in "?" }.joined(separator: ", ")
            let sql = "SELECT \(quoted(join.itemColumn)) FROM \(quoted(join.joinTable)) WHERE \(quoted(join.destinationColumn)) IN (\(list))"
            let statement = chunk.count <= Self.cachedRereadMaximum ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
            result.formUnion(try Int64.fetchAll(statement, arguments: StatementArguments(Array(chunk))))
        }
        return result
    }

    /// The section objects of an entity-sectioned request that its section predicate keeps
    /// (those of `ids` only, when given), in the section sort's order within each chunk.
    func sectionObjects(_ db: Database, ids: Set<Int64>? = nil) throws -> [FetchedSection<Section>] {
        guard case .entity(_, let entity, let sort, let predicate, _) = plan.sectionKind else { return [] }
        guard let type = Section.self as? any FetchableRecord.Type else {
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
        let sectionKey = plan.schema.entity(named: entity)?.primaryKey ?? "id"
        func read(_ chunk: [Int64]?) throws -> [FetchedSection<Section>] {
            var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: entity)
            var selection = SQL(sql: "\(builder.rootAlias).*")
            for (index, key) in sort.enumerated() {
                selection += ", " + (try builder.orderingExpression(key)) + SQL(sql: " AS \"__strata_s\(index)\"")
            }
            var condition = predicate
            if let chunk {
                let idCondition = PredicateNode.isIn(.path([sectionKey]), chunk.map(\.databaseValue))
                condition = predicate.map { .and([$0, idCondition]) } ?? idCondition
            }
            let sql = try builder.select(selection, where: condition, orderBy: sort)
            return try Row.fetchAll(db, SQLRequest(literal: sql)).map { row in
                let value = try Self.decode(type, row: row)
                let id: Int64 = row[sectionKey]
                var order: [DatabaseValue] = []
                let first = row.count - sort.count  // the sort columns follow the entity's own
                for index in first..<row.count { order.append(DatabaseValueOrdering.sortValue(in: row, at: index)) }
                return FetchedSection(id: id, value: value, order: order)
            }
        }
        guard let ids else { return try read(nil) }
        var result: [FetchedSection<Section>] = []
        try Self.forEachChunk(of: ids.sorted()) { chunk in result += try read(Array(chunk)) }
        return result
    }

    private static func decode<T: FetchableRecord>(_ type: T.Type, row: Row) throws -> Section {
        guard let value = try T(row: row) as? Section else {
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
        return value
    }
}
