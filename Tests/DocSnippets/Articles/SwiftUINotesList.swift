// From SwiftUI.md; SwiftUI, so compiled on Apple platforms only.
#if canImport(SwiftUI)
import Strata
import SwiftUI

struct NotesList: View {
    let store: Store
    @State private var notes: LiveResults<Note, Notebook>

    init(store: Store) throws {
        self.store = store
        _notes = State(initialValue: try LiveResults(store: store, request: Note.Fetches.byNotebook))
    }

    var body: some View {
        List {
            ForEach(notes.sections) { section in
                NotebookSection(section: section, store: store)
            }
        }
        .overlay {
            if notes.count == 0 { ContentUnavailableView("No notes", systemImage: "note.text") }
        }
        .toolbar { Text("\(notes.count) notes") }
    }
}

/// Reads one section only: commits to other notebooks do not redraw it.
struct NotebookSection: View {
    let section: LiveSection<Note, Notebook>
    let store: Store

    var body: some View {
        Section(section.value.object?.name ?? "No notebook") {
            ForEach(section.items) { note in
                Text(note.title)
            }
            .onDelete { offsets in
                let doomed = offsets.map { section.items[$0] }
                // The list updates itself when the commit arrives.
                try? store.write { db in
                    for note in doomed { try db.delete(note) }
                }
            }
        }
    }
}
#endif
