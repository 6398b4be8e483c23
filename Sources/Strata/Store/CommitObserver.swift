import Foundation
import GRDB

typealias NSLockShim = NSLock

/// The store's GRDB transaction observer: collects the rows each transaction changes (from
/// SQLite's update hook, which reports trigger-made changes too) and, after each commit,
/// hands the net changes to the registered handlers, synchronously, on the writer.
/// Rolled back transactions (and savepoints) deliver nothing.
final class CommitObserver: TransactionObserver, @unchecked Sendable {
    typealias Handler = @Sendable (CommittedChanges, Database) -> Void

    // Only touched on the writer's dispatch queue.
    private var pending: [String: CommittedChanges.TableChanges] = [:]
    private var statementColumns: [String: Set<String>] = [:]
    private let columnsByTable: [String: [String]]

    private let handlers = LockedValue<[UInt64: Handler]>([:])
    private let nextKey = LockedValue<UInt64>(0)

    init(columnsByTable: [String: [String]]) {
        self.columnsByTable = columnsByTable
    }

    func add(_ handler: @escaping Handler) -> UInt64 {
        let key = nextKey.withLock { value -> UInt64 in
            value += 1
            return value
        }
        handlers.withLock { $0[key] = handler }
        return key
    }

    func remove(_ key: UInt64) {
        handlers.withLock { $0[key] = nil }
    }

    private func isTracked(_ table: String) -> Bool { columnsByTable[table] != nil }

    // MARK: - TransactionObserver

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        // Called for each statement about to run, once per kind of change it (and its
        // triggers) can make: remember which columns updates may write.
        if case .update(let table, let columns) = eventKind, isTracked(table) {
            statementColumns[table, default: []].formUnion(columns)
        }
        return isTracked(eventKind.tableName)
    }

    func databaseDidChange(with event: DatabaseEvent) {
        guard isTracked(event.tableName) else { return }
        let id = event.rowID
        var changes = pending[event.tableName] ?? CommittedChanges.TableChanges()
        switch event.kind {
        case .insert:
            if changes.deleted.remove(id) != nil {
                changes.updated.insert(id)
                changes.updatedColumns.formUnion(columnsByTable[event.tableName] ?? [])
            } else {
                changes.inserted.insert(id)
            }
        case .update:
            if !changes.inserted.contains(id) {
                changes.updated.insert(id)
                if let columns = statementColumns[event.tableName] {
                    changes.updatedColumns.formUnion(columns)
                } else {
                    changes.updatedColumns.formUnion(columnsByTable[event.tableName] ?? [])
                }
            }
        case .delete:
            if changes.inserted.remove(id) == nil {
                changes.updated.remove(id)
                changes.deleted.insert(id)
            }
        }
        pending[event.tableName] = changes
    }

    func databaseDidChange() {
        // Changes GRDB could not see in detail (Database.notifyChanges): nothing to report
        // row by row.
    }

    func databaseWillCommit() throws {}

    func databaseDidCommit(_ db: Database) {
        let tables = pending.filter { !$0.value.isEmpty }
        pending = [:]
        statementColumns = [:]
        guard !tables.isEmpty else { return }
        let changes = CommittedChanges(tables: tables)
        let current = handlers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
        for handler in current { handler(changes, db) }
    }

    func databaseDidRollback(_ db: Database) {
        pending = [:]
        statementColumns = [:]
    }
}
