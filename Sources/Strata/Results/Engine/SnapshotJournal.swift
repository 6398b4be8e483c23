/// What the next snapshot shows and how it differs from the last one: the post-fetch
/// options, each section's rows as last derived (``DerivedRows``, options applied), and the
/// changes since the last snapshot (``ChangeJournal``) — the places every changed row left
/// and took while rows are items, else the sections whose rows were derived again.
struct SnapshotJournal<Item: StrataEntity, Section: Hashable & Sendable> {
    /// What changed between two snapshots, as far as the journal knows.
    enum Changes {
        /// Every changed row, with its places (see ``ChangeBatch/init(from:to:rowChanges:)``).
        case rows([RowChange])
        /// The sections whose rows may differ (derived again); any section's value may differ.
        case sections(Set<SectionID>)
        /// Anything may differ (a refetch).
        case all
        /// A refetch, with what was kept of the last snapshot's state to compare by id.
        case refetched(RefetchedRows)
    }

    /// What the eager loading kept of the last snapshot's state across a refetch while rows
    /// are items: each section's ids and the values (see ``RefetchedRows``).
    struct RefetchBase {
        let ids: [SectionID: RowChunks<Int64>]
        let values: ItemPayload<Item>
    }

    var options: ResultsOptions<Item> {
        didSet {
            derivedRows.removeAll()
            changeJournal.optionsChanged()
            refetchBase = nil
        }
    }

    /// The rows of each section as the next snapshot shows them, as last derived (options
    /// applied); a section without them is derived again. While rows are journaled, they are the
    /// section's items in order and are patched in place.
    private var derivedRows = DerivedRows<Item>()
    /// What changed since the last snapshot: the row journal, or the sections derived
    /// again, or anything.
    private var changeJournal = ChangeJournal.all
    /// The last snapshot's state, kept by a refetch (``beginRefetch(_:values:)``) until the
    /// next snapshot is taken.
    private var refetchBase: RefetchBase?

    init(options: ResultsOptions<Item>) {
        self.options = options
    }

    /// Whether snapshot rows are the items in fetch order: no post-fetch filter or comparator.
    var rowsAreItems: Bool { options.filter == nil && options.comparator == nil }

    /// After a refetch: nothing derived, anything may have changed.
    mutating func reset() {
        derivedRows.removeAll()
        changeJournal = .all
        refetchBase = nil
    }

    /// Before a refetch of eager results (`index` and `values` still in their state): the
    /// state is kept to compare the next snapshot with by id, when it is the last snapshot's
    /// (nothing changed since it was taken, or a refetch since kept it) and rows are items.
    /// Then, like ``reset()``, nothing derived, anything may have changed.
    mutating func beginRefetch<Keys>(_ index: SectionedIndex<Section, Keys>, values: ItemPayload<Item>) {
        var base = refetchBase
        if base == nil, rowsAreItems, case .rows(let journal) = changeJournal, journal.isEmpty {
            var ids: [SectionID: RowChunks<Int64>] = [:]
            ids.reserveCapacity(index.sections.count)
            for (id, section) in zip(index.sections.keys, index.sections.values) { ids[id] = section.items }
            base = RefetchBase(ids: ids, values: values)
        }
        reset()
        refetchBase = base
    }

    /// The rows of `section` as a fetch in order produced them (rows are items).
    mutating func setRows(_ rows: RowChunks<ResultsRow<Item>>, for section: SectionID) {
        derivedRows[section] = rows
    }

    /// The rows of `sections` are derived again for the next snapshot.
    mutating func invalidate(_ sections: some Sequence<SectionID>) {
        for section in sections { derivedRows[section] = nil }
    }

    /// A bulk replacement (``SectionedIndex/replaceInBulk(gone:fetched:refetched:parallelMinimum:)``) in the
    /// sections `touched`: while rows are items, each section's rows are rebuilt from its
    /// previous rows, less those at the indexes `removals` lists (increasing), with
    /// `arrivals` (the re-read items placed in it, at their final indexes, increasing, by
    /// their offsets in the re-read rows, whose values `items` gives) merged in: runs of rows copied between the changed places, instead of a lookup of
    /// every item's value. Sections without previous rows are derived again.
    mutating func replaced(
        in touched: Set<SectionID>, removals: [SectionID: [Int]], arrivals: [SectionID: [(index: Int, offset: Int)]],
        items: (Int) -> Item?, counts: (SectionID) -> Int?
    ) {
        for section in touched {
            guard rowsAreItems, let previous = derivedRows.removeValue(forKey: section), let count = counts(section) else {
                derivedRows[section] = nil
                continue
            }
            let removed = removals[section] ?? [], arriving = arrivals[section] ?? []
            guard previous.count - removed.count + arriving.count == count else { continue }
            var rows = RowChunks<ResultsRow<Item>>()
            var old = 0, nextRemoved = 0, nextArrival = 0
            while rows.count < count {
                if nextArrival < arriving.count && arriving[nextArrival].index == rows.count {
                    guard let item = items(arriving[nextArrival].offset) else { break }
                    rows.append(.item(item))
                    nextArrival += 1
                    continue
                }
                // The kept rows up to the next removed one, or to the next arrival's place.
                let removedAt = nextRemoved < removed.count ? removed[nextRemoved] : previous.count
                if old == removedAt {
                    old += 1
                    nextRemoved += 1
                    continue
                }
                let room = nextArrival < arriving.count ? arriving[nextArrival].index - rows.count : previous.count
                let end = min(removedAt, old + room, previous.count)
                if end <= old { break }
                rows.append(from: previous, old..<end)
                old = end
            }
            derivedRows[section] = rows.count == count ? rows : nil
        }
    }

    /// The item at `index` of `section` went: patched in place (`patch`), else derived again.
    mutating func removed(at index: Int, from section: SectionID, patch: Bool) {
        if patch, derivedRows[section] != nil { derivedRows[section]!.remove(at: index) } else { derivedRows[section] = nil }
    }

    /// `item` came in at `index` of `section`: patched in place (`patch`), else derived again.
    mutating func inserted(_ item: Item, at index: Int, in section: SectionID, patch: Bool) {
        if patch, derivedRows[section] != nil { derivedRows[section]!.insert(.item(item), at: index) } else { derivedRows[section] = nil }
    }

    /// At the start of a commit: a row journal describes one step from the last snapshot,
    /// so a journal the last snapshot did not take means anything may have changed.
    mutating func beginCommit() {
        changeJournal.beginCommit()
    }

    /// The row journal, taken out to be extended (nil when rows are not journaled); give it
    /// back with ``putRowJournal(_:)``. While it is out, anything may have changed.
    mutating func takeRowJournal() -> [Int64: RowChange]? {
        changeJournal.takeRows()
    }

    mutating func putRowJournal(_ journal: [Int64: RowChange]) {
        changeJournal = .rows(journal)
    }

    /// The snapshot of `index` with `payload`'s values and the options applied, and what
    /// changed since the previous call.
    mutating func snapshotAndChanges(
        _ index: SectionedIndex<Section, FullIndexKeys>, _ payload: ItemPayload<Item>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: Changes) {
        var changed = Set<SectionID>()
        var result: [ResultsSection<Item, Section>] = []
        result.reserveCapacity(index.sections.count)
        // Over the two arrays by position: zipping the ordered dictionary's views costs
        // generic iterator calls per section, which a one-row commit pays per section.
        let ids = index.sections.keys.elements, sections = index.sections.values.elements
        for position in ids.indices {
            let id = ids[position], section = sections[position]
            let rows: RowChunks<ResultsRow<Item>>
            if let cached = derivedRows[id] {
                rows = cached
            } else {
                rows = derive(section.items, payload)
                derivedRows[id] = rows
                changed.insert(id)
            }
            if rows.isEmpty && id.isTransient { continue }
            result.append(ResultsSection(id: id, value: section.value, rows: ResultsRows(chunks: rows)))
        }
        let changes: Changes
        switch changeJournal {
        case .rows(let journal): changes = .rows(Array(journal.values))
        case .sections: changes = .sections(changed)
        case .all: changes = refetchBase.map { .refetched(Self.refetchedRows($0, index, payload)) } ?? .all
        }
        changeJournal = rowsAreItems ? .rows([:]) : .sections
        refetchBase = nil
        return (ResultsSnapshot(sections: result), changes)
    }

    /// The batched snapshot of `index`: each section's rows are its item ids, read through
    /// `pages` (rows are items: batched loading has no post-fetch options).
    mutating func batchedSnapshotAndChanges(
        _ index: SectionedIndex<Section, CompactIndexKeys>, _ pages: BatchedPages<Item>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: Changes) {
        var result: [ResultsSection<Item, Section>] = []
        result.reserveCapacity(index.sections.count)
        let ids = index.sections.keys.elements, sections = index.sections.values.elements
        for position in ids.indices {
            let id = ids[position], section = sections[position]
            if section.items.isEmpty && id.isTransient { continue }
            result.append(ResultsSection(id: id, value: section.value, rows: ResultsRows(ids: section.items, pages: pages)))
        }
        let changes: Changes
        switch changeJournal {
        case .rows(let journal): changes = .rows(Array(journal.values))
        case .sections, .all: changes = .all
        }
        derivedRows.removeAll()
        refetchBase = nil
        changeJournal = .rows([:])
        return (ResultsSnapshot(sections: result), changes)
    }

    /// The ids and values of `base` and of the current state, to compare by id.
    private static func refetchedRows(
        _ base: RefetchBase, _ index: SectionedIndex<Section, FullIndexKeys>, _ payload: ItemPayload<Item>
    ) -> RefetchedRows {
        var ids: [SectionID: RowChunks<Int64>] = [:]
        ids.reserveCapacity(index.sections.count)
        for (id, section) in zip(index.sections.keys, index.sections.values) { ids[id] = section.items }
        let old = base.values
        return RefetchedRows(oldIDs: base.ids, newIDs: ids) { old.differences(in: payload) }
    }

    private func derive(_ items: RowChunks<Int64>, _ payload: ItemPayload<Item>) -> RowChunks<ResultsRow<Item>> {
        var shown: [Item] = []
        var rejected: [Item] = []
        shown.reserveCapacity(items.count)
        for id in items {
            let item = payload[id]!
            if let filter = options.filter, !filter(item) { rejected.append(item) } else { shown.append(item) }
        }
        if let comparator = options.comparator {
            // Stable: ties keep the fetch order.
            shown = shown.enumerated().sorted { a, b in
                if comparator(a.element, b.element) { return true }
                if comparator(b.element, a.element) { return false }
                return a.offset < b.offset
            }.map(\.element)
        }
        var rows = RowChunks(shown.lazy.map { ResultsRow.item($0) })
        if options.groupFilteredItems && !rejected.isEmpty { rows.append(.group(rejected)) }
        return rows
    }

    /// Checks that rows derived while rows are items are exactly their sections' items, and
    /// that nothing is derived for a section the index no longer has (debug builds only).
    func _checkInvariants<Keys>(against index: SectionedIndex<Section, Keys>) {
        #if DEBUG
        for id in derivedRows.keys {
            precondition(index.sections[id] != nil, "rows derived for a section that went: \(id)")
        }
        if rowsAreItems {
            for (id, section) in zip(index.sections.keys, index.sections.values) {
                guard let rows = derivedRows[id] else { continue }
                precondition(rows.map { $0.item?.objectID.rawValue } == Array(section.items), "derived rows out of date")
            }
        }
        #endif
    }
}
