import Dispatch
import Foundation
import GRDB
import Strata

/// The baseline that Strata's incremental controller is compared with: what GRDB's
/// `ValueObservation` (or Realm) does for every commit — refetch the whole result, then
/// compute the O(n) identity difference with the previous one (Strata's public
/// `ChangeBatch(from:to:)`).
///
/// It runs where the controller runs: in a commit handler on the store's writer, right after
/// the commit; and it delivers on its own queue, as the controller does.
final class RefetchBaseline: @unchecked Sendable {
    private let lock = NSLock()
    private var current: ResultsSnapshot<Note, Notebook>
    private var observation: CommitObservation?
    private let deliveryQueue: DispatchQueue
    private let deliver: @Sendable (ChangeBatch) -> Void

    init(store: Store, deliveryQueue: DispatchQueue, deliver: @escaping @Sendable (ChangeBatch) -> Void) throws {
        self.deliveryQueue = deliveryQueue
        self.deliver = deliver
        current = try store.read { db in try Self.fetch(db) }
        observation = store.observeCommits(reading: { [weak self] _, db in self?.handleCommit(db) })
    }

    /// The last computed snapshot.
    var snapshot: ResultsSnapshot<Note, Notebook> { lock.withLock { current } }

    func cancel() { observation?.cancel() }

    private func handleCommit(_ db: Database) {
        do {
            let new = try Self.fetch(db)
            let batch = lock.withLock {
                defer { current = new }
                return ChangeBatch(from: current, to: new)
            }
            deliveryQueue.async { [deliver] in deliver(batch) }
        } catch {
            fatalError("baseline refetch failed: \(error)")
        }
    }

    /// `Note.Fetches.byNotebook` with plain GRDB: the notebooks by position, name (then id),
    /// every note by pinned descending, title (then id), grouped by notebook.
    static func fetch(_ db: Database) throws -> ResultsSnapshot<Note, Notebook> {
        let notebooks = try Notebook.order(Column("position"), Column("name"), Column("id")).fetchAll(db)
        let notes = try Note.order(Column("pinned").desc, Column("title"), Column("id")).fetchAll(db)
        var rows: [Int64: [ResultsRow<Note>]] = [:]
        for note in notes {
            guard let notebook = note.notebookID?.rawValue else { continue }
            rows[notebook, default: []].append(.item(note))
        }
        return ResultsSnapshot(sections: notebooks.map { notebook in
            ResultsSection(id: .object(notebook.id.rawValue), value: .value(notebook), rows: rows[notebook.id.rawValue] ?? [])
        })
    }
}
