import Foundation
import Testing
@testable import Strata

/// Every public error follows the one pattern of ``StrataError``: a readable description that
/// is also its `localizedDescription`, and it can be caught as `any StrataError`.
@Suite("Error pattern")
struct ErrorPatternTests {
    static let samples: [any StrataError] = [
        DeleteDeniedError(entity: "Notebook", relationship: "notes"),
        IdentityChangeError(entity: "Note"),
        UniqueConstraintError(entity: "Notebook", attributes: ["name"]),
        StorageError(kind: .full, path: "/tmp/x.sqlite", message: "database or disk is full"),
        MigrationError.notAStrataStore,
        StoreError.closed,
        StoreOpenError(path: "", reason: .emptyPath),
        RuleViolationError(entity: "Note", id: 42, member: "title", rule: .maxLength(80)),
        HistoryPrunedError(token: HistoryToken(rawValue: 1), currentToken: HistoryToken(rawValue: 9)),
        HistoryTokenAheadError(token: HistoryToken(rawValue: 9), currentToken: HistoryToken(rawValue: 1)),
        InvalidValueError(entity: "Note", attribute: "title", reason: .nulCharacter),
        QueryError.unknownEntity("Nope"),
        ResultsError.itemUnavailable(3),
        ResultsEditError.mixedParents,
        OrderError.indexOutOfRange(index: 5, count: 2),
    ]

    @Test("each public error's localizedDescription is its description, and names what is at fault")
    func localizedDescriptions() {
        for error in Self.samples {
            #expect(error.localizedDescription == error.description, "\(type(of: error))")
            #expect(!error.description.isEmpty)
        }
    }

    @Test("a thrown Strata error is caught as any StrataError")
    func caughtAsStrataError() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.close()
        do {
            _ = try store.read { db in try Note.fetchCount(db) }
            Issue.record("a closed store read")
        } catch let error as any StrataError {
            #expect(error.localizedDescription.contains("closed"))
        }
    }
}
