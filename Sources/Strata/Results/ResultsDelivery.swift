/// One delivery of a ``ResultsController``: a change batch with the snapshot it leads to,
/// or a whole new snapshot to show without animation.
public enum ResultsUpdate<Item: StrataEntity, Section: Hashable & Sendable>: Sendable {
    /// Show `snapshot` as is: the first delivery of a sequence, after ``ResultsController/resume()``,
    /// and every delivery in ``ResultsController/DeliveryMode/reloads`` mode.
    case reload(ResultsSnapshot<Item, Section>)
    /// Apply `batch` to the previously delivered snapshot; the result is `snapshot`.
    case batch(ChangeBatch, ResultsSnapshot<Item, Section>)

    /// The snapshot after this update.
    public var snapshot: ResultsSnapshot<Item, Section> {
        switch self {
        case .reload(let snapshot), .batch(_, let snapshot): snapshot
        }
    }

    /// The batch, or nil for a reload.
    public var batch: ChangeBatch? {
        if case .batch(let batch, _) = self { return batch }
        return nil
    }
}

extension ResultsUpdate: Equatable {}

/// The kind of a change reported to a ``ResultsControllerDelegate``, as in
/// `NSFetchedResultsChangeType`.
public enum ResultsChangeType: String, Hashable, Sendable {
    /// Inserted; reported at the new index.
    case insert
    /// Deleted; reported at the old index.
    case delete
    /// Moved; reported at the old and the new index.
    case move
    /// The value changed in place; reported at the old index.
    case update
}

/// Receives a results controller's changes one by one, in the style of
/// `NSFetchedResultsControllerDelegate`. Every method has a default that does nothing.
///
/// Callbacks run on the controller's delivery queue (the main queue unless the controller
/// was created with another one). For one batch the order is: `controllerWillChangeContent`,
/// section deletes, section inserts, section moves, section updates, item deletes, item
/// inserts, item moves, item updates, `controller(_:didChange:snapshot:)`, then
/// `controllerDidChangeContent`. Indexes follow the ``ChangeBatch`` rules: deletes and
/// updates in the old index space, inserts and move targets in the new one.
///
/// A main-actor type adopts it with `@preconcurrency`, which checks at run time that the
/// controller delivers on the main queue:
///
/// ```swift
/// extension NotesViewController: @preconcurrency ResultsControllerDelegate {
///     func controller(_ controller: ResultsController<Note, Notebook>, didChange batch: ChangeBatch,
///                     snapshot: ResultsSnapshot<Note, Notebook>) {
///         self.snapshot = snapshot
///         tableView.performBatchUpdates { /* apply batch */ }
///     }
/// }
/// ```
public protocol ResultsControllerDelegate<Item, Section>: AnyObject {
    /// The item type.
    associatedtype Item: StrataEntity
    /// The section type.
    associatedtype Section: Hashable & Sendable

    /// A batch is about to be reported.
    func controllerWillChangeContent(_ controller: ResultsController<Item, Section>)
    /// A section changed. `index` is the old index (delete, update, move) or the new one
    /// (insert); `newIndex` is the move target, else nil. `section` is the section's state
    /// after the change (before it, for a delete).
    func controller(
        _ controller: ResultsController<Item, Section>, didChange section: ResultsSection<Item, Section>,
        atSectionIndex index: Int, for type: ResultsChangeType, newSectionIndex: Int?)
    /// A row changed. `indexPath` is the old path (delete, update, move) or nil (insert);
    /// `newIndexPath` is the new path (insert, move) or nil. `row` is the row's value after the
    /// change (before it, for a delete). A moved row whose value also changed is reported once,
    /// as a move with its new value (see ``ChangeBatch/movedAndUpdatedItems``).
    func controller(
        _ controller: ResultsController<Item, Section>, didChange row: ResultsRow<Item>, at indexPath: ItemPath?,
        for type: ResultsChangeType, newIndexPath: ItemPath?)
    /// The whole batch and the snapshot it leads to, after the individual callbacks.
    func controller(
        _ controller: ResultsController<Item, Section>, didChange batch: ChangeBatch,
        snapshot: ResultsSnapshot<Item, Section>)
    /// The batch has been reported.
    func controllerDidChangeContent(_ controller: ResultsController<Item, Section>)
    /// Show `snapshot` without animation (after ``ResultsController/resume()``, or for every
    /// change in ``ResultsController/DeliveryMode/reloads`` mode).
    func controller(_ controller: ResultsController<Item, Section>, didReload snapshot: ResultsSnapshot<Item, Section>)
    /// Tracking failed: a storage error (``StorageError``), or a row the generated type
    /// cannot read (``ValueDecodingError``), while reading a commit's changes. The snapshot
    /// stays the last good one; the controller refetches on the next commit. Coordinators
    /// get the same failure (``Coordinatable/fail(with:)``), and ``ResultsController/updates``
    /// sequences throw it.
    func controller(_ controller: ResultsController<Item, Section>, didFailWith error: any Error)
}

extension ResultsControllerDelegate {
    /// Does nothing.
    public func controllerWillChangeContent(_ controller: ResultsController<Item, Section>) {}
    /// Does nothing.
    public func controller(
        _ controller: ResultsController<Item, Section>, didChange section: ResultsSection<Item, Section>,
        atSectionIndex index: Int, for type: ResultsChangeType, newSectionIndex: Int?
    ) {}
    /// Does nothing.
    public func controller(
        _ controller: ResultsController<Item, Section>, didChange row: ResultsRow<Item>, at indexPath: ItemPath?,
        for type: ResultsChangeType, newIndexPath: ItemPath?
    ) {}
    /// Does nothing.
    public func controller(
        _ controller: ResultsController<Item, Section>, didChange batch: ChangeBatch,
        snapshot: ResultsSnapshot<Item, Section>
    ) {}
    /// Does nothing.
    public func controllerDidChangeContent(_ controller: ResultsController<Item, Section>) {}
    /// Does nothing.
    public func controller(
        _ controller: ResultsController<Item, Section>, didReload snapshot: ResultsSnapshot<Item, Section>
    ) {}
    /// Does nothing.
    public func controller(_ controller: ResultsController<Item, Section>, didFailWith error: any Error) {}
}

/// Anything that shows sectioned results and applies change batches to them: a table or
/// collection view adapter, a test recorder, a text renderer.
///
/// Give one to ``ResultsController/coordinate(_:)``: it gets a ``reload(_:)`` with the current
/// snapshot at once, then every change, on the controller's delivery queue.
///
/// ```swift
/// final class TableCoordinator: Coordinatable {
///     func reload(_ snapshot: ResultsSnapshot<Note, Notebook>) { /* reloadData */ }
///     func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) { /* performBatchUpdates */ }
/// }
/// ```
public protocol Coordinatable<Item, Section>: AnyObject {
    /// The item type.
    associatedtype Item: StrataEntity
    /// The section type.
    associatedtype Section: Hashable & Sendable

    /// Apply `batch` to the snapshot shown so far; `snapshot` is the state it leads to.
    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Item, Section>)
    /// Show `snapshot` as is.
    func reload(_ snapshot: ResultsSnapshot<Item, Section>)
    /// Tracking failed: a storage error (``StorageError``), or a row the generated type
    /// cannot read (``ValueDecodingError``). The snapshot shown so far stays the last good
    /// one; the controller refetches on the next commit and goes on with batches. The
    /// default does nothing.
    func fail(with error: any Error)
}

extension Coordinatable {
    /// Does nothing.
    public func fail(with error: any Error) {}
}
