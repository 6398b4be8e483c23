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
final class DeniedDeleteWatch: Sendable {
    /// The SQL function the watch triggers call, with the deny message.
    static let functionName = "strata_note_delete_denied"

    private let first = LockedValue<DeleteDeniedError?>(nil)

    /// Registers the function and creates the watch triggers on the writer connection.
    func install(_ db: Database, schema: SchemaDescriptor) throws {
        let first = self.first
        db.add(function: DatabaseFunction(Self.functionName, argumentCount: 1, pure: false) { values in
            if let message = String.fromDatabaseValue(values[0]), let error = DeleteDeniedError(message: message) {
                first.withLock { if $0 == nil { $0 = error } }
            }
            return nil
        })
        for (_, sql) in DeleteRuleTriggers(schema: schema).denyWatches.sorted(by: { $0.key < $1.key }) {
            try db.execute(sql: sql)
        }
    }

    /// Forgets earlier refusals; called at the start of the store's write transactions.
    func reset() {
        first.withLock { $0 = nil }
    }

    /// The first delete refused since ``reset()``, if any.
    var refused: DeleteDeniedError? {
        first.withLock { $0 }
    }
}
