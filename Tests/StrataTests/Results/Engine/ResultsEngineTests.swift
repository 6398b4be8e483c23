import Foundation
import GRDB
import Testing

@testable import Strata

/// The engine on its own (``ResultsEngine``), driven as its doc comment says the pipeline
/// drives it, without a controller, with each loading: a fetch, then every commit of the store
/// applied on the writer (``ResultsEngine/apply(_:_:)``), which is false exactly for a commit
/// the request does not read. After every commit the engine's parts keep their invariants and
/// its snapshot equals a fresh eager fetch — whatever the refetch policy; leaving batched
/// loading keeps the state.
@Suite("Results engine, alone")
struct ResultsEngineTests {
    enum Loading: CaseIterable { case eager, batched }

    /// A file store (batched loading reads through a second connection) and an engine over
    /// `Note.Fetches.byNotebook` tracking its commits.
    final class Drive: @unchecked Sendable {
        let folder: URL
        let store: Store
        private(set) var engine: any AnyResultsEngine<Note, Notebook>
        /// The last snapshot taken, and what the engine said changed since the one before.
        private(set) var last: ResultsSnapshot<Note, Notebook> = .empty
        private(set) var known: BatchBuilder.Known?
        private var applied: [Bool] = []
        private var observation: CommitObservation?

        init(_ loading: Loading, policy: RefetchPolicy) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-engine-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            store = try Store(schema: NotesModel.schema, path: folder.appendingPathComponent("notes.sqlite").path)
            try store.write { db in
                for (i, name) in ["Work", "Home", "Misc"].enumerated() { try db.notebook(name, position: i) }
            }
            engine = try ResultsEngine<Note, Notebook, EagerLoading<Note>>.make(
                request: Note.Fetches.byNotebook, schema: store.schema, options: ResultsOptions(),
                loading: loading == .eager ? .eager : .batched(pageSize: 2, cachedPages: 2), store: store)
            #expect(engine.isBatched == (loading == .batched))
            engine.policy = policy
            try store.writer.writeWithoutTransaction { db in try self.engine.fetchAll(db) }
            last = engine.snapshot()
            observation = store.observeCommits(reading: { [unowned self] changes, db in
                do {
                    applied.append(try engine.apply(changes, db))
                } catch {
                    Issue.record("apply failed: \(error)")
                }
            })
        }

        deinit {
            observation?.cancel()
            try? store.close()
            try? FileManager.default.removeItem(at: folder)
        }

        /// Whether the engine took the commit `body` makes as changing the results (nil: no
        /// commit), checked against a fresh fetch.
        @discardableResult
        func commit(_ body: (Database) throws -> Void, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool? {
            applied = []
            try store.write(body)
            engine._checkInvariants()
            let (snapshot, known) = engine.snapshotAndChanges()
            (last, self.known) = (snapshot, known)
            #expect(snapshot == (try fresh()), "\(context): the engine's snapshot is a fresh fetch's", sourceLocation: sourceLocation)
            snapshot._checkInvariants()
            return applied.last
        }

        /// A fresh eager fetch's snapshot: the reference.
        func fresh() throws -> ResultsSnapshot<Note, Notebook> {
            let reference = try ResultsEngine<Note, Notebook, EagerLoading<Note>>.make(
                request: Note.Fetches.byNotebook, schema: store.schema, options: ResultsOptions())
            try store.writer.writeWithoutTransaction { db in try reference.fetchAll(db) }
            return reference.snapshot()
        }
    }

    @Test("a commit the request does not read is not applied; one it reads is", arguments: Loading.allCases)
    func appliesWhatItReads(_ loading: Loading) throws {
        let drive = try Drive(loading, policy: RefetchPolicy())
        #expect(try drive.commit({ db in try db.execute(sql: "INSERT INTO Tag (name) VALUES ('x')") }, "a tag") == false)
        #expect(try drive.commit({ db in try db.note("a", in: try db.notebook(named: "Work")) }, "a note") == true)
        #expect(try drive.commit({ db in try db.notebook("Later", position: 9) }, "a section") == true)
    }

    @Test(
        "random commits keep a fresh fetch's snapshot, whatever the loading and the policy",
        arguments: Loading.allCases, ["calibrated", "always", "never"])
    func randomCommits(_ loading: Loading, _ policyName: String) throws {
        let policy: RefetchPolicy = switch policyName {
        case "always": .always
        case "never": .never
        default: RefetchPolicy(minimum: 2)
        }
        let seed = partTestSeed("ResultsEngineTests.randomCommits(\(loading), \(policyName))")
        var random = SeededGenerator(seed: seed)
        let drive = try Drive(loading, policy: policy)
        for round in 0..<40 {
            let choice = Int.random(in: 0..<7, using: &random)
            let title = "t\(Int.random(in: 0..<10, using: &random))"
            let pinned = Bool.random(using: &random)
            let notebook = Int64.random(in: 1...4, using: &random)  // 4: none
            let target = Int.random(in: 0..<1_000, using: &random)
            let count = Int.random(in: 1...6, using: &random)
            try drive.commit({ db in
                let ids = try Int64.fetchAll(db, sql: "SELECT id FROM Note ORDER BY id")
                let parent = notebook == 4 ? nil : try Notebook.fetchOne(db, key: notebook)
                switch choice {
                case 0:
                    for i in 0..<count { try db.note("\(title)\(i)", in: parent, pinned: pinned) }
                case 1 where !ids.isEmpty:
                    var note = try Note.fetchOne(db, key: ids[target % ids.count])!
                    note.title = title
                    note.pinned = pinned
                    try note.update(db)
                case 2 where !ids.isEmpty:
                    var note = try Note.fetchOne(db, key: ids[target % ids.count])!
                    note.notebookID = parent?.id
                    try note.update(db)
                case 3 where !ids.isEmpty:
                    _ = try Note.deleteOne(db, key: ids[target % ids.count])
                case 4:
                    try db.execute(sql: "UPDATE Note SET pinned = NOT pinned WHERE id % ? = 0", arguments: [count])
                case 5 where parent != nil:
                    var object = parent!
                    object.position = target % 5
                    try object.update(db)
                default:
                    try db.note(title, in: parent)
                }
            }, "seed \(seed), round \(round)")
        }
    }

    @Test("a commit's refetch of eager results keeps the last snapshot's ids and values: its batch, by id, is the identity difference")
    func refetchedByID() throws {
        let seed = partTestSeed("ResultsEngineTests.refetchedByID")
        var random = SeededGenerator(seed: seed)
        let drive = try Drive(.eager, policy: .always)
        var refetches = 0
        for round in 0..<40 {
            let before = drive.last
            let choice = Int.random(in: 0..<7, using: &random)
            let notebook = Int64.random(in: 1...4, using: &random)  // 4: none
            let target = Int.random(in: 0..<1_000, using: &random)
            let count = Int.random(in: 1...5, using: &random)
            let changed = try drive.commit({ db in
                let ids = try Int64.fetchAll(db, sql: "SELECT id FROM Note ORDER BY id")
                let parent = notebook == 4 ? nil : try Notebook.fetchOne(db, key: notebook)
                switch choice {
                case 1 where !ids.isEmpty:
                    // Retitles move rows inside their sections; some keep their title.
                    for i in 0..<count { try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: ["t\((target + i) % 4)", ids[(target + i) % ids.count]]) }
                case 2 where !ids.isEmpty:
                    try db.execute(sql: "UPDATE Note SET notebookID = ? WHERE id = ?", arguments: [parent?.id, ids[target % ids.count]])
                case 3 where !ids.isEmpty:
                    _ = try Note.deleteOne(db, key: ids[target % ids.count])
                case 4:
                    try db.execute(sql: "UPDATE Note SET pinned = NOT pinned WHERE id % ? = 0", arguments: [count])
                case 5 where parent != nil:
                    try db.execute(sql: "UPDATE Notebook SET position = ? WHERE id = ?", arguments: [target % 5, notebook])
                default:
                    for i in 0..<count { try db.note("t\(i)", in: parent, pinned: i % 2 == 0) }
                }
            }, "seed \(seed), round \(round)")
            guard changed == true, let known = drive.known else { continue }
            if case .rows = known { continue }  // a section object's change: applied, no row to re-read
            guard case .refetched = known else {
                Issue.record("seed \(seed), round \(round): a refetch said \(known), not the ids it kept")
                continue
            }
            refetches += 1
            let batch = try #require(BatchBuilder.batch(from: before, to: drive.last, known: known))
            #expect(batch == ChangeBatch(from: before, to: drive.last), "seed \(seed), round \(round)")
            #expect(try batch.apply(to: before, reading: drive.last) == drive.last, "seed \(seed), round \(round)")
        }
        #expect(refetches > 20)
        // Rows that are not items (a filter): no ids kept, the identity difference of the rows.
        drive.engine.options = ResultsOptions(filter: { $0.pinned })
        _ = drive.engine.snapshot()
        try drive.store.write { db in try db.note("filtered", in: nil, pinned: true) }
        guard case .anything = drive.engine.snapshotAndChanges().changes else {
            Issue.record("with a filter, a refetch kept ids")
            return
        }
    }

    @Test("leaving batched loading keeps the state; an eager engine is its own eager engine", arguments: Loading.allCases)
    func loadingEagerly(_ loading: Loading) throws {
        let drive = try Drive(loading, policy: RefetchPolicy())
        try drive.commit({ db in
            for i in 0..<7 { try db.note("n\(i)", in: try db.notebook(named: i % 2 == 0 ? "Work" : "Home")) }
        }, "notes")
        let before = drive.engine.snapshot()
        let eager = try drive.engine.loadingEagerly()
        #expect(!eager.isBatched)
        #expect((eager === drive.engine) == (loading == .eager))
        eager._checkInvariants()
        #expect(eager.snapshot() == before)
        #expect(eager.policy == drive.engine.policy)
        #expect(drive.engine.snapshot() == before, "the engine left is as it was")
    }
}

extension AnyResultsEngine {
    /// Whether this engine's values are read in pages: its type's loading (nothing in the
    /// library asks; its steps ask their loading).
    var isBatched: Bool { self is ResultsEngine<Item, Section, BatchedLoading<Item>> }
}
