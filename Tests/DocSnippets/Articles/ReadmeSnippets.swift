// The README's snippets that need a context of their own.
import Foundation
import Strata

/// "Lists the user orders by hand": what a table view's callbacks call.
func orderByHand(store: Store, source: IndexPath, destination: IndexPath, indexPath: IndexPath, todo: Todo, inbox: TodoList) throws {
    let todos = try ResultsController(store: store, request: Todo.Fetches.byList)  // a section per list
    // tableView(_:moveRowAt:to:): the table view already moved the row
    try todos.moveItem(from: source, to: destination)   // one UPDATE; a batch with userEdit == .move
    // tableView(_:commit:forRowAt:)
    try todos.deleteItem(at: indexPath)                  // a batch with userEdit == .delete, animated
    try store.write { db in try db.move(todo.id, in: TodoList.todos, of: inbox.id, to: 0) }
}

#if canImport(SwiftUI)
import SwiftUI

/// "Observe a sectioned list", in SwiftUI (compiled on Apple platforms only).
enum ReadmeApp {
    static let store = try! Store(schema: StrataModel.schema)

    struct NotesView: View {
        @State private var notes = try! LiveResults(store: store, request: Note.Fetches.byNotebook)
        // List { ForEach(notes.sections) { section in … section.items … } }

        var body: some View {
            List { ForEach(notes.sections) { section in Text("\(section.items.count)") } }
                .overlay(alignment: .bottom) {
                    if let failure = notes.failure { Text(failure.localizedDescription).font(.footnote) }
                }
        }
    }
}
#endif
