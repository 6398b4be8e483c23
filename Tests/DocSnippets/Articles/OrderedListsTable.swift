// From OrderedLists.md; UIKit, so compiled on Apple platforms only.
#if canImport(UIKit)
import Strata
import UIKit

@MainActor
final class TodosTableAdapter: NSObject, UITableViewDataSource {
    private let tableView: UITableView
    private let controller: ResultsController<Todo, TodoList>
    private var snapshot: ResultsSnapshot<Todo, TodoList> = .empty

    init(tableView: UITableView, controller: ResultsController<Todo, TodoList>) {
        self.tableView = tableView
        self.controller = controller
        super.init()
        tableView.register(UITableViewCell.self, forCellReuseIdentifier: "todo")
        tableView.dataSource = self
        controller.coordinate(self)
    }

    func numberOfSections(in tableView: UITableView) -> Int { snapshot.numberOfSections }

    func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int {
        snapshot.numberOfRows(inSection: section)
    }

    func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String? {
        snapshot.sections[section].value.object?.name
    }

    func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let cell = tableView.dequeueReusableCell(withIdentifier: "todo", for: indexPath)
        var content = cell.defaultContentConfiguration()
        content.text = snapshot[ItemPath(indexPath)].item?.title
        cell.contentConfiguration = content
        return cell
    }

    // MARK: Reordering and swipe to delete

    func tableView(_ tableView: UITableView, canMoveRowAt indexPath: IndexPath) -> Bool { true }

    func tableView(_ tableView: UITableView, moveRowAt source: IndexPath, to destination: IndexPath) {
        do {
            // Delivers the move (userEdit == .move) to apply(_:snapshot:) before returning.
            try controller.moveItem(from: source, to: destination)
        } catch {
            // Refused, nothing written: put the row back.
            snapshot = controller.snapshot
            tableView.reloadData()
        }
    }

    func tableView(
        _ tableView: UITableView, commit editingStyle: UITableViewCell.EditingStyle, forRowAt indexPath: IndexPath
    ) {
        guard editingStyle == .delete else { return }
        // Delivers the delete (userEdit == .delete) to apply(_:snapshot:), which animates it.
        try? controller.deleteItem(at: indexPath)
    }
}

extension TodosTableAdapter: @preconcurrency Coordinatable {
    func reload(_ snapshot: ResultsSnapshot<Todo, TodoList>) {
        self.snapshot = snapshot
        tableView.reloadData()
    }

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Todo, TodoList>) {
        if batch.userEdit == .move {
            self.snapshot = snapshot  // the table view already shows this move
            return
        }
        tableView.performBatchUpdates { [self] in
            self.snapshot = snapshot
            tableView.deleteSections(IndexSet(batch.sectionDeletes), with: .automatic)
            tableView.insertSections(IndexSet(batch.sectionInserts), with: .automatic)
            for move in batch.sectionMoves { tableView.moveSection(move.from, toSection: move.to) }
            tableView.deleteRows(at: batch.itemDeletes.map(IndexPath.init), with: .automatic)
            tableView.insertRows(at: batch.itemInserts.map(IndexPath.init), with: .automatic)
            for move in batch.itemMoves { tableView.moveRow(at: IndexPath(move.from), to: IndexPath(move.to)) }
            tableView.reloadRows(at: batch.itemUpdates.map(IndexPath.init), with: .automatic)
        }
    }
}
#endif
