// From ChangeBatches.md; UIKit, so compiled on Apple platforms only.
#if canImport(UIKit)
import Strata
import UIKit

@MainActor
final class NotesTableAdapter: NSObject, UITableViewDataSource {
    private let tableView: UITableView
    private var snapshot: ResultsSnapshot<Note, Notebook> = .empty

    init(tableView: UITableView, controller: ResultsController<Note, Notebook>) {
        self.tableView = tableView
        super.init()
        tableView.register(UITableViewCell.self, forCellReuseIdentifier: "note")
        tableView.dataSource = self
        controller.coordinate(self)  // held weakly: the view controller keeps the adapter
    }

    // MARK: UITableViewDataSource

    func numberOfSections(in tableView: UITableView) -> Int {
        snapshot.numberOfSections
    }

    func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int {
        snapshot.numberOfRows(inSection: section)
    }

    func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String? {
        title(ofSection: section)
    }

    func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let cell = tableView.dequeueReusableCell(withIdentifier: "note", for: indexPath)
        configure(cell, at: indexPath)
        return cell
    }

    // MARK: Helpers

    private func title(ofSection section: Int) -> String {
        snapshot.sections[section].value.object?.name ?? "No notebook"
    }

    private func configure(_ cell: UITableViewCell, at indexPath: IndexPath) {
        var content = cell.defaultContentConfiguration()
        switch snapshot[ItemPath(indexPath)] {
        case .item(let note):
            content.text = note.title
        case .group(let hidden):
            content.text = "\(hidden.count) hidden"  // the group row of a post-fetch filter
        }
        cell.contentConfiguration = content
    }
}

extension NotesTableAdapter: @preconcurrency Coordinatable {
    func reload(_ snapshot: ResultsSnapshot<Note, Notebook>) {
        self.snapshot = snapshot
        tableView.reloadData()
    }

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) {
        let old = self.snapshot
        tableView.performBatchUpdates { [self] in
            self.snapshot = snapshot  // the data source must match the new state inside the block
            tableView.deleteSections(IndexSet(batch.sectionDeletes), with: .automatic)
            tableView.insertSections(IndexSet(batch.sectionInserts), with: .automatic)
            for move in batch.sectionMoves { tableView.moveSection(move.from, toSection: move.to) }
            tableView.deleteRows(at: batch.itemDeletes.map(IndexPath.init), with: .automatic)
            tableView.insertRows(at: batch.itemInserts.map(IndexPath.init), with: .automatic)
            for move in batch.itemMoves { tableView.moveRow(at: IndexPath(move.from), to: IndexPath(move.to)) }
            tableView.reloadRows(at: batch.itemUpdates.map(IndexPath.init), with: .automatic)
        } completion: { [self] _ in
            // Section updates are in the old index space; find where those sections are now.
            let updated = batch.sectionUpdates.compactMap { snapshot.index(ofSection: old.sections[$0].id) }
            for section in updated + batch.movedAndUpdatedSections {
                tableView.headerView(forSection: section)?.textLabel?.text = title(ofSection: section)
            }
            // Moved rows whose values changed too, at their new index paths.
            for path in batch.movedAndUpdatedItems {
                if let cell = tableView.cellForRow(at: IndexPath(path)) { configure(cell, at: IndexPath(path)) }
            }
        }
    }
}
#endif
