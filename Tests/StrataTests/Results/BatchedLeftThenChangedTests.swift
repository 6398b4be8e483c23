import Foundation
import GRDB
import Testing

@testable import Strata

/// An older batched snapshot that shows an item, and has not loaded its page, reads the
/// value it showed after the item left the results through a related row (its notebook
/// renamed: its own row unchanged, so the commit keeps nothing) and then changed, went, or
/// came back and changed. Once a bug: a commit kept values only for the items the results
/// held at that commit (`PageLoader.commit(changed:wasShown:)` was given `index.contains`
/// alone), so such a snapshot read the store's current value, or failed with
/// `ResultsError.itemUnavailable` (a trap through the rows' subscript). The loader now also
/// keeps values for the items that left while a snapshot that may show them is alive
/// (`PageLoader.left(_:)`).
@Suite struct BatchedLeftThenChangedTests {
    /// One commit of the steps after the first snapshot: the first note and its notebook.
    typealias Step = @Sendable (Database, inout Note, inout Notebook) throws -> Void

    /// The notebook "Work" renamed, so that every note leaves the results with its own row
    /// unchanged (a step).
    static let leave: Step = { db, _, work in
        work.name = "Home"
        try work.update(db)
    }

    /// The notebook renamed back: every note comes back (a step).
    static let comeBack: Step = { db, _, work in
        work.name = "Work"
        try work.update(db)
    }

    static func retitle(_ title: String) -> Step {
        { db, note, _ in
            note.title = title
            try note.update(db)
        }
    }

    static let delete: Step = { db, note, _ in _ = try db.delete(Note.self, id: note.id) }

    /// A batched controller over the notes of the notebook "Work" (six, pages of two, one
    /// cached), its first snapshot unread; then each of `steps` committed and delivered.
    /// Returns the first snapshot, the snapshot delivered after each step, and the folder.
    static func snapshots(after steps: [Step]) throws -> (
        first: ResultsSnapshot<Note, NoSection>, after: [ResultsSnapshot<Note, NoSection>], folder: URL
    ) {
        let (store, folder) = try BatchedLoadingTests.fileStore()
        var work = Notebook(name: "Work", createdAt: day)
        var first = Note(title: "n0", updatedAt: day)
        try store.write { db in
            try work.insert(db)
            for i in 0..<6 {
                var note = Note(title: "n\(i)", updatedAt: day, notebookID: work.id)
                try note.insert(db)
                if i == 0 { first = note }
            }
        }
        let queue = DispatchQueue(label: "strata.tests.left-then-changed")
        let controller = try ResultsController(
            store: store, request: Note.Fetches.all.filter(Note.notebook.name == "Work"),
            loading: .batched(pageSize: 2, cachedPages: 1), deliveryQueue: queue)
        queue.sync {}
        let old = controller.snapshot
        var after: [ResultsSnapshot<Note, NoSection>] = []
        for step in steps {
            try store.write { db in try step(db, &first, &work) }
            queue.sync {}
            after.append(controller.snapshot)
        }
        return (old, after, folder)
    }

    /// The titles `snapshot` shows, read row by row (each page read now, after every step).
    static func titles(_ snapshot: ResultsSnapshot<Note, NoSection>) throws -> [String] {
        guard let rows = snapshot.sections.first?.rows else { return [] }
        return try (0..<rows.count).map { try rows.item(at: $0)?.title ?? "?" }
    }

    static let shown = (0..<6).map { "n\($0)" }

    @Test("an older batched snapshot reads its own value of an item that left the results, then changed")
    func leftThenUpdated() throws {
        let (old, _, folder) = try Self.snapshots(after: [Self.leave, Self.retitle("changed")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let value = try old.sections[0].rows.item(at: 0)
        #expect(value?.title == "n0")
        #expect(try Self.titles(old) == Self.shown)
    }

    @Test("an older batched snapshot reads its own value of an item that left the results, then was deleted")
    func leftThenDeleted() throws {
        let (old, _, folder) = try Self.snapshots(after: [Self.leave, Self.delete])
        defer { try? FileManager.default.removeItem(at: folder) }
        let value = try old.sections[0].rows.item(at: 0)
        #expect(value?.title == "n0")
        #expect(old.sections[0].rows[0].item?.title == "n0")
        #expect(try Self.titles(old) == Self.shown)
    }

    @Test("an older batched snapshot reads its own value of an item that left the results, changed, then was deleted")
    func leftThenUpdatedThenDeleted() throws {
        let (old, after, folder) = try Self.snapshots(after: [Self.leave, Self.retitle("changed"), Self.delete])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try Self.titles(old) == Self.shown)
        for snapshot in after { #expect(try Self.titles(snapshot) == []) }
    }

    @Test("every batched snapshot reads its own values of an item that left the results, changed, came back and changed")
    func leftAndCameBack() throws {
        let (old, after, folder) = try Self.snapshots(after: [
            Self.leave, Self.retitle("changed"), Self.comeBack, Self.retitle("again"), Self.leave, Self.delete,
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        // Read last, so that no page was loaded before the commits after each snapshot.
        #expect(try Self.titles(after[5]) == [])
        #expect(try Self.titles(after[4]) == [])
        #expect(try Self.titles(after[3]) == ["again"] + Self.shown.dropFirst())
        #expect(try Self.titles(after[2]) == ["changed"] + Self.shown.dropFirst())
        #expect(try Self.titles(old) == Self.shown)
    }
}
