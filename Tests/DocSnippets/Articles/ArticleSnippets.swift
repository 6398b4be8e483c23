// The DocC articles' snippets that need a context (a store, an id, a path), each in a
// function that gives it one. DocSnippetTests checks that every block is here as written.
import Dispatch
import Foundation
import Strata

// MARK: - Strata.md

func overview() async throws {
    let store = try Store(schema: StrataModel.schema)
    let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook)

    for try await update in controller.updates {   // throws if tracking fails
        switch update {
        case .reload(let snapshot): show(snapshot)
        case .batch(let batch, let snapshot): animate(batch, to: snapshot)
        }
    }
}

// MARK: - ChangeHistory.md

func appOfAnAppGroup(appGroupPath: String) throws {
    // The app: live results see the widget's writes.
    let store = try Store(schema: StrataModel.schema, path: appGroupPath)
    let notes = try ResultsController(store: store, request: Note.Fetches.byNotebook)
    _ = notes
}

func widgetOfAnAppGroup(appGroupPath: String) throws {
    // The widget extension, another process: an ordinary write.
    let store = try Store(schema: StrataModel.schema, path: appGroupPath,
                          options: .init(author: "widget"))
    try store.insert(Note(title: "From the widget", updatedAt: .now))
}

func readTheHistory(store: Store) throws {
    let start = try store.historyToken()          // now
    // … commits, here or in other processes …
    let history = try store.changes(since: start)
    for transaction in history.transactions {
        print(transaction.token, transaction.author ?? "-", transaction.date)
        let notes = transaction.changes.changes(of: Note.self)
        print(notes.inserted, notes.updated, notes.updatedColumns, notes.deleted)
    }
    let next = history.token                      // save it (HistoryToken is Codable)
    _ = next
}

/// The server of the sync engine sketch.
protocol NotesServer: Sendable {
    func uploadEverything(_ notes: [Note]) async throws
    func send(upserts: [Note], deletes: [Int64]) async throws
    func changes() async throws -> RemoteNotes
}

struct RemoteNotes: Sendable {
    var upserts: [Note]
    var deletes: [Note.ID]
}

actor NotesSync {
    let store: Store
    let server: NotesServer
    var pushed: HistoryToken        // persisted, e.g. in UserDefaults as rawValue

    init(store: Store, server: NotesServer, pushed: HistoryToken) {
        (self.store, self.server, self.pushed) = (store, server, pushed)
    }

    /// Pushes what the app changed since the last push.
    func push() async throws {
        let pending: HistoryChanges
        do {
            pending = try store.changes(since: pushed, excludingAuthors: ["sync"])
        } catch let error as HistoryPrunedError {
            try await server.uploadEverything(try store.fetchAll(Note.self))
            pushed = error.currentToken
            return
        } catch let error as HistoryTokenAheadError {   // the file was restored from a backup
            try await server.uploadEverything(try store.fetchAll(Note.self))
            pushed = error.currentToken
            return
        }
        for transaction in pending.transactions {
            let notes = transaction.changes.changes(of: Note.self)
            let ids = notes.inserted.union(notes.updated).map(Note.ID.init(rawValue:))
            let upserts = try ids.compactMap { try store.fetchOne(Note.self, id: $0) }
            try await server.send(upserts: upserts, deletes: Array(notes.deleted))
        }
        pushed = pending.token
        try store.pruneHistory(through: pushed)   // if no other reader needs it
    }

    /// Writes what the server changed, tagged so that push() leaves it out.
    func pull() async throws {
        let remote = try await server.changes()
        try await store.write(author: "sync") { db in
            for var note in remote.upserts { try note.save(db) }
            for id in remote.deletes { _ = try Note.deleteOne(db, key: id) }
        }
    }
}

// MARK: - DeleteRulesAndMigrations.md

func denyRule(store: Store) throws {
    // With the deny rule on Notebook.notes:
    do {
        try store.write { db in
            try db.execute(sql: "UPDATE Notebook SET position = position + 1")
            try? db.execute(sql: "DELETE FROM Notebook WHERE id = 1")   // refused: it has notes
        }
    } catch let error as DeleteDeniedError {
        print(error.entity, error.relationship)   // "Notebook notes"; the update was rolled back
    }
}

func destructiveMigration(path: String) throws {
    let store: Store
    do {
        store = try Store(schema: StrataModel.schema, path: path)
    } catch MigrationError.destructiveChanges(let changes) {
        for change in changes {
            print(change)   // "attribute Note.priority lost enum case urgent"
        }
        // After asking the user, or when the data can be rebuilt:
        store = try Store(schema: StrataModel.schema, path: path, options: Store.Options(allowDataLoss: true))
    }
    _ = store
}

func ruleViolationsAtOpen(path: String) throws {
    var store = try Store.inMemory(schema: StrataModel.schema)
    do {
        store = try Store(schema: StrataModel.schema, path: path)
    } catch MigrationError.ruleViolations(let rows) {
        for row in rows {
            print(row)   // "Note 42: title is longer than maxLength 80"
        }
    }
    _ = store
}

func openErrors(path: String) throws {
    var store = try Store.inMemory(schema: StrataModel.schema)
    do {
        store = try Store(schema: StrataModel.schema, path: path)
    } catch let error as StoreOpenError {
        print(error)   // "cannot open the store at /…/notes.sqlite: the folder /… does not exist; create it first, …"
    } catch let error as MigrationError {
        print(error)   // "the database was not created by a Strata store"
    }
    _ = store
}

// MARK: - LiveSectionedResults.md

func waitInACommandLineTool(store: Store) throws {
    let notes = try ResultsController(store: store, request: Note.Fetches.all,
                                      deliveryQueue: DispatchQueue(label: "results"))
    try store.insert(Note(title: "Milk", updatedAt: .now))
    notes.waitForDeliveries()          // returns once the batch is delivered
    print(notes.snapshot.items.map(\.title))
}

func iterateAgainAfterAFailure(controller: ResultsController<Note, Notebook>) async throws {
    while !Task.isCancelled {
        do {
            for try await update in controller.updates { show(update) }
            break
        } catch {
            showBanner(error.localizedDescription)   // "cannot read Note.priority of the row with id 7: …"
            try await Task.sleep(for: .seconds(1))
        }
    }
}

func theMostRecent(store: Store) throws {
    let recent = Note.Fetches.all.sorted(by: Note.updatedAt.descending).limit(50)
    let controller = try ResultsController(store: store, request: recent)
    _ = controller
}

// MARK: - OrderedLists.md

func writeAnOrder(store: Store, todo: Todo, inbox: TodoList, today: TodoList) throws {
    try store.write { db in
        try db.move(todo.id, in: TodoList.todos, of: inbox.id, to: 0)          // first
        try db.insert(todo.id, into: TodoList.todos, of: today.id, at: 2)      // another list
    }
    let todos = try store.read { db in try db.fetchOrdered(TodoList.todos, of: today.id) }
    _ = todos
}
