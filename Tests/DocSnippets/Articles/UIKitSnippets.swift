// The docs' UIKit code (README.md, ChangeBatches.md, LiveSectionedResults.md): compiled on
// Apple platforms only; UIKit does not exist on Linux.
#if canImport(UIKit)
import Strata
import UIKit

/// README, "Apply batches to a list".
@MainActor
final class ReadmeTableAdapter {
    let tableView = UITableView()
    var rows: ResultsSnapshot<Note, Notebook> = .empty

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) {
        tableView.performBatchUpdates {
            rows = snapshot
            tableView.deleteSections(IndexSet(batch.sectionDeletes), with: .fade)
            tableView.insertSections(IndexSet(batch.sectionInserts), with: .fade)
            batch.sectionMoves.forEach { tableView.moveSection($0.from, toSection: $0.to) }
            tableView.deleteRows(at: batch.itemDeletes.map(IndexPath.init), with: .fade)
            tableView.insertRows(at: batch.itemInserts.map(IndexPath.init), with: .fade)
            batch.itemMoves.forEach { tableView.moveRow(at: IndexPath($0.from), to: IndexPath($0.to)) }
            tableView.reloadRows(at: batch.itemUpdates.map(IndexPath.init), with: .none)
        }
    }
}

/// ChangeBatches.md: the view controller that keeps the controller and the adapter.
final class NotesViewController: UIViewController {
    let store: Store
    let tableView = UITableView()
    var adapter: NotesTableAdapter?
    var controller: ResultsController<Note, Notebook>?

    init(store: Store) {
        self.store = store
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) { nil }

    func start() throws {
        let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook)
        adapter = NotesTableAdapter(tableView: tableView, controller: controller)
        self.controller = controller
    }
}

/// ChangeBatches.md: the collection view adapter the article extends.
final class NotebookHeaderView: UICollectionReusableView {
    var title = ""
}

@MainActor
final class NotesCollectionAdapter {
    let collectionView: UICollectionView
    var snapshot: ResultsSnapshot<Note, Notebook> = .empty

    init(collectionView: UICollectionView) { self.collectionView = collectionView }

    func title(ofSection section: Int) -> String { snapshot.sections[section].value.object?.name ?? "No notebook" }
}

/// LiveSectionedResults.md, batched loading.
@MainActor
final class BatchedNotesDataSource: NSObject {
    var snapshot: ResultsSnapshot<Note, Notebook> = .empty

    func cell(for note: Note, at indexPath: IndexPath) -> UITableViewCell { UITableViewCell() }

    func open(store: Store) throws -> ResultsController<Note, Notebook> {
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook,
            loading: .batched(pageSize: 64, cachedPages: 32))
        return controller
    }

    // UITableViewDataSource
    func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let note = snapshot[ItemPath(indexPath)].item!   // reads its page the first time
        return cell(for: note, at: indexPath)
    }
}
#endif
