@_exported import StrataTestSupport
import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// A fixed date, so fetched values compare equal.
let day = Date(timeIntervalSince1970: 1_700_000_000)

/// Renders a snapshot compactly: `Work[a b {c}] Home[]`, orphans as `∅`, group rows in braces.
func text<Section>(_ snapshot: ResultsSnapshot<Note, Section>, name: (Section) -> String) -> String {
    snapshot.sections.map { section in
        let title = section.value.object.map(name) ?? "∅"
        let rows = section.rows.map { row -> String in
            switch row {
            case .item(let note): note.title
            case .group(let notes): "{" + notes.map(\.title).joined(separator: " ") + "}"
            }
        }
        return "\(title)[\(rows.joined(separator: " "))]"
    }.joined(separator: " ")
}

func text(_ snapshot: ResultsSnapshot<Note, Notebook>) -> String { text(snapshot) { $0.name } }
func text(_ snapshot: ResultsSnapshot<Note, Priority>) -> String { text(snapshot) { $0.rawValue } }
func text(_ snapshot: ResultsSnapshot<Note, String>) -> String { text(snapshot) { $0 } }
func text(_ snapshot: ResultsSnapshot<Note, NoSection>) -> String { text(snapshot) { _ in "" } }

/// `batch | snapshot` for each delivery; reloads as `reload | snapshot`.
func lines<Section>(
    _ updates: [ResultsUpdate<Note, Section>], _ render: (ResultsSnapshot<Note, Section>) -> String
) -> [String] {
    updates.map { update in
        switch update {
        case .reload(let snapshot): "reload | " + render(snapshot)
        case .batch(let batch, let snapshot): "\(batch) | " + render(snapshot)
        }
    }
}

/// A store with the fixture model and a controller over it, recorded from the start.
struct Harness<Section: Hashable & Sendable> {
    let store: Store
    let controller: ResultsController<Note, Section>
    let recorder = DeliveryRecorder<Note, Section>()

    init(
        store: Store? = nil, _ request: ResultsRequest<Note, Section>, options: ResultsOptions<Note> = ResultsOptions(),
        setUp: (Database) throws -> Void = { _ in }
    ) throws {
        let store = try store ?? Store.inMemory(schema: NotesModel.schema)
        try store.write(setUp)
        self.store = store
        controller = try ResultsController(
            store: store, request: request, options: options,
            deliveryQueue: DispatchQueue(label: "strata.tests.delivery"))
        controller.checksInvariants = true
        controller.coordinate(recorder)
        controller.waitForDeliveries()
    }

    func write(_ body: (Database) throws -> Void) throws {
        try store.write(body)
        controller.waitForDeliveries()
    }

    /// Every delivery since the last call, checked: valid, replayable, equal to a fresh fetch.
    func check(sourceLocation: SourceLocation = #_sourceLocation) throws {
        controller.waitForDeliveries()
        let updates = recorder.updates
        var previous: ResultsSnapshot<Note, Section>?
        for update in updates {
            switch update {
            case .reload(let snapshot):
                previous = snapshot
            case .batch(let batch, let snapshot):
                guard let old = previous else {
                    Issue.record("batch before any reload", sourceLocation: sourceLocation)
                    return
                }
                try BatchValidator.validate(batch, from: old, to: snapshot)
                #expect(try batch.apply(to: old, reading: snapshot) == snapshot, sourceLocation: sourceLocation)
                #expect(uikitReplay(batch, from: old, to: snapshot) == snapshot, sourceLocation: sourceLocation)
                previous = snapshot
            }
            update.snapshot._checkInvariants()
        }
        let fresh = try ResultsController(
            store: store, request: controller.request, options: controller.options,
            deliveryQueue: DispatchQueue(label: "strata.tests.fresh"))
        #expect(controller.snapshot == fresh.snapshot, sourceLocation: sourceLocation)
        if let previous { #expect(previous == controller.snapshot, sourceLocation: sourceLocation) }
    }
}

extension Database {
    @discardableResult
    func notebook(_ name: String, position: Int = 0) throws -> Notebook {
        var notebook = Notebook(name: name, createdAt: day, position: position)
        try notebook.insert(self)
        return notebook
    }

    @discardableResult
    func note(
        _ title: String, in notebook: Notebook? = nil, pinned: Bool = false, priority: Priority = .normal
    ) throws -> Note {
        var note = Note(title: title, pinned: pinned, priority: priority, updatedAt: day, notebookID: notebook?.id)
        try note.insert(self)
        return note
    }

    func notebook(named name: String) throws -> Notebook {
        try Notebook.filter(Column("name") == name).fetchOne(self)!
    }

    func note(titled title: String) throws -> Note {
        try Note.filter(Column("title") == title).fetchOne(self)!
    }
}

/// What one results controller read, told apart in a store's statement trace
/// (``Store/traceStatements()``) by its item query: the full fetch is that query as is; an
/// incremental re-read adds `t0."id" IN (…)` to it.
struct ItemReads {
    /// The item query without its id condition.
    let signature: String

    /// Whether `sql` reads notes as a results controller does: every column of `Note`, by
    /// name, in the order its generated initializer reads them.
    static func isNoteQuery(_ sql: String) -> Bool {
        sql.hasPrefix(noteColumns) && sql.contains("FROM \"Note\" AS t0")
    }

    /// Whether `sql` reads whole note rows (every column, by `*` or by name; `body` is in no
    /// request's keys), rather than ids and keys.
    static func readsWholeNotes(_ sql: String) -> Bool {
        sql.contains("FROM \"Note\"") && (sql.contains("t0.*") || sql.hasPrefix("SELECT *") || sql.contains("\"body\""))
    }

    private static let noteColumns = "SELECT " + Note.strataColumnNames.map { "t0.\"\($0)\"" }.joined(separator: ", ")

    /// The reads of the controller whose full fetch is the last item query in `statements`.
    init(lastFullFetchIn statements: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let query = try #require(
            statements.last { Self.isNoteQuery($0) },
            sourceLocation: sourceLocation)
        signature = Self.signature(of: query)
    }

    /// The reads of the controller whose full fetch is `query`.
    init(query: String) {
        signature = Self.signature(of: query)
    }

    static func signature(of sql: String) -> String {
        // A full fetch scans the root `NOT INDEXED`; a re-read by ids does not.
        sql.replacing(#/ AND t0\."id" IN \([^)]*\)/#, with: "").replacing(#/ WHERE t0\."id" IN \([^)]*\)/#, with: "")
            .replacing(" AS t0 NOT INDEXED", with: " AS t0").replacing(#/ ORDER BY .*$/#, with: "")
    }

    private func mine(_ statements: [String]) -> [String] {
        statements.filter { $0.hasPrefix(Self.noteColumns) && Self.signature(of: $0) == signature }
    }

    /// How many times the controller fetched everything.
    func fullFetches(in statements: [String]) -> Int {
        mine(statements).filter { !$0.contains("t0.\"id\" IN (") }.count
    }

    /// The ids of each incremental re-read, in order.
    func rowReads(in statements: [String]) -> [[Int64]] {
        mine(statements).compactMap { sql in
            guard let start = sql.range(of: "t0.\"id\" IN (") else { return nil }
            let list = sql[start.upperBound...].prefix { $0 != ")" }
            return list.split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        }
    }
}
