import GRDB

/// Remembers, on the store's writer connection, the deletes that `deny` rules refused in
/// the current transaction, so that ``Store/write(_:)`` fails the whole transaction even
/// when the caller caught the error.
///
/// A `deny` trigger raises with `RAISE(ABORT)`, which undoes the refused statement only:
/// `try? db.delete(notebook)` would otherwise let the rest of the transaction commit. Each
/// deny trigger has a TEMP twin on the writer (``DeleteRuleTriggers/denyWatches``) with the
/// same condition, run first, that calls this watch's SQL function. Other connections and
/// other programs never see the function or the TEMP triggers.
///
/// The watch also tells the ``CommitObserver`` that a statement was refused: SQLite's update
/// hook has then reported changes (the part of a cascade done before the refusal) that the
/// abort undid, and GRDB does not take them back. A transaction that commits anyway — a
/// write made on the store's `writer` that caught the error — must not report them.
final class DeniedDeleteWatch: Sendable {
    /// The SQL function the watch triggers call, with the deny message.
    static let functionName = "strata_note_delete_denied"

    private struct State {
        /// The first refusal since ``reset()``.
        var first: DeleteDeniedError?
        /// True when a delete was refused since the commit observer last looked.
        var unreported = false
    }

    private let state = LockedValue(State())

    /// Registers the function and creates the watch triggers on the writer connection.
    func install(_ db: Database, schema: SchemaDescriptor) throws {
        let state = self.state
        db.add(function: DatabaseFunction(Self.functionName, argumentCount: 1, pure: false) { values in
            if let message = String.fromDatabaseValue(values[0]), let error = DeleteDeniedError(message: message) {
                state.withLock { state in
                    if state.first == nil { state.first = error }
                    state.unreported = true
                }
            }
            return nil
        })
        for (_, sql) in DeleteRuleTriggers(schema: schema).denyWatches.sorted(by: { $0.key < $1.key }) {
            try db.execute(sql: sql)
        }
    }

    /// Forgets earlier refusals; called at the start of the store's write transactions.
    func reset() {
        state.withLock { $0.first = nil }
    }

    /// The first delete refused since ``reset()``, if any.
    var refused: DeleteDeniedError? {
        state.withLock { $0.first }
    }

    /// True when a delete was refused since the last call: called by the commit observer at
    /// the end of each transaction it is told of. A refused statement that ran alone (outside
    /// a transaction) rolls back without the observer being told; its changes then wait in
    /// the observer, and the refusal with them, for the next transaction's end.
    func takeUnreportedRefusal() -> Bool {
        state.withLock { state in
            defer { state.unreported = false }
            return state.unreported
        }
    }
}
