import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// Seeded random sequences of writes and option changes. After every step, for every
/// controller: the batch passes the validator, replays on the previous snapshot to the new
/// one, and the new snapshot equals a fresh fetch. A failure prints its seed and step.
@Suite struct ResultsPropertyTests {
    /// Checks one controller after one step.
    final class Checker<Section: Hashable & Sendable>: @unchecked Sendable {
        let store: Store
        let controller: ResultsController<Note, Section>
        let recorder = DeliveryRecorder<Note, Section>()
        var seen = 0
        var shown: ResultsSnapshot<Note, Section>

        /// Independent of the engine: whether a note is shown at all, and in which section.
        let rule: Rule<Section>

        init(
            store: Store, request: ResultsRequest<Note, Section>, forceRefetch: Bool, rule: Rule<Section>,
            loading: ResultsLoading = .eager
        ) throws {
            self.store = store
            self.rule = rule
            controller = try ResultsController(
                store: store, request: request, loading: loading, deliveryQueue: DispatchQueue(label: "strata.tests.property"))
            controller.checksInvariants = true
            controller.engineForTesting.policy = forceRefetch ? .always : .never
            controller.coordinate(recorder)
            controller.waitForDeliveries()
            shown = controller.snapshot
            seen = 1
        }

        func check(_ context: String) throws -> Bool {
            controller.waitForDeliveries()
            let updates = recorder.updates
            guard replayBatches(updates[seen...], on: &shown, context) else { return false }
            seen = updates.count
            let fresh = try ResultsController(
                store: store, request: controller.request, options: controller.options,
                deliveryQueue: DispatchQueue(label: "strata.tests.fresh"))
            guard shown == fresh.snapshot, controller.snapshot == shown else {
                Issue.record(
                    "state differs from a fresh fetch \(context), sections of \(Section.self)\nshown:\n\(shown)\nfresh:\n\(fresh.snapshot)")
                return false
            }
            return try checkAgainstSQL(context)
        }

        /// The snapshot against an oracle that shares nothing with the engine but the SQL
        /// builder: the request's rows in SQLite's `ORDER BY` order, grouped by the rule,
        /// with the options applied by hand.
        func checkAgainstSQL(_ context: String) throws -> Bool {
            let (ordered, world) = try store.read { db in
                (try db.fetchAll(controller.request), try World(db))
            }
            let position = Dictionary(uniqueKeysWithValues: ordered.enumerated().map { ($1.id, $0) })
            let options = controller.options
            var seen = Set<Note.ID>()
            for section in shown.sections {
                let members = section.rows.flatMap { row -> [Note] in
                    switch row {
                    case .item(let note): [note]
                    case .group(let notes): notes
                    }
                }
                for note in members {
                    guard position[note.id] != nil, seen.insert(note.id).inserted,
                          rule.section(note, world) == section.value
                    else {
                        Issue.record("note \(note.id) does not belong in \(section.value) \(context)")
                        return false
                    }
                }
                let inOrder = members.sorted { position[$0.id]! < position[$1.id]! }.map { ordered[position[$0.id]!] }
                var accepted = inOrder.filter { options.filter?($0) ?? true }
                let rejected = inOrder.filter { !(options.filter?($0) ?? true) }
                if let comparator = options.comparator {
                    // Insertion sort: stable, and nothing like the engine's.
                    var sorted: [Note] = []
                    for note in accepted {
                        let index = sorted.lastIndex { !comparator(note, $0) }.map { $0 + 1 } ?? 0
                        sorted.insert(note, at: index)
                    }
                    accepted = sorted
                }
                var rows = accepted.map { ResultsRow.item($0) }
                if options.groupFilteredItems && !rejected.isEmpty { rows.append(.group(rejected)) }
                guard section.rows == rows else {
                    Issue.record("section \(section.value) differs from SQL order with the options \(context)")
                    return false
                }
            }
            let visible = { (note: Note) in options.groupFilteredItems || (options.filter?(note) ?? true) }
            let missing = ordered.filter { rule.isShown($0, world) && visible($0) && !seen.contains($0.id) }
            guard missing.isEmpty else {
                Issue.record("notes \(missing.map(\.id)) missing \(context)")
                return false
            }
            return true
        }
    }

    /// What the oracle reads besides the request's rows.
    struct World {
        var notebooks: [Notebook.ID: Notebook] = [:]
        var noteCounts: [Notebook.ID: Int] = [:]

        init(_ db: Database) throws {
            for notebook in try Notebook.fetchAll(db) { notebooks[notebook.id] = notebook }
            for note in try Note.fetchAll(db) {
                if let id = note.notebookID { noteCounts[id, default: 0] += 1 }
            }
        }
    }

    /// A request's grouping, restated for the oracle.
    struct Rule<Section: Hashable & Sendable>: Sendable {
        /// The section a shown note belongs in.
        var section: @Sendable (Note, World) -> SectionValue<Section>
        /// Whether a note of the request is shown when no post-filter hides it (its section is shown).
        var isShown: @Sendable (Note, World) -> Bool
    }

    static let byNotebookRule = Rule<Notebook>(
        section: { note, world in note.notebookID.flatMap { world.notebooks[$0] }.map { .value($0) } ?? .orphans },
        isShown: { note, _ in note.notebookID != nil })
    static let byPriorityRule = Rule<Priority>(section: { note, _ in .value(note.priority) }, isShown: { _, _ in true })
    static let orphanRule = Rule<Notebook>(
        section: byNotebookRule.section,
        isShown: { note, world in note.notebookID.flatMap { world.notebooks[$0] }.map { $0.position != 2 } ?? true })
    static let firstLetterRule = Rule<String>(
        section: { note, _ in
            .value(note.title.first.map { String($0).uppercased().precomposedStringWithCanonicalMapping } ?? "")
        },
        isShown: { _, _ in true })
    static let flatRule = Rule<NoSection>(section: { _, _ in .value(NoSection()) }, isShown: { _, _ in true })
    static let notebookNameRule = Rule<String?>(
        section: { note, world in .value(note.notebookID.flatMap { world.notebooks[$0]?.name }) },
        isShown: { _, _ in true })
    static let busyNotebooksRule = Rule<Notebook>(
        section: byNotebookRule.section,
        isShown: { note, world in note.notebookID.map { world.noteCounts[$0, default: 0] > 1 } ?? false })

    static let orphanRequest = ResultsRequest<Note, Notebook>(
        where: Note.notebook.name != "Hidden",
        sortedBy: [Note.notebook.position.descending, Note.priority.ascending, Note.title.ascending],
        sections: .entity(Note.notebook, sortedBy: [Notebook.name.descending], where: Notebook.position != 2, orphans: true))

    static let firstLetterRequest = ResultsRequest<Note, String>(
        where: Note.pinned == false || Note.notebook.position > 1,
        sortedBy: [Note.updatedAt.descending], sections: .firstLetter(of: Note.title, descending: true))

    /// Keyed by a value read through a to-one relationship (nil for notes without notebook).
    static let notebookNameRequest = ResultsRequest<Note, String?>(
        where: Note.priority != .low, sortedBy: [Note.pinned.descending, Note.title.ascending],
        sections: .key(Note.notebook.name, descending: true))

    /// Sections whose predicate reads other rows (a to-many count): re-read whole.
    static let busyNotebooksRequest = ResultsRequest<Note, Notebook>(
        sortedBy: [Note.title.ascending],
        sections: .entity(Note.notebook, sortedBy: [Notebook.name.ascending], where: Notebook.notes.count > 1))

    static let taggedRequest = ResultsRequest<Note, Priority>(
        where: Note.tags.any(Tag.name == "t1") || Note.tags.count > 1,
        sortedBy: [Note.title.descending], sections: .key(Note.priority, descending: true))

    @Test(arguments: [
        (UInt64(1), false), (2, false), (3, false), (4, false), (5, false), (6, false), (7, false), (8, false),
        (9, true), (10, true), (11, true),
    ])
    func randomOperations(seed: UInt64, forceRefetch: Bool) throws {
        var random = SeededGenerator(seed: seed)
        let store = try Store.inMemory(schema: NotesModel.schema)
        let trace = store.traceStatements()
        let byNotebook = try Checker(
            store: store, request: Note.Fetches.byNotebook, forceRefetch: forceRefetch, rule: Self.byNotebookRule)
        let byNotebookReads = try ItemReads(lastFullFetchIn: trace.statements)
        var byNotebookFetches = 0, byNotebookRowReads = 0
        let byPriority = try Checker(
            store: store, request: Note.Fetches.byPriority, forceRefetch: forceRefetch, rule: Self.byPriorityRule)
        let orphans = try Checker(store: store, request: Self.orphanRequest, forceRefetch: forceRefetch, rule: Self.orphanRule)
        let letters = try Checker(
            store: store, request: Self.firstLetterRequest, forceRefetch: forceRefetch, rule: Self.firstLetterRule)
        let flat = try Checker(store: store, request: Note.Fetches.pinned, forceRefetch: forceRefetch, rule: Self.flatRule)
        let tagged = try Checker(store: store, request: Self.taggedRequest, forceRefetch: forceRefetch, rule: Self.byPriorityRule)
        let byNotebookName = try Checker(
            store: store, request: Self.notebookNameRequest, forceRefetch: forceRefetch, rule: Self.notebookNameRule)
        let busyNotebooks = try Checker(
            store: store, request: Self.busyNotebooksRequest, forceRefetch: forceRefetch, rule: Self.busyNotebooksRule)
        let titles = ["a", "b", "c", "Ab", "ba", "x", "xy", "é", "e\u{301}", ""]
        var notebookCounter = 0
        let filters: [(@Sendable (Note) -> Bool)?] = [nil, { !$0.title.hasPrefix("x") }, { $0.title.count % 2 == 0 }]
        let comparators: [(@Sendable (Note, Note) -> Bool)?] = [nil, { $0.title.count < $1.title.count }]

        for step in 0..<120 {
            let operation = Int.random(in: 0..<12, using: &random)
            if operation == 11 {
                // Options toggle, the same on every controller.
                let options = ResultsOptions<Note>(
                    filter: filters.randomElement(using: &random)!, comparator: comparators.randomElement(using: &random)!,
                    groupFilteredItems: Bool.random(using: &random))
                byNotebook.controller.options = options
                byPriority.controller.options = options
                orphans.controller.options = options
                letters.controller.options = options
                flat.controller.options = options
                tagged.controller.options = options
                byNotebookName.controller.options = options
                busyNotebooks.controller.options = options
            } else {
                trace.removeAll()
                try Self.randomCommit(
                    store, writes: Int.random(in: 1...3, using: &random), kinds: 0..<15, titles: titles,
                    counter: &notebookCounter, random: &random)
                // Read before the checks, whose fresh controllers fetch too.
                byNotebookFetches += byNotebookReads.fullFetches(in: trace.statements)
                byNotebookRowReads += byNotebookReads.rowReads(in: trace.statements).count
            }
            let context = "(seed \(seed), step \(step), operation \(operation))"
            guard try byNotebook.check(context), try byPriority.check(context), try orphans.check(context),
                try letters.check(context), try flat.check(context), try tagged.check(context),
                try byNotebookName.check(context), try busyNotebooks.check(context)
            else { return }
        }
        // Every controller saw a good number of batches (the sequences exercise them all).
        for (name, seen) in [
            ("byNotebook", byNotebook.seen), ("byPriority", byPriority.seen), ("orphans", orphans.seen),
            ("letters", letters.seen), ("flat", flat.seen), ("tagged", tagged.seen),
            ("byNotebookName", byNotebookName.seen), ("busyNotebooks", busyNotebooks.seen),
        ] {
            #expect(seen > 10, "seed \(seed): \(name) only had \(seen) deliveries")
        }
        // The statement trace shows which path the controller took.
        if forceRefetch {
            #expect(byNotebookRowReads == 0 && byNotebookFetches > 10, "seed \(seed)")
        } else {
            #expect(byNotebookFetches == 0 && byNotebookRowReads > 10, "seed \(seed)")
        }
    }

    /// Without post-fetch options, batches come from the engine's journal of changed rows;
    /// commits of up to 12 writes exercise several changed rows in one section.
    @Test(arguments: [UInt64(21), 22, 23, 24, 25, 26])
    func randomCommitsFromTheJournal(seed: UInt64) throws {
        try journalSequence(seed: seed, inBulk: false)
    }

    /// The same, with every commit too large to patch: the index is rebuilt where the commit
    /// touched it, in passes over its sections (``SectionedIndex/replaceInBulk(gone:fetched:)``),
    /// and the touched sections are derived again. Its batches must be those of the item by
    /// item path: valid, replayed exactly, equal to a fresh fetch and the SQL oracle.
    @Test(arguments: [UInt64(31), 32, 33, 34])
    func randomCommitsAppliedInBulk(seed: UInt64) throws {
        try journalSequence(seed: seed, inBulk: true)
    }

    /// The same, with the sections of every bulk commit merged on several threads (on a
    /// machine with more than one core), as commits of tens of thousands of rows are.
    @Test(arguments: [UInt64(41), 42])
    func randomCommitsMergedInParallel(seed: UInt64) throws {
        try journalSequence(seed: seed, inBulk: true, parallel: true)
    }

    /// The parallel map behind the bulk merge keeps each result at its index, whether it runs
    /// on several threads or on one.
    @Test func parallelMapKeepsTheOrder() {
        let expected = (0..<200).map { $0 * $0 }
        #expect(SectionedIndex<NoSection, FullIndexKeys>.map(200, parallel: true) { $0 * $0 } == expected)
        #expect(SectionedIndex<NoSection, FullIndexKeys>.map(200, parallel: false) { $0 * $0 } == expected)
        #expect(SectionedIndex<NoSection, FullIndexKeys>.map(0, parallel: true) { $0 }.isEmpty)
    }

    private func journalSequence(seed: UInt64, inBulk: Bool, parallel: Bool = false) throws {
        var random = SeededGenerator(seed: seed)
        let store = try Store.inMemory(schema: NotesModel.schema)
        let trace = store.traceStatements()
        let checkers = (
            try Checker(store: store, request: Note.Fetches.byNotebook, forceRefetch: false, rule: Self.byNotebookRule),
            try Checker(store: store, request: Note.Fetches.byPriority, forceRefetch: false, rule: Self.byPriorityRule),
            try Checker(store: store, request: Self.orphanRequest, forceRefetch: false, rule: Self.orphanRule),
            try Checker(store: store, request: Self.firstLetterRequest, forceRefetch: false, rule: Self.firstLetterRule),
            try Checker(store: store, request: Self.notebookNameRequest, forceRefetch: false, rule: Self.notebookNameRule)
        )
        if inBulk {
            let patchNothing = RefetchPolicy(
                minimum: .max, patchLimit: 0, patchLimitPerSection: 0, parallelMergeMinimum: parallel ? 0 : 20_000)
            checkers.0.controller.engineForTesting.policy = patchNothing
            checkers.1.controller.engineForTesting.policy = patchNothing
            checkers.2.controller.engineForTesting.policy = patchNothing
            checkers.3.controller.engineForTesting.policy = patchNothing
            checkers.4.controller.engineForTesting.policy = patchNothing
        }
        // The first checker's fetch is the first item query of the trace.
        let reads = ItemReads(query: try #require(trace.statements.first { ItemReads.isNoteQuery($0) }))
        var journaled = 0
        let titles = ["a", "b", "c", "Ab", "ba", "x", "xy", "é", "e\u{301}", ""]
        var notebookCounter = 0
        for step in 0..<80 {
            let count = Int.random(in: 1...12, using: &random)
            trace.removeAll()
            try Self.randomCommit(
                store, writes: count, kinds: 0..<11, titles: titles, counter: &notebookCounter, random: &random)
            // An incremental commit re-reads rows by id; without post-fetch options its
            // batch then comes from the engine's journal.
            if reads.fullFetches(in: trace.statements) == 0 && !reads.rowReads(in: trace.statements).isEmpty {
                journaled += 1
            }
            let context = "(seed \(seed), step \(step), \(count) writes)"
            guard try checkers.0.check(context), try checkers.1.check(context), try checkers.2.check(context),
                try checkers.3.check(context), try checkers.4.check(context)
            else { return }
        }
        #expect(journaled > 20, "seed \(seed): only \(journaled) commits were applied incrementally")
    }

    /// One transaction of `writes` random writes of the given kinds (see ``randomWrite``).
    static func randomCommit(
        _ store: Store, writes: Int, kinds: Range<Int>, titles: [String], counter: inout Int,
        random: inout SeededGenerator
    ) throws {
        var randomCopy = random, counterCopy = counter
        try store.write { db in
            for _ in 0..<writes {
                try randomWrite(
                    db, Int.random(in: kinds, using: &randomCopy), titles: titles, counter: &counterCopy,
                    random: &randomCopy)
            }
        }
        random = randomCopy
        counter = counterCopy
    }

    static func randomWrite(
        _ db: Database, _ kind: Int, titles: [String], counter: inout Int, random: inout SeededGenerator
    ) throws {
        let notebooks = try Notebook.fetchAll(db)
        let notes = try Note.fetchAll(db)
        func someNotebook() -> Notebook.ID? {
            Int.random(in: 0..<5, using: &random) == 0 ? nil : notebooks.randomElement(using: &random)?.id
        }
        switch kind {
        case 0, 1, 2:  // insert a note
            var note = Note(
                title: titles.randomElement(using: &random)!, pinned: Bool.random(using: &random),
                priority: Priority.allCases.randomElement(using: &random)!,
                updatedAt: day.addingTimeInterval(Double(Int.random(in: 0..<5, using: &random))),
                notebookID: someNotebook())
            try note.insert(db)
        case 3, 4:  // update a note
            guard var note = notes.randomElement(using: &random) else { return }
            switch Int.random(in: 0..<4, using: &random) {
            case 0: note.title = titles.randomElement(using: &random)!
            case 1: note.pinned.toggle()
            case 2: note.priority = Priority.allCases.randomElement(using: &random)!
            default: note.body += "."
            }
            try note.update(db)
        case 5:  // re-parent a note
            guard var note = notes.randomElement(using: &random) else { return }
            note.notebookID = someNotebook()
            try note.update(db)
        case 6:  // delete a note
            guard let note = notes.randomElement(using: &random) else { return }
            try note.delete(db)
        case 7:  // insert a notebook
            counter += 1
            var notebook = Notebook(name: "N\(counter)", createdAt: day, position: Int.random(in: 0..<4, using: &random))
            try notebook.insert(db)
        case 8:  // rename a notebook
            guard var notebook = notebooks.randomElement(using: &random) else { return }
            counter += 1
            notebook.name = Int.random(in: 0..<3, using: &random) == 0 ? "A\(counter)" : "M\(counter)"
            if Int.random(in: 0..<4, using: &random) == 0, !notebooks.contains(where: { $0.name == "Hidden" }) { notebook.name = "Hidden" }
            try notebook.update(db)
        case 9:  // move a notebook
            guard var notebook = notebooks.randomElement(using: &random) else { return }
            notebook.position = Int.random(in: 0..<4, using: &random)
            try notebook.update(db)
        case 10:  // delete a notebook (its notes cascade), or replace it by raw SQL (the same)
            guard let notebook = notebooks.randomElement(using: &random) else { return }
            if Int.random(in: 0..<3, using: &random) == 0 {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES (?, ?, ?)",
                    arguments: [notebook.name, day, Int.random(in: 0..<4, using: &random)])
            } else {
                try notebook.delete(db)
            }
        case 11, 13, 14:  // tag a note
            guard let note = notes.randomElement(using: &random) else { return }
            let name = ["t1", "t2", "t3"].randomElement(using: &random)!
            var tag = try Tag.filter(Column("name") == name).fetchOne(db) ?? Tag(name: name)
            if !tag.id.isSaved { try tag.insert(db) }
            try db.execute(
                sql: "INSERT OR IGNORE INTO Note_tags (noteID, tagID) VALUES (?, ?)", arguments: [note.id, tag.id])
        default:  // untag a note, or delete a tag
            if Bool.random(using: &random) {
                try db.execute(sql: "DELETE FROM Note_tags WHERE rowid IN (SELECT rowid FROM Note_tags ORDER BY rowid LIMIT 1)")
            } else if let tag = try Tag.fetchAll(db).randomElement(using: &random) {
                try tag.delete(db)
            }
        }
    }
}
