// A first look at the code the build plugin generates from Models/*.yaml, on an in-memory
// store. (The full demo, with live sectioned results, comes later.)
import Strata

let schema = StrataModel.schema
print("Model \(schema.name): \(schema.entities.map(\.name).joined(separator: ", "))")

let store = try Store.inMemory(schema: schema)
try store.write { db in
    let home = try db.insert(Notebook(name: "Home", position: 1))
    let work = try db.insert(Notebook(name: "Work", position: 0))
    let errands = try db.insert(Tag(name: "errands"))
    let milk = try db.insert(Note(title: "Buy milk", priority: .high, updatedAt: .now, notebookID: home.id))
    try db.link(milk.id, Note.tags, errands.id)
    try db.insert(Note(title: "Quarterly report", pinned: true, updatedAt: .now, notebookID: work.id))
    try db.insert(Note(title: "Call the plumber", body: "Kitchen sink, Milk-white pipes", updatedAt: .now))
}

try store.read { db in
    let found = try db.fetchAll(Note.Fetches.search(text: "milk"))
    print("search(text: \"milk\"):", found.map(\.title))
    let tagged = try db.fetchAll(Note.Fetches.tagged(tag: "errands"))
    print("tagged(tag: \"errands\"):", tagged.map(\.title))
    let important = try db.fetchAll(Note.Fetches.important)
    print("important:", important.map(\.title))
    let typed = try db.fetchAll(Note.self, where: Note.notebook.name == "Work" || Note.pinned == true, sortedBy: [Note.title.ascending])
    print("notebook.name == \"Work\" || pinned:", typed.map(\.title))
    let popular = try db.fetchAll(Tag.Fetches.popular(minimum: 1))
    print("popular tags:", popular.map(\.name))
}
print("Sections by notebook:", Note.Fetches.byNotebook.sectioning.kind)
