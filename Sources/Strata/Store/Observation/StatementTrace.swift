import GRDB

/// The SQL statements a store's writer connection runs, recorded while the trace is on.
///
/// The writer runs every write, and every read that results controllers make after a
/// commit or for their first fetch, so a trace answers "what did this commit cost": which
/// rows a controller re-read by id, whether it refetched, which statements a typed write
/// ran. Reads made with ``Store/read(_:)`` on a file store's reader connections are not
/// recorded.
///
/// ```swift
/// let trace = store.traceStatements()
/// try store.update(note)
/// print(trace.statements)   // the UPDATE, then the controllers' re-reads of that note
/// trace.stop()
/// ```
///
/// Statements are recorded with their arguments inlined (`expandedSQL`). Triggers appear
/// as SQLite reports them (`-- TRIGGER name`). Only one trace records at a time on a store:
/// starting one replaces the previous one, and GRDB's own `Database.trace` on the writer
/// replaces it too.
public final class StatementTrace: Sendable {
    private let recorded = LockedValue<[String]>([])
    private let writer: any DatabaseWriter

    fileprivate init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// The statements recorded so far, in order.
    public var statements: [String] {
        recorded.withLock { $0 }
    }

    /// Forgets the statements recorded so far; recording goes on.
    public func removeAll() {
        recorded.withLock { $0.removeAll() }
    }

    /// Stops recording. The recorded statements stay readable.
    public func stop() {
        writer.writeWithoutTransaction { db in db.trace(options: [], nil) }
    }

    fileprivate func record(_ sql: String) {
        recorded.withLock { $0.append(sql) }
    }
}

extension Store {
    /// Starts recording the statements the store's writer connection runs (see
    /// ``StatementTrace``). Waits for the current write, if any, to finish.
    public func traceStatements() -> StatementTrace {
        let trace = StatementTrace(writer: writer)
        writer.writeWithoutTransaction { db in
            db.trace(options: .statement) { event in
                if case .statement(let statement) = event { trace.record(statement.expandedSQL) }
            }
        }
        return trace
    }
}
