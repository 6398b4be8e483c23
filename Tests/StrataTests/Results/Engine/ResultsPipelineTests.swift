import Foundation
import GRDB
import Testing

@testable import Strata

/// The pipeline on its own (``ResultsPipeline``), driven as its doc comment says a results
/// controller drives it, without a controller: a first fetch that makes no step, a commit
/// handler that hands it each commit on the writer, options, and a user edit's steps. After
/// every input: the last computed snapshot equals a fresh fetch, a step's version counts the
/// steps, and a step's batch replays the previous computed snapshot into the new one.
@Suite("Results pipeline, alone")
struct ResultsPipelineTests {
    /// A store, a pipeline over `Note.Fetches.byNotebook`, and the steps of its commits.
    final class Drive: @unchecked Sendable {
        let store: Store
        let pipeline: ResultsPipeline<Note, Notebook>
        /// The consumers asked for reloads.
        var reloads = false
        private var steps: [ResultsStep<Note, Notebook>] = []
        private var calls = 0
        private var observation: CommitObservation?

        init(_ setUp: (Database) throws -> Void = { _ in }) throws {
            store = try Store.inMemory(schema: NotesModel.schema)
            try store.write(setUp)
            pipeline = ResultsPipeline(engine: try Self.engine(store))
            pipeline.checksInvariants = true
            let first = try store.writer.writeWithoutTransaction { db in try self.pipeline.fetch(db, reload: false) }
            #expect(first == nil, "the first fetch makes no step")
            #expect(pipeline.version == 0)
            observation = store.observeCommits(reading: { [unowned self] changes, db in
                calls += 1
                do {
                    if let step = try pipeline.commit(changes, db, reloads: reloads) { steps.append(step) }
                } catch {
                    Issue.record("commit failed: \(error)")
                }
            })
        }

        static func engine(_ store: Store, options: ResultsOptions<Note> = ResultsOptions()) throws -> any AnyResultsEngine<Note, Notebook> {
            try ResultsEngine<Note, Notebook, EagerLoading<Note>>.make(
                request: Note.Fetches.byNotebook, schema: store.schema, options: options)
        }

        /// The step of the commit `body` makes (nil: none), checked against the invariants.
        func commit(
            _ body: (Database) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
        ) throws -> ResultsStep<Note, Notebook>? {
            let before = pipeline.computed, version = pipeline.version
            steps = []
            calls = 0
            try store.write(body)
            #expect(calls <= 1, "one commit, at most one input", sourceLocation: sourceLocation)
            #expect(steps.count <= 1, sourceLocation: sourceLocation)
            let step = steps.first
            try check(step, from: before, version: version, sourceLocation: sourceLocation)
            return step
        }

        /// The pipeline's state after an input that made `step` (or none) from `before`.
        func check(
            _ step: ResultsStep<Note, Notebook>?, from before: ResultsSnapshot<Note, Notebook>, version: Int,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            #expect(pipeline.computed == (try fresh()), "the computed snapshot is a fresh fetch's", sourceLocation: sourceLocation)
            guard let step else {
                #expect(pipeline.version == version, "no step, same version", sourceLocation: sourceLocation)
                #expect(pipeline.computed == before, sourceLocation: sourceLocation)
                return
            }
            #expect(step.version == version + 1 && pipeline.version == step.version, sourceLocation: sourceLocation)
            #expect(step.snapshot == pipeline.computed, sourceLocation: sourceLocation)
            switch step.change {
            case .unchanged:
                #expect(before == step.snapshot, "an unchanged step changes nothing shown", sourceLocation: sourceLocation)
            case .update(.batch(let batch, let new), let touched):
                #expect(!batch.isEmpty, sourceLocation: sourceLocation)
                #expect(try batch.apply(to: before, reading: new) == new, "\(batch) replays", sourceLocation: sourceLocation)
                #expect(touched == batch.touchedSections(from: before, to: new), sourceLocation: sourceLocation)
            case .update(.reload(let new), let touched):
                #expect(reloads && new == step.snapshot && touched == nil, sourceLocation: sourceLocation)
            case .refetchedInPages:
                Issue.record("eager results never make a reload of pages", sourceLocation: sourceLocation)
            }
        }

        /// A fresh fetch's snapshot, with the pipeline's options: the reference.
        func fresh() throws -> ResultsSnapshot<Note, Notebook> {
            let reference = ResultsPipeline(engine: try Self.engine(store, options: pipeline.options))
            _ = try store.writer.writeWithoutTransaction { db in try reference.fetch(db, reload: false) }
            return reference.computed
        }
    }

    @Test("the first fetch makes no step; each commit that changes the results makes one, numbered")
    func commitsMakeNumberedSteps() throws {
        let drive = try Drive { db in
            let work = try db.notebook("Work", position: 0)
            try db.notebook("Home", position: 1)
            try db.note("a", in: work)
        }
        #expect(drive.pipeline.computed.sections.count == 2)
        let insert = try drive.commit { db in try db.note("b", in: try db.notebook(named: "Home")) }
        #expect(insert?.version == 1)
        let rename = try drive.commit { db in
            var a = try db.note(titled: "a")
            a.title = "z"
            try a.update(db)
        }
        #expect(rename?.version == 2)
        let delete = try drive.commit { db in _ = try Note.deleteAll(db) }
        #expect(delete?.version == 3)
    }

    @Test("a commit the request does not read makes no step")
    func unreadCommitMakesNoStep() throws {
        let drive = try Drive { db in try db.note("a") }
        #expect(try drive.commit { db in try db.execute(sql: "INSERT INTO Tag (name) VALUES ('x')") } == nil)
    }

    @Test("reloads: a change is a reload step, its snapshot the new state")
    func reloadSteps() throws {
        let drive = try Drive { db in try db.note("a", in: try db.notebook("Work")) }
        drive.reloads = true
        let step = try drive.commit { db in try db.note("b", in: try db.notebook(named: "Work")) }
        guard case .update(.reload, _) = step?.change else {
            Issue.record("a reload step: \(String(describing: step?.change))")
            return
        }
    }

    @Test("options: a step only when publishing; the next step starts from the options' snapshot")
    func optionsSteps() throws {
        let drive = try Drive { db in
            let work = try db.notebook("Work")
            try db.note("a", in: work)
            try db.note("b", in: work)
        }
        var options = ResultsOptions<Note>()
        options.filter = { $0.title != "b" }
        let before = drive.pipeline.computed, version = drive.pipeline.version
        #expect(try drive.pipeline.setOptions(options, publishing: false, reloads: false) == nil)
        #expect(drive.pipeline.version == version && drive.pipeline.computed == before, "paused: nothing computed")
        let step = try drive.pipeline.setOptions(options, publishing: true, reloads: false)
        try drive.check(step, from: before, version: version)
        #expect(drive.pipeline.computed.sections.first?.rows.map { $0.item?.title } == ["a"])
        _ = try drive.commit { db in try db.note("c", in: try db.notebook(named: "Work")) }
        #expect(drive.pipeline.computed.sections.first?.rows.map { $0.item?.title } == ["a", "c"])
    }

    @Test("a user edit: the version before its commit, settled only while no step follows")
    func editVersions() throws {
        let drive = try Drive { db in try db.note("a", in: try db.notebook("Work")) }
        _ = try drive.commit { db in try db.note("b", in: try db.notebook(named: "Work")) }
        let section = drive.pipeline.computed.sections[0].id
        let version = drive.pipeline.beginEdit(of: 1, in: section, at: 0)
        #expect(version == drive.pipeline.version)
        #expect(drive.pipeline.settled(since: version) == drive.pipeline.computed, "no step since: the computed snapshot")
        _ = try drive.commit { db in try db.note("c", in: try db.notebook(named: "Work")) }
        #expect(drive.pipeline.settled(since: version) == nil, "a step followed: it resolves the edit")
    }

    @Test("an edit's snapshot is the delivered one with the edit made, and its batch replays")
    func editedSnapshot() throws {
        let drive = try Drive { db in
            let work = try db.notebook("Work")
            try db.note("a", in: work)
            try db.note("b", in: work)
        }
        let delivered = drive.pipeline.computed
        let path = ItemPath(section: 0, item: 0)
        let (new, batch, touched) = drive.pipeline.edited(.delete(path), of: delivered)
        #expect(new.sections[0].rows.map { $0.item?.title } == ["b"])
        #expect(batch.userEdit == .delete && batch.itemDeletes == [path])
        #expect(try batch.apply(to: delivered, reading: new) == new)
        #expect(touched == [delivered.sections[0].id])
        #expect(drive.pipeline.computed == delivered, "an edit's snapshot is not a step")
    }

    @Test("random commits: every step replays the last computed snapshot into a fresh fetch's")
    func randomCommits() throws {
        let seed = partTestSeed("ResultsPipelineTests.randomCommits")
        var random = SeededGenerator(seed: seed)
        let drive = try Drive { db in
            for (i, name) in ["Work", "Home", "Misc"].enumerated() { try db.notebook(name, position: i) }
        }
        for _ in 0..<60 {
            let choice = Int.random(in: 0..<6, using: &random)
            let title = "t\(Int.random(in: 0..<12, using: &random))"
            let pinned = Bool.random(using: &random)
            let notebook = Int64.random(in: 1...4, using: &random)  // 4: no notebook
            let target = Int.random(in: 0..<1_000, using: &random)
            _ = try drive.commit { db in
                let ids = try Int64.fetchAll(db, sql: "SELECT id FROM Note ORDER BY id")
                let parent = notebook == 4 ? nil : try Notebook.fetchOne(db, key: notebook)
                switch choice {
                case 0, 1:
                    try db.note(title, in: parent, pinned: pinned)
                case 2 where !ids.isEmpty:
                    var note = try Note.fetchOne(db, key: ids[target % ids.count])!
                    note.title = title
                    note.pinned = pinned
                    try note.update(db)
                case 3 where !ids.isEmpty:
                    var note = try Note.fetchOne(db, key: ids[target % ids.count])!
                    note.notebookID = parent?.id
                    try note.update(db)
                case 4 where !ids.isEmpty:
                    _ = try Note.deleteOne(db, key: ids[target % ids.count])
                default:
                    try db.execute(sql: "UPDATE Note SET pinned = NOT pinned WHERE id % 3 = ?", arguments: [target % 3])
                }
            }
        }
    }
}
