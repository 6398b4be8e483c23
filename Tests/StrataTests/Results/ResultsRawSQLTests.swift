import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// Writes in raw SQL whose row changes SQLite's update hook does not report in full.
@Suite struct ResultsRawSQLTests {
    /// `INSERT OR REPLACE` on a unique column deletes the conflicting row, which the update
    /// hook never reports; its section (and its cascaded notes) must still go.
    @Test func insertOrReplaceOnAUniqueColumnDeletesTheReplacedRow() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            try db.notebook("Home", position: 1)
            try db.note("a", in: work)
        }
        try h.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES ('Work', ?, 2)",
                arguments: [day])
        }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[a] Home[]",
                "s-[0] s+[1] | Home[] Work[]",
            ])
        try h.check()
    }

    /// `UPDATE OR REPLACE` that takes another row's unique value deletes that row.
    @Test func updateOrReplaceOnAUniqueColumnDeletesTheOtherRow() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            try db.notebook("Work", position: 0)
            let home = try db.notebook("Home", position: 1)
            try db.note("h", in: home)
        }
        try h.write { db in
            try db.execute(sql: "UPDATE OR REPLACE Notebook SET name = 'Home' WHERE name = 'Work'")
        }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[] Home[h]",
                "s-[1] s~[0] | Home[]",
            ])
        try h.check()
    }

    /// The store's committed changes report the replaced row as deleted.
    @Test func committedChangesReportReplacedRows() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let work = try store.write { db in try db.notebook("Work") }
        let commits = LockedValue<[CommittedChanges]>([])
        let observation = store.observeCommits { changes in commits.withLock { $0.append(changes) } }
        defer { observation.cancel() }
        try store.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES ('Work', ?, 2)",
                arguments: [day])
        }
        let commit = try #require(commits.withLock { $0 }.first)
        #expect(commit["Notebook"].deleted == [work.id.rawValue])
        #expect(commit["Notebook"].inserted == [work.id.rawValue + 1])
        #expect(commit["Notebook"].updated.isEmpty)
    }
}
