// The README's tour as a command-line program's top-level code (Swift 6, warnings as errors):
// what a newcomer pastes into main.swift. Compiled, not run (it opens the store in the
// user's data folder and then waits for changes forever).
import Foundation   // Date
import Strata

let store = try Store(schema: StrataModel.schema)       // XDG data dir / Application Support
// or: try Store(schema: StrataModel.schema, path: "notes.sqlite"), or Store.inMemory(schema:)

let work = try store.insert(Notebook(name: "Work"))      // comes back with its id
var milk = try store.insert(Note(title: "Buy milk", updatedAt: Date(), notebookID: work.id))
milk.priority = .high
try store.update(milk)                                   // writes the columns that changed
let errands = try store.insert(Tag(name: "errands"))
try store.write { db in                                  // one transaction; links go by ids
    try db.link(milk.id, Note.tags, errands.id)          // a many-to-many (db.unlink undoes it)
}

let found = try store.read { db in
    try db.fetchAll(Note.Fetches.search(text: "milk"))
}
let urgent = try store.fetchAll(Note.self, where: Note.priority == .high && Note.notebook.name == "Work",
                                sortedBy: [Note.updatedAt.descending])
try store.delete(milk)                                   // or db.delete(_:) inside a write
_ = (found, urgent)

let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook)

for section in controller.snapshot.sections {
    print(section.value.object?.name ?? "No notebook", section.items.map(\.title))
}

for try await update in controller.updates {   // throws if tracking fails
    switch update {
    case .reload(let snapshot):
        show(snapshot)
    case .batch(let batch, let snapshot):
        animate(batch, to: snapshot)          // deletes, inserts, moves, updates
    }
}

controller.options.filter = { !$0.title.hasPrefix("Draft") }   // a batch, not a reload
controller.options.groupFilteredItems = true                   // "3 hidden" rows per section
controller.pause()                                             // during a bulk import
try controller.resume()                                        // refetch, one reload
