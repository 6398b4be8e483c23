// A first look at the code the build plugin generates from Models/*.yaml.
// (The full demo, with a store and live sectioned results, comes with the store.)
import Strata

let schema = StrataModel.schema
print("Model \(schema.name): \(schema.entities.map(\.name).joined(separator: ", "))")

let note = Note(title: "Buy milk", body: "", pinned: false, priority: .high, updatedAt: .now)
print("A new note: '\(note.title)', priority \(note.priority), saved: \(note.id.isSaved)")

let predicate = Note.title.contains("milk", .caseInsensitive) && Note.notebook.name == "Home"
print("Predicate: \(predicate.node)")

let request = Note.Fetches.all.filter(Note.pinned == true && Note.tags.any(Tag.name == "home"))
print("Request: \(request.sortKeys.count) sort key(s), predicate \(String(describing: request.predicate?.node))")
print("Sections by notebook: \(Note.Fetches.byNotebook.sectioning.kind)")
