import Foundation
import Strata

/// A pull's answer as the sync works on it. ``PostgresSyncServer`` reads the objects of each
/// table into one array of the values the store keeps, row after row (no dictionary per row),
/// which the bulk insert prepares from directly; the ``SyncChange`` list of a
/// ``SyncPullResult`` (wire text) is made from it only where it is needed (a batch applied
/// change by change, a relay's answer). Another ``SyncServer``'s answer is kept as it came.
struct PullBatch: Sendable {
    /// The objects of one table that an answer names, in the order of the server's log: each
    /// one's row (the server holds it), or none (it was deleted).
    struct Objects: Sendable {
        var table: String
        /// The columns of each row, in order (not the primary key).
        var columns: [String]
        var ids: [UUID] = []
        /// Per id: the index of its row (its cells are `row * columns.count ..< (row + 1) *
        /// columns.count` of ``values`` or ``texts``), or -1 when the server no longer has it.
        var rows: [Int] = []
        /// The rows' wire text, row after row, in column order: `.some(nil)` for NULL, nil
        /// for a column that a row does not hold (rows made from changes; empty when the rows
        /// hold ``values``).
        var texts: [String??] = []
        /// The rows' values as the store keeps them, row after row, in column order (rows the
        /// server read: every row holds every column); their wire text is
        /// ``SyncValue/text(of:as:)`` of each.
        var values: [StoredValue] = []
        /// Each column's type (with ``values``).
        var types: [ValueType] = []
        var rowCount = 0

        init(table: String, columns: [String]) {
            self.table = table
            self.columns = columns
        }

        /// The wire text of a cell (an index into ``texts`` or ``values``): `.some(nil)` for
        /// NULL, nil when its row does not hold the column.
        func text(at cell: Int) -> String?? {
            guard !values.isEmpty else { return texts[cell] }
            return .some(SyncValue.text(of: values[cell], as: types[cell % columns.count]))
        }

        /// Adds an object the server no longer has.
        mutating func appendDeleted(_ id: UUID) {
            ids.append(id)
            rows.append(-1)
        }

        /// Adds an object with its row (the caller appended its `columns.count` values or texts).
        mutating func appendRow(_ id: UUID) {
            ids.append(id)
            rows.append(rowCount)
            rowCount += 1
        }

        /// The object at `index` as a change: an insert with every column its row holds, or
        /// a delete.
        func change(at index: Int) -> SyncChange {
            let row = rows[index]
            guard row >= 0 else { return SyncChange(kind: .delete, table: table, id: ids[index]) }
            var values: [String: String?] = [:]
            values.reserveCapacity(columns.count)
            let start = row * columns.count
            for (offset, column) in columns.enumerated() {
                if let text = text(at: start + offset) { values[column] = text }
            }
            return SyncChange(kind: .insert, table: table, id: ids[index], values: values)
        }
    }

    var cursor: Int64
    var hasMore: Bool
    /// The objects, table by table (the PostgreSQL server's answer).
    var objects: [Objects]
    /// Links and unlinks, after the objects.
    var links: [SyncChange]
    /// Another server's answer, as it came (`objects` and `links` are then empty).
    var given: [SyncChange]?
    /// Whether it is a batch of a snapshot (``SyncServer/readSnapshot(batchSize:into:)``).
    var isSnapshot = false

    /// A batch of the PostgreSQL server.
    init(objects: [Objects], links: [SyncChange], cursor: Int64, hasMore: Bool) {
        self.objects = objects
        self.links = links
        self.cursor = cursor
        self.hasMore = hasMore
    }

    /// Another server's answer: its objects by table as they came (their wire text), or its
    /// changes.
    init(_ result: SyncPullResult) {
        cursor = result.cursor
        hasMore = result.hasMore
        guard let columnar = result.objects else {
            objects = []
            links = []
            given = result.changes
            return
        }
        objects = columnar.map { table in
            var objects = Objects(table: table.table, columns: table.columns)
            objects.ids.reserveCapacity(table.ids.count)
            objects.rows.reserveCapacity(table.ids.count)
            objects.texts.reserveCapacity(table.ids.count * table.columns.count)
            for (id, row) in zip(table.ids, table.rows) {
                guard let row else {
                    objects.appendDeleted(id)
                    continue
                }
                // A row of fewer values than columns holds only those (the others are left
                // out, as a change leaves out a column it does not send); more are ignored.
                for offset in table.columns.indices { objects.texts.append(offset < row.count ? .some(row[offset]) : nil) }
                objects.appendRow(id)
            }
            return objects
        }
        links = result.changes
    }

    /// The number of changes.
    var count: Int { given?.count ?? objects.reduce(links.count) { $0 + $1.ids.count } }

    /// Every change, in the answer's order: each table's objects (inserts and deletes in the
    /// log's order), then the links.
    var changes: [SyncChange] {
        if let given { return given }
        var result: [SyncChange] = []
        result.reserveCapacity(count)
        for table in objects { result += table.ids.indices.lazy.map(table.change(at:)) }
        return result + links
    }

    /// The changes other than inserts (what a batch whose inserts go in bulk applies after
    /// them), in the same order.
    var changesOtherThanInserts: [SyncChange] {
        if let given { return given.filter { $0.kind != .insert } }
        var result: [SyncChange] = []
        for table in objects {
            for index in table.ids.indices where table.rows[index] < 0 { result.append(table.change(at: index)) }
        }
        return result + links
    }

    /// The sync ids of the objects inserted (or updated) by the batch.
    var insertedIDs: [UUID] {
        if let given { return given.lazy.filter { $0.kind == .insert }.compactMap(\.id) }
        return objects.flatMap { table in table.ids.indices.lazy.filter { table.rows[$0] >= 0 }.map { table.ids[$0] } }
    }

    var result: SyncPullResult { SyncPullResult(changes: changes, cursor: cursor, hasMore: hasMore) }

    /// The answer with its objects by table (``SyncPullRequest/columnar``).
    var columnarResult: SyncPullResult {
        if let given { return SyncPullResult(changes: given, cursor: cursor, hasMore: hasMore) }
        let tables = objects.map { table in
            SyncPullObjects(
                table: table.table, columns: table.columns, ids: table.ids,
                rows: table.rows.map { row in
                    guard row >= 0 else { return nil }
                    let start = row * table.columns.count
                    return (start..<start + table.columns.count).map { table.text(at: $0) ?? nil }
                })
        }
        return SyncPullResult(changes: links, cursor: cursor, hasMore: hasMore, objects: tables)
    }

    /// The inserts of the batch by table, each table's in their order (``objects`` as they
    /// are, or made from another server's changes, with the columns of `tables`); nil when an
    /// insert has no id, or names a table that is not synced here.
    func insertedObjects(_ tables: SyncedTables) -> [Objects]? {
        guard let given else { return objects }
        var result: [Objects] = []
        var groups: [String: Int] = [:]
        for change in given where change.kind == .insert {
            guard let id = change.id else { return nil }
            let group: Int
            if let known = groups[change.table] {
                group = known
            } else {
                guard let entity = tables.entity(named: change.table) else { return nil }
                group = result.count
                groups[change.table] = group
                result.append(Objects(table: entity.name, columns: entity.columns.map(\.name)))
            }
            for column in result[group].columns { result[group].texts.append(change.values[column]) }
            result[group].appendRow(id)
        }
        return result
    }
}
