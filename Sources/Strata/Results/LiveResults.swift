#if canImport(Observation)
import Dispatch
import Observation

/// Live results for SwiftUI, and for anything that uses the Observation module: an
/// `@Observable` value a view reads directly, kept up to date on the main actor, once per
/// commit, by a ``ResultsController``.
///
/// ```swift
/// struct NotesView: View {
///     @State private var notes = try! LiveResults(store: store, request: Note.Fetches.byNotebook)
///
///     var body: some View {
///         List(notes.sections) { section in
///             SectionView(section: section)   // reads section.rows: only its changes redraw it
///         }
///     }
/// }
/// ```
///
/// Granularity: ``sections`` changes only when sections are inserted, deleted or moved;
/// each ``LiveSection``'s ``LiveSection/rows`` and ``LiveSection/value`` change only when a
/// commit changed that section, so a view showing one section is not invalidated by
/// commits to another. ``count`` changes only when the number of items does; ``snapshot``
/// and ``lastBatch`` change with every delivered change. Nothing changes while paused.
@MainActor @Observable
public final class LiveResults<Item: StrataEntity, Section: Hashable & Sendable> {
    /// The sections in display order.
    public private(set) var sections: [LiveSection<Item, Section>] = []
    /// The number of items shown (the items summarised by group rows are not counted).
    public private(set) var count = 0
    /// The whole current state, as an immutable value. Observers are notified of every
    /// delivery, even one whose snapshot is `==` to the previous (a row rewritten in another
    /// Unicode normalization form).
    public var snapshot: ResultsSnapshot<Item, Section> {
        access(keyPath: \.snapshot)
        return snapshotStorage
    }
    /// The batch that led to ``snapshot``, for views that animate; nil after a reload.
    /// Observers are notified of every delivery, even one whose batch is `==` to the previous
    /// one (two edits of the same row in a row): each is a change to apply.
    public var lastBatch: ChangeBatch? {
        access(keyPath: \.lastBatch)
        return lastBatchStorage
    }
    // Set with `withMutation` on every delivery: Observation skips setting an equal value of
    // a stored property, which would hide a delivery.
    @ObservationIgnored private var snapshotStorage: ResultsSnapshot<Item, Section>
    @ObservationIgnored private var lastBatchStorage: ChangeBatch?
    /// The last tracking failure (see ``ResultsControllerDelegate/controller(_:didFailWith:)``);
    /// nil again once a later change is delivered.
    public private(set) var failure: (any Error)?

    /// The controller behind the results, delivering on the main queue.
    @ObservationIgnored public let controller: ResultsController<Item, Section>
    @ObservationIgnored private var adapter: Adapter?

    /// Fetches `request` from `store` and keeps the results up to date. Call it on the main
    /// actor; changes arrive there.
    public init(
        store: Store, request: ResultsRequest<Item, Section>, options: ResultsOptions<Item> = ResultsOptions(),
        loading: ResultsLoading = .eager
    ) throws {
        controller = try ResultsController(
            store: store, request: request, options: options, loading: loading, deliveryQueue: .main)
        snapshotStorage = controller.snapshot
        show(snapshotStorage, batch: nil)
        let adapter = Adapter(owner: self)
        self.adapter = adapter
        controller.coordinate(adapter)
    }

    /// The post-fetch filter, comparator and group rows (see ``ResultsController/options``).
    public var options: ResultsOptions<Item> {
        get { controller.options }
        set { controller.options = newValue }
    }

    /// Stops tracking commits; nothing changes until ``resume()``.
    public func pause() { controller.pause() }

    /// Refetches and resumes tracking; the new state arrives as a reload, on the next turn
    /// of the main queue (as every change does), not before this method returns.
    public func resume() throws { try controller.resume() }

    // MARK: - Applying deliveries

    private func show(_ new: ResultsSnapshot<Item, Section>, batch: ChangeBatch?) {
        let old = snapshot
        let touched = batch.map { Self.touchedSections($0, old, new) }
        var existing: [SectionID: LiveSection<Item, Section>] = [:]
        for section in sections { existing[section.id] = section }
        var next: [LiveSection<Item, Section>] = []
        next.reserveCapacity(new.sections.count)
        for section in new.sections {
            if let live = existing[section.id] {
                if touched?.contains(section.id) ?? true { live.update(section) }
                next.append(live)
            } else {
                next.append(LiveSection(section))
            }
        }
        if next.map(\.id) != sections.map(\.id) { sections = next }
        let newCount = new.sections.reduce(0) { $0 + $1.itemCount }
        if newCount != count { count = newCount }
        withMutation(keyPath: \.snapshot) { snapshotStorage = new }
        withMutation(keyPath: \.lastBatch) { lastBatchStorage = batch }
        if failure != nil { failure = nil }
    }

    /// The sections whose rows or value a batch changes, by id.
    private static func touchedSections(
        _ batch: ChangeBatch, _ old: ResultsSnapshot<Item, Section>, _ new: ResultsSnapshot<Item, Section>
    ) -> Set<SectionID> {
        var ids = Set<SectionID>()
        for path in batch.itemDeletes + batch.itemUpdates { ids.insert(old.sections[path.section].id) }
        for path in batch.itemInserts + batch.movedAndUpdatedItems { ids.insert(new.sections[path.section].id) }
        for move in batch.itemMoves {
            ids.insert(old.sections[move.from.section].id)
            ids.insert(new.sections[move.to.section].id)
        }
        for index in batch.sectionUpdates { ids.insert(old.sections[index].id) }
        for index in batch.movedAndUpdatedSections { ids.insert(new.sections[index].id) }
        return ids
    }

    fileprivate func fail(_ error: any Error) {
        failure = error
    }

    /// Receives the controller's deliveries on the main queue.
    private final class Adapter: Coordinatable, @unchecked Sendable {
        weak var owner: LiveResults?

        init(owner: LiveResults) { self.owner = owner }

        func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Item, Section>) {
            MainActor.assumeIsolated { owner?.show(snapshot, batch: batch) }
        }

        func reload(_ snapshot: ResultsSnapshot<Item, Section>) {
            MainActor.assumeIsolated {
                guard let owner, snapshot != owner.snapshot || owner.lastBatch != nil else { return }
                owner.show(snapshot, batch: nil)
            }
        }

        func fail(with error: any Error) {
            MainActor.assumeIsolated { owner?.fail(error) }
        }
    }
}

/// One section of ``LiveResults``, observable on its own: its rows and value change only
/// when a commit changes this section.
@MainActor @Observable
public final class LiveSection<Item: StrataEntity, Section: Hashable & Sendable>: Identifiable {
    /// The section's identity, stable across changes.
    public let id: SectionID
    /// The key value or section object (see ``SectionValue``).
    public private(set) var value: SectionValue<Section>
    /// The rows, in display order.
    public private(set) var rows: ResultsRows<Item>

    init(_ section: ResultsSection<Item, Section>) {
        id = section.id
        value = section.value
        rows = section.rows
    }

    /// The items, without group rows.
    public var items: [Item] { rows.compactMap(\.item) }

    fileprivate func update(_ section: ResultsSection<Item, Section>) {
        if section.value != value { value = section.value }
        if section.rows != rows { rows = section.rows }
    }
}

extension ResultsSection {
    /// The number of item rows (without loading a batched section).
    fileprivate var itemCount: Int {
        rows.count - (rows.endsWithGroup ? 1 : 0)
    }
}
#endif
