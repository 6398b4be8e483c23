import Foundation
import GRDB
import StrataTestSupport
import Testing

@testable import Strata

/// Each loading on its own (``EagerLoading``, ``BatchedLoading``), driven through
/// ``ItemLoading`` the way the engine drives it but without the engine or its tracker: a
/// fetch, then seeded random commits, each handed to the loading as the changes the test
/// itself made (``ResultsQueryPlan/TrackedChanges``, with unchanged rows added to what is
/// re-read, which must change nothing). After every commit the parts keep their invariants,
/// the snapshot equals a plain reference read with SQL (not with the results code), and every
/// snapshot made earlier still reads as the state it was made in.
@Suite("Each loading, alone")
struct ItemLoadingTests {
    /// One of the two loadings over `Note.Fetches.byNotebook`, in a store file of its own.
    final class Drive<Loading: ItemLoading<Note>> {
        let folder: URL
        let store: Store
        let fetcher: ResultsFetcher<Note, Notebook>
        var index: SectionedIndex<Notebook, Loading.Keys>
        var journal = SnapshotJournal<Note, Notebook>(options: ResultsOptions())
        var loading: Loading
        let policy: RefetchPolicy

        init(policy: RefetchPolicy, makeLoading: (Store, String) -> Loading) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-loading-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("notes.sqlite").path
            store = try Store(schema: NotesModel.schema, path: path)
            let plan = try ResultsQueryPlan(request: Note.Fetches.byNotebook, schema: store.schema)
            fetcher = ResultsFetcher(plan: plan)
            index = SectionedIndex(kind: plan.sectionKind, itemDescending: plan.itemDescending)
            loading = makeLoading(store, path)
            self.policy = policy
        }

        deinit {
            try? store.close()
            try? FileManager.default.removeItem(at: folder)
        }

        /// A fresh fetch; `written`: the only rows changed since the state held, as a commit's
        /// refetch says.
        func fetchAll(written: CommittedChanges.TableChanges? = nil) throws {
            try store.writer.writeWithoutTransaction { db in
                if let written {
                    try loading.fetchAll(db, fetcher: fetcher, index: &index, journal: &journal, afterWriting: written)
                } else {
                    try loading.fetchAll(db, fetcher: fetcher, index: &index, journal: &journal)
                }
            }
        }

        /// Hands a commit that already happened to the loading, as the engine does.
        func apply(_ tracked: ResultsQueryPlan.TrackedChanges) throws {
            try store.writer.writeWithoutTransaction { db in
                journal.beginCommit()
                try loading.apply(tracked, db, fetcher: fetcher, index: &index, journal: &journal, policy: policy)
            }
        }

        func snapshot() -> ResultsSnapshot<Note, Notebook> { loading.snapshotAndChanges(&journal, index).snapshot }

        func checkInvariants() {
            index._checkInvariants()
            loading._checkInvariants(against: index, journal: journal)
            journal._checkInvariants(against: index)
        }
    }

    /// What a snapshot shows, as plain values: each section's notebook and its notes in order.
    struct Shown: Equatable, CustomStringConvertible {
        var sections: [(notebook: Notebook, notes: [Note])]

        static func == (a: Shown, b: Shown) -> Bool {
            a.sections.count == b.sections.count
                && zip(a.sections, b.sections).allSatisfy { $0.notebook == $1.notebook && $0.notes == $1.notes }
        }

        var description: String {
            sections.map { "\($0.notebook.name): " + $0.notes.map { "\($0.id.rawValue) \($0.title)" }.joined(separator: ", ") }
                .joined(separator: " | ")
        }

        /// The reference: read with SQL alone, in the request's documented order (sections by
        /// position, then name; notes pinned first, then by title; ties by id). Notes without
        /// a notebook are in no section; a notebook without notes shows no section.
        static func reference(_ db: Database) throws -> Shown {
            let notebooks = try Notebook.fetchAll(db, sql: "SELECT * FROM Notebook ORDER BY position, name, id")
            let notes = try Note.fetchAll(db, sql: "SELECT * FROM Note ORDER BY pinned DESC, title, id")
            let byNotebook = Dictionary(grouping: notes.filter { $0.notebookID != nil }, by: { $0.notebookID! })
            return Shown(sections: notebooks.compactMap { notebook in
                guard let notes = byNotebook[notebook.id], !notes.isEmpty else { return nil }
                return (notebook, notes)
            })
        }

        /// What `snapshot` shows, reading its rows (a batched snapshot loads its pages).
        init(_ snapshot: ResultsSnapshot<Note, Notebook>) {
            sections = snapshot.sections.compactMap { section in
                let notes = section.rows.compactMap(\.item)
                guard let notebook = section.value.object, !notes.isEmpty else { return nil }
                return (notebook, notes)
            }
        }

        init(sections: [(notebook: Notebook, notes: [Note])]) { self.sections = sections }
    }

    enum Kind: String, CaseIterable { case eager, batched }

    /// An eager loading over 40 notes, its snapshot taken (the refetch keeps its state, as
    /// after a delivery), then a commit that retitled notes 1–10, deleted 11–15 and made note
    /// 41, handed to a refetch with the columns `columns` named as written; behind the
    /// loading's back (no commit names them) note 20 got a new body and note 30 a new title
    /// that puts it first.
    private static func refetchAfterACommit(columns: Set<String>, waitingForHeldValues: Bool) throws -> Drive<EagerLoading<Note>> {
        let drive = try Drive(policy: RefetchPolicy()) { _, _ in
            var loading = EagerLoading<Note>()
            loading.waitsForHeldValues = waitingForHeldValues
            return loading
        }
        try drive.store.write { db in
            let work = try db.notebook("Work")
            for i in 0..<40 { _ = try db.note("n\(i)", in: work) }
        }
        try drive.fetchAll()
        _ = drive.snapshot()
        try drive.store.write { db in
            try db.execute(sql: "UPDATE Note SET title = 'renamed ' || title WHERE id <= 10")
            try db.execute(sql: "DELETE FROM Note WHERE id BETWEEN 11 AND 15")
            _ = try db.note("new", in: try db.notebook(named: "Work"))
            try db.execute(sql: "UPDATE Note SET body = 'fresh' WHERE id = 41")
            try db.execute(sql: "UPDATE Note SET body = 'unseen' WHERE id = 20")
            try db.execute(sql: "UPDATE Note SET title = 'a first' WHERE id = 30")
        }
        var written = CommittedChanges.TableChanges()
        written.updated = Set(1...10)
        written.updatedColumns = columns
        written.deleted = Set(11...15)
        written.inserted = [41]
        try drive.fetchAll(written: written)
        drive.checkInvariants()
        return drive
    }

    /// A commit's refetch told the rows a commit wrote but not which columns decodes every
    /// row, and gives its sort the other rows in their last order (their keys did not
    /// change). So a row changed behind the loading's back in its value and in its sort key
    /// still shows as it is now, where it now belongs: the order given is a hint, not trusted.
    @Test("a refetch told the rows a commit wrote shows every row as it is now, in order")
    func refetchAfterWritingShowsEveryRowAsItIs() throws {
        let drive = try Self.refetchAfterACommit(columns: [], waitingForHeldValues: true)
        let reference = try drive.store.read { db in try Shown.reference(db) }
        #expect(Shown(drive.snapshot()) == reference, "every row as it is now, in the results' order")
        #expect(reference.sections.flatMap(\.notes).first?.title == "a first", "the row moved behind the loading's back leads")
        #expect(reference.sections.flatMap(\.notes).contains { $0.body == "unseen" }, "the row changed behind its back")
    }

    /// A commit's refetch told which columns the commit wrote (only `title`) takes each row's
    /// value from the last snapshot's, laid out by id (``HeldValues``), and reads again only
    /// those columns; a row the snapshot did not show (the new one) is decoded whole. So a
    /// title changed behind the loading's back still shows (the title is read again for every
    /// row), while a body changed behind its back keeps the value held: the value taken is
    /// the one held (here the refetch waits for the values to be laid out, so every row takes
    /// its own; in use, the rows read before they are decode whole).
    @Test("a refetch told the columns a commit wrote reads those again into the values held")
    func refetchRereadsTheColumnsWritten() throws {
        // As a statement may spell the column.
        let drive = try Self.refetchAfterACommit(columns: ["TITLE"], waitingForHeldValues: true)
        let shown = Shown(drive.snapshot())
        let reference = try drive.store.read { db in try Shown.reference(db) }
        let notes = shown.sections.flatMap(\.notes)
        #expect(notes.map(\.title) == reference.sections.flatMap(\.notes).map(\.title), "titles read again, in order")
        #expect(notes.map(\.id) == reference.sections.flatMap(\.notes).map(\.id))
        #expect(notes.first { $0.id.rawValue == 20 }?.body == "", "the body held, not read again")
        #expect(notes.first { $0.id.rawValue == 41 }?.body == "fresh", "a new row decoded whole")
        var written = CommittedChanges.TableChanges()
        written.updated = Set(1...10)
        written.updatedColumns = ["TITLE"]
        // Told nothing of the columns, or of more than half of them, or of the key: rows
        // decoded whole.
        #expect(EagerLoading<Note>.columnsToReread(written) == [1])
        var unnamed = written
        unnamed.updatedColumns = []
        #expect(EagerLoading<Note>.columnsToReread(unnamed) == nil)
        var many = written
        many.updatedColumns = ["title", "body", "pinned", "priority"]
        #expect(EagerLoading<Note>.columnsToReread(many) == nil)
        var key = written
        key.updatedColumns = ["id", "title"]
        #expect(EagerLoading<Note>.columnsToReread(key) == nil)
        var other = written
        other.updatedColumns = ["title", "notStored"]
        #expect(EagerLoading<Note>.columnsToReread(other) == [1])
    }

    /// The same through a real commit: the columns the store names for it (`updatedColumns`,
    /// what the refetch reads again) include those a trigger of the app writes, so a refetch
    /// that takes the values held still shows what the trigger wrote.
    @Test("a commit whose trigger writes another column: the refetch reads that column again too")
    func refetchRereadsWhatATriggerWrote() throws {
        let drive = try Drive(policy: RefetchPolicy()) { _, _ in
            var loading = EagerLoading<Note>()
            loading.waitsForHeldValues = true
            return loading
        }
        try drive.store.write { db in
            let work = try db.notebook("Work")
            for i in 0..<40 { _ = try db.note("n\(i)", in: work) }
            try db.execute(sql: """
                CREATE TRIGGER touchBody AFTER UPDATE OF title ON Note
                BEGIN UPDATE Note SET body = 'after ' || NEW.title WHERE id = NEW.id; END
                """)
        }
        try drive.fetchAll()
        _ = drive.snapshot()
        final class Seen: @unchecked Sendable {
            let lock = NSLock()
            var changes: CommittedChanges?
        }
        let seen = Seen()
        let observation = drive.store.observeCommits { changes in seen.lock.withLock { seen.changes = changes } }
        try drive.store.write { db in try db.execute(sql: "UPDATE Note SET title = 'renamed ' || title WHERE id <= 30") }
        withExtendedLifetime(observation) {}
        let written = try #require(seen.lock.withLock { seen.changes }?["Note"])
        #expect(written.updatedColumns == ["title", "body"], "the trigger's column is named")
        #expect(EagerLoading<Note>.columnsToReread(written) == [1, 2])
        try drive.fetchAll(written: written)
        drive.checkInvariants()
        let notes = Shown(drive.snapshot()).sections.flatMap(\.notes)
        #expect(Shown(drive.snapshot()) == (try drive.store.read { db in try Shown.reference(db) }), "as the store holds them")
        #expect(notes.filter { $0.body.hasPrefix("after renamed ") }.count == 30, "the trigger's writes shown")
    }

    @Test("random commits: the snapshot is the reference's, and earlier snapshots keep their state",
          arguments: Kind.allCases, ["default", "patch always", "merge always"])
    func randomCommits(_ kind: Kind, _ policyName: String) throws {
        // How the loading takes a commit's rows: patched in place one by one, or (eager) the
        // changed sections merged again, on several threads when the merge minimum is 0.
        let policy: RefetchPolicy = switch policyName {
        case "patch always": RefetchPolicy(patchLimit: .max, patchLimitPerSection: 0)
        case "merge always": RefetchPolicy(patchLimit: 0, patchLimitPerSection: 0, parallelMergeMinimum: 0)
        default: RefetchPolicy()
        }
        switch kind {
        case .eager:
            try run(Drive(policy: policy) { _, _ in EagerLoading<Note>() }, "\(kind), \(policyName)")
        case .batched:
            try run(Drive(policy: policy) { store, path in
                BatchedLoading<Note>(store: store, path: path, pageSize: 2, cachedPages: 2)
            }, "\(kind), \(policyName)")
        }
    }

    func run<Loading>(_ drive: Drive<Loading>, _ name: String) throws {
        let seed = partTestSeed("ItemLoadingTests.randomCommits(\(name))")
        var random = SeededGenerator(seed: seed)
        try drive.store.write { db in
            for (i, name) in ["Work", "Home", "Misc"].enumerated() { try db.notebook(name, position: i) }
        }
        try drive.fetchAll()
        drive.checkInvariants()
        // Earlier snapshots, each with what it showed when it was made; read again after
        // every commit (a batched snapshot reads unloaded pages then).
        var earlier: [(snapshot: ResultsSnapshot<Note, Notebook>, shown: Shown)] = []
        for round in 0..<40 {
            let context = "\(name), seed \(seed), round \(round)"
            var tracked = ResultsQueryPlan.TrackedChanges(affected: [], deleted: [], own: [], sectionObjects: nil)
            try drive.store.write { db in
                let ids = try Int64.fetchAll(db, sql: "SELECT id FROM Note ORDER BY id")
                let notebooks = try Notebook.fetchAll(db, sql: "SELECT * FROM Notebook ORDER BY id")
                let parent = Int.random(in: 0...notebooks.count, using: &random)  // count: none
                let target = ids.isEmpty ? nil : ids[Int.random(in: 0..<ids.count, using: &random)]
                let title = "t\(Int.random(in: 0..<6, using: &random))"
                switch Int.random(in: 0..<6, using: &random) {
                case 0, 1:
                    for i in 0..<Int.random(in: 1...5, using: &random) {
                        let note = try db.note(
                            "\(title)\(i)", in: parent < notebooks.count ? notebooks[parent] : nil,
                            pinned: Bool.random(using: &random))
                        tracked.affected.insert(note.id.rawValue)
                    }
                case 2 where target != nil:
                    var note = try Note.fetchOne(db, key: target!)!
                    note.title = title
                    note.body = String(repeating: "b", count: Int.random(in: 0...40, using: &random))
                    note.pinned.toggle()
                    try note.update(db)
                    tracked.affected.insert(target!)
                case 3 where target != nil:
                    var note = try Note.fetchOne(db, key: target!)!
                    note.notebookID = parent < notebooks.count ? notebooks[parent].id : nil
                    try note.update(db)
                    tracked.affected.insert(target!)
                case 4 where target != nil:
                    for id in ids where id % 3 == target! % 3 && Bool.random(using: &random) {
                        _ = try Note.deleteOne(db, key: id)
                        tracked.deleted.insert(id)
                    }
                default:
                    var notebook = notebooks[Int.random(in: 0..<notebooks.count, using: &random)]
                    notebook.position = Int.random(in: 0..<4, using: &random)
                    try notebook.update(db)
                    tracked.sectionObjects = [notebook.id.rawValue]
                }
                // Rows re-read that did not change: they must stay as they are.
                for id in ids where !tracked.deleted.contains(id) && Int.random(in: 0..<8, using: &random) == 0 {
                    tracked.affected.insert(id)
                }
            }
            tracked.own = tracked.affected.union(tracked.deleted)
            try drive.apply(tracked)
            drive.checkInvariants()
            let snapshot = drive.snapshot()
            snapshot._checkInvariants()
            let reference = try drive.store.read { db in try Shown.reference(db) }
            #expect(Shown(snapshot) == reference, "\(context): the snapshot is the reference's")
            for (age, old) in earlier.enumerated() {
                #expect(Shown(old.snapshot) == old.shown, "\(context): a snapshot \(earlier.count - age) commits old reads as it was made")
            }
            earlier.append((snapshot, reference))
            if earlier.count > 4 { earlier.removeFirst() }
        }
    }
}
