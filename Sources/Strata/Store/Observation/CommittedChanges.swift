import GRDB

/// What one committed transaction changed: per table (entity tables and many-to-many join
/// tables, by name), the rowids inserted, updated and deleted — changes made by delete-rule
/// triggers (cascades, nullified references, removed join rows) included.
///
/// Changes are net over the transaction: a row inserted then updated is only inserted; a
/// row inserted then deleted does not appear; a row updated then deleted is only deleted;
/// a rowid deleted then inserted again is updated (with every column).
///
/// Rows deleted by `REPLACE` conflict resolution (`INSERT OR REPLACE`, `UPDATE OR REPLACE`
/// on a unique attribute), which SQLite's update hook does not report, are reported too,
/// with one approximation: a replaced row whose rowid is written again in the same
/// transaction (a conflict on the id itself) is reported inserted, not updated — harmless
/// to code that re-reads the rows it is told about. Join rows replaced that way are not
/// reported (the statement writes the same link again).
///
/// Changes committed by other connections to the file — another process, another store —
/// are read from the file's change history and delivered with ``origin``
/// ``Origin/otherConnections`` (see <doc:ChangeHistory>). Changes that are not in the
/// history (a program that is not a Strata store, a store with
/// ``Store/Options/recordsHistory`` off) are invisible to this store. Announce them with
/// ``Store/notifyExternalChanges(in:)`` (or GRDB's `Database.notifyChanges(in:)` inside a
/// write): the commit then lists the tables in ``invalidatedTables``, with no row detail —
/// every table the store tracks when GRDB's method was used, since it does not tell which.
/// Anything derived from an invalidated table must be read again; results controllers
/// refetch and deliver the difference.
///
/// For join tables, ``TableChanges/joinRows`` tells which objects each inserted or deleted
/// row linked, so a deleted link can be traced back to both of its objects.
///
/// `updatedColumns` is the union, over the transaction, of the columns that the `UPDATE`
/// statements run on the table (directly or by triggers) could set: a superset of the
/// columns that changed for each updated row. Use it to skip work when no column a request
/// reads was touched.
public struct CommittedChanges: Hashable, Sendable {
    /// The net changes of one table.
    public struct TableChanges: Hashable, Sendable {
        /// Rowids of rows the transaction inserted.
        public var inserted: Set<Int64> = []
        /// Rowids of rows that existed before and were updated (or deleted and inserted again).
        public var updated: Set<Int64> = []
        /// Rowids of rows that existed before and were deleted. In changes of origin
        /// ``Origin/otherConnections`` that merge several transactions, also the rows one of
        /// them inserted and a later one deleted: this store may have read them in between.
        public var deleted: Set<Int64> = []
        /// A superset of the columns written by the transaction's updates of this table.
        public var updatedColumns: Set<String> = []
        /// For a many-to-many join table: the values (column name → id) of each inserted
        /// and deleted row, by rowid — which objects were linked or unlinked. Empty for
        /// entity tables.
        public var joinRows: [Int64: [String: Int64]] = [:]

        /// No changes.
        public init() {}

        /// True when no row of the table changed.
        public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

        /// Every rowid of the table that the transaction touched.
        public var all: Set<Int64> { inserted.union(updated).union(deleted) }
    }

    /// Table name → its changes; tables without changes are absent.
    public var tables: [String: TableChanges]

    /// Tables whose rows may have changed in ways the commit does not detail: changes
    /// announced with ``Store/notifyExternalChanges(in:)`` or `Database.notifyChanges(in:)`,
    /// and the tables a transaction touched when a `deny` refusal was caught inside it and
    /// the transaction committed anyway (SQLite reports row changes that the refused
    /// statement then undid). Re-read everything that depends on them. Usually empty.
    public var invalidatedTables: Set<String>

    /// Where committed changes come from.
    public enum Origin: Hashable, Sendable {
        /// A transaction committed through this store.
        case thisStore
        /// Transactions committed by other connections to the file — another process, or
        /// another store on the same file — read from the file's change history (see
        /// <doc:ChangeHistory>). Several such transactions found at once are delivered as
        /// one, their changes merged, and the rows they name are re-read in the state after
        /// the last of them. A row that one of them inserted and a later one deleted is
        /// reported deleted, since this store may have read it in between (through its own
        /// commits, or a controller that fetched then): whoever handles these changes must
        /// accept the deletion of a row it never saw, and the insertion of a row it already
        /// shows (re-read it).
        case otherConnections
    }

    /// Where the changes come from: ``Origin/thisStore`` unless they were read from the
    /// change history, committed by another connection.
    public var origin: Origin

    /// The history token of the (last) transaction these changes come from; nil when it
    /// was not recorded (``Store/Options/recordsHistory`` off, or a write made on
    /// ``Store/writer`` outside ``Store/write(_:)``).
    public var token: HistoryToken?

    /// The authors of the transactions (see ``Store/write(author:_:)``); empty when none
    /// was given.
    public var authors: Set<String>

    /// True when this store could not read what other connections committed, because the
    /// history was pruned past what it had read: every table it tracks is in
    /// ``invalidatedTables``, and results controllers refetch once.
    public var missedHistory: Bool

    /// Changes by table name, and the tables invalidated without details.
    public init(tables: [String: TableChanges] = [:], invalidatedTables: Set<String> = []) {
        self.tables = tables
        self.invalidatedTables = invalidatedTables
        origin = .thisStore
        token = nil
        authors = []
        missedHistory = false
    }

    /// The changes of `table` (empty when it did not change).
    public subscript(table: String) -> TableChanges { tables[table] ?? TableChanges() }

    /// The changes of an entity's table.
    public func changes<Entity: StrataEntity>(of type: Entity.Type) -> TableChanges { self[Entity.entityName] }

    /// True when no row of any table changed and no table was invalidated.
    public var isEmpty: Bool { invalidatedTables.isEmpty && tables.values.allSatisfy(\.isEmpty) }

    /// Adds the changes of a later transaction, net over both: a row deleted then inserted
    /// again is updated with `allColumns(table)`, a row inserted then updated stays inserted,
    /// a row updated then deleted is deleted. A row inserted then deleted disappears, unless
    /// `keepingInsertedThenDeleted`: it is then reported deleted.
    ///
    /// Net changes of one store's transaction can drop such a row: nobody else saw it. Changes
    /// of *separate* commits of other connections cannot — between their commits this store
    /// may have read the row (its own commits, a controller opened or resumed, a commit
    /// handler's reads), and it must be told that the row is gone.
    mutating func merge(
        _ later: CommittedChanges, allColumns: (String) -> [String], keepingInsertedThenDeleted: Bool = false
    ) {
        invalidatedTables.formUnion(later.invalidatedTables)
        authors.formUnion(later.authors)
        missedHistory = missedHistory || later.missedHistory
        if let token = later.token { self.token = max(self.token ?? token, token) }
        for (name, next) in later.tables where !next.isEmpty {
            var table = tables.removeValue(forKey: name) ?? TableChanges()
            for id in next.inserted {
                if table.deleted.remove(id) != nil {
                    table.updated.insert(id)
                    table.updatedColumns.formUnion(allColumns(name))
                } else {
                    table.inserted.insert(id)
                }
            }
            for id in next.updated where !table.inserted.contains(id) { table.updated.insert(id) }
            table.updatedColumns.formUnion(next.updatedColumns)
            for id in next.deleted {
                if table.inserted.remove(id) != nil && !keepingInsertedThenDeleted { continue }
                table.updated.remove(id)
                table.deleted.insert(id)
            }
            table.joinRows.merge(next.joinRows) { $1 }
            if !table.joinRows.isEmpty {
                table.joinRows = table.joinRows.filter { table.inserted.contains($0.key) || table.deleted.contains($0.key) }
            }
            if !table.isEmpty { tables[name] = table }
        }
    }
}

/// A registration of a commit handler; cancelling (or deinitialising) it stops deliveries.
public final class CommitObservation: Sendable {
    private let onCancel: @Sendable () -> Void
    private let cancelled = LockedValue(false)

    init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

    /// Stops deliveries; deliveries already under way finish.
    public func cancel() {
        let wasCancelled = cancelled.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        if !wasCancelled { onCancel() }
    }

    deinit { cancel() }
}

/// A value behind a lock.
final class LockedValue<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLockShim()
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
