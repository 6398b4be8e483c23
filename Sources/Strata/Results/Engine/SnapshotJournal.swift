/// What the next snapshot shows and how it differs from the last one: the post-fetch
/// options; each section's items with their values, in the index's order (the eager engine's
/// one copy of every shown value, whose chunks the snapshots share); the values of the
/// indexed items in no section's rows (``unplaced``); the rows shown when options filter or
/// sort (``DerivedRows``); and the changes since the last snapshot (``ChangeJournal``) — the
/// places every changed row left and took while rows are items, else the sections whose
/// rows were derived again.
///
/// Batched loading keeps no value here: its snapshots read their rows' values in pages.
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
    /// are items: each section's ids, and its values where they were — the last snapshot's
    /// item rows (chunks that snapshot shares: nothing is copied) and the hidden items'
    /// values (see ``RefetchedRows``).
    struct RefetchBase {
        let ids: [SectionID: RowChunks<Int64>]
        let rows: DerivedRows<Item>
        /// The sections of ``rows``, in the last snapshot's order.
        let sections: [SectionID]
        let unplaced: ItemPayload<Item>
        /// The comparison of these values with the refetch's, started once the refetch read
        /// every row (``compareRefetched(with:)``); nil: the batch compares them itself.
        var comparison: RefetchComparison?

        /// The number of values kept.
        var valueCount: Int { unplaced.count + ids.values.reduce(0) { $0 + $1.count } }

        /// Calls `body` with every value kept: the rows' section by section, then the hidden
        /// ones.
        @inline(__always)
        func forEachValue(_ body: (Item) -> Void) {
            SnapshotJournal.forEachItem(in: rows, sections: sections, body)
            unplaced.forEach { _, item in body(item) }
        }
    }

    var options: ResultsOptions<Item> {
        didSet {
            shownRows.removeAll()
            optionsChanged = true
            changeJournal.optionsChanged()
            refetchBase = nil
        }
    }

    /// Each section's items with their values, in the index's order (eager loading): every
    /// shown value is here once, and the snapshots share these chunks. A section without
    /// them has its items' values in ``unplaced`` and gets its rows at the next snapshot.
    private var itemRows = DerivedRows<Item>()
    /// The values of the indexed items that no section's item rows hold: hidden items (their
    /// section is not shown), and the items of sections whose rows are made again.
    private var unplaced = ItemPayload<Item>()
    /// With a post-fetch filter or comparator, each section's rows as the next snapshot shows
    /// them, as last derived from its item rows; a section without them is derived again.
    private var shownRows = DerivedRows<Item>()
    /// The options changed since the last snapshot: every section's rows count as derived
    /// again.
    private var optionsChanged = false
    /// What changed since the last snapshot: the row journal, or the sections derived
    /// again, or anything.
    private var changeJournal = ChangeJournal.all
    /// The last snapshot's state, kept by a refetch (``beginRefetch(_:)``) until
    /// the next snapshot is taken.
    private var refetchBase: RefetchBase?

    /// Whether a refetch keeps the last snapshot's state to compute its batch by id: not for
    /// a windowed request, whose batch is the difference of its windows.
    let comparesByID: Bool

    init(options: ResultsOptions<Item>, comparesByID: Bool = true) {
        self.options = options
        self.comparesByID = comparesByID
    }

    /// Whether snapshot rows are the items in fetch order: no post-fetch filter or comparator.
    var rowsAreItems: Bool { options.filter == nil && options.comparator == nil }

    /// After a refetch: no rows, no values, anything may have changed.
    mutating func reset() {
        itemRows.removeAll()
        unplaced.removeAll()
        shownRows.removeAll()
        changeJournal = .all
        refetchBase = nil
    }

    /// ``reset()``, with every item's value in `values`: the next snapshot makes every
    /// section's rows from them (results that leave batched loading).
    mutating func reset(values: ItemPayload<Item>) {
        reset()
        unplaced = values
    }

    /// Calls `body` with each item of `rows`, section by section in the order of `sections`
    /// (inlined: each caller's loop is specialized for its item type, as it was when written
    /// out in each).
    @inline(__always)
    fileprivate static func forEachItem(
        in rows: DerivedRows<Item>, sections: some Sequence<SectionID>, _ body: (Item) -> Void
    ) {
        for section in sections {
            guard let rows = rows[section] else { continue }
            for chunk in rows.chunks {
                for row in chunk {
                    guard case .item(let item) = row else { continue }
                    body(item)
                }
            }
        }
    }

    /// Before a refetch of eager results (`index` and the values still in their state): the
    /// state is kept to compare the next snapshot with by id, when it is the last snapshot's
    /// (nothing changed since it was taken, or a refetch since kept it) and rows are items.
    /// Then, like ``reset()``, nothing held, anything may have changed.
    mutating func beginRefetch<Keys>(_ index: SectionedIndex<Section, Keys>) {
        var base = refetchBase
        // A comparison started for an earlier refetch compared values that this one replaces.
        base?.comparison = nil
        if base == nil, comparesByID, rowsAreItems, case .rows(let journal) = changeJournal, journal.isEmpty {
            base = RefetchBase(
                ids: Self.ids(of: index), rows: itemRows, sections: Array(index.sections.keys), unplaced: unplaced)
        }
        reset()
        refetchBase = base
    }

    /// During a refetch that kept the last snapshot's state (``beginRefetch(_:)``),
    /// once it has read every row: `values`, every item's new value by id, are compared with
    /// the kept ones on another thread while the refetch sorts and places its rows; the
    /// batch then waits for the result (``RefetchComparison``). No effect without a kept state.
    mutating func compareRefetched(with values: ItemPayload<Item>) {
        guard let base = refetchBase else { return }
        refetchBase!.comparison = RefetchComparison(comparing: values) { compare in base.forEachValue(compare) }
    }

    /// During a commit's refetch that kept the last snapshot's state (``beginRefetch(_:)``):
    /// its values, laid out by id on another thread for the ids of `range` (the table's),
    /// for the refetch to take instead of decoding each row whole (``HeldValues``). Nil
    /// without a kept state, or when the ids are too sparse.
    func heldValues(range: ClosedRange<Int64>?) -> HeldValues<Item>? {
        guard let base = refetchBase else { return nil }
        return HeldValues(range: range, count: base.valueCount) { body in base.forEachValue(body) }
    }

    /// During a commit's refetch that kept the last snapshot's state
    /// (``beginRefetch(_:)``), once every row is read into `read`: the slots
    /// there (the reading numbers) of the items the last snapshot showed that `written` does
    /// not hold, in the last snapshot's order. Their keys did not change (unless a key is
    /// read through a relationship): they are runs in order for the refetch's sort
    /// (``SortKeyBuffer/sort(leading:)``). Empty without a kept state.
    func keptOrder(in read: ItemPayload<Item>, besides written: WrittenRows) -> [UInt32] {
        guard let base = refetchBase else { return [] }
        var rows: [UInt32] = []
        rows.reserveCapacity(read.count)
        for section in base.sections {
            guard let ids = base.ids[section] else { continue }
            for chunk in ids.chunks {
                for id in chunk where !written.contains(id) {
                    if let slot = read.slot(of: id) { rows.append(UInt32(truncatingIfNeeded: slot)) }
                }
            }
        }
        return rows
    }

    /// During a refetch that compares values ahead (``compareRefetched(with:)``), once
    /// `index` holds every row: the last snapshot's rows are matched with the next
    /// snapshot's by id on the comparison's thread, while the refetch makes the rows
    /// (``RefetchComparison/matchRows(old:new:)``); the batch takes the result. No effect
    /// without a comparison.
    mutating func matchRefetched<Keys>(_ index: SectionedIndex<Section, Keys>) {
        guard let base = refetchBase, let comparison = base.comparison else { return }
        // The sections each snapshot shows (rows are items: see ``snapshotAndChanges(_:)``).
        var old: [(id: SectionID, items: RowChunks<Int64>)] = []
        old.reserveCapacity(base.sections.count)
        for id in base.sections {
            let items = base.ids[id] ?? RowChunks()
            if !(items.isEmpty && id.isTransient) { old.append((id, items)) }
        }
        var new: [(id: SectionID, items: RowChunks<Int64>)] = []
        new.reserveCapacity(index.sections.count)
        let ids = index.sections.keys.elements, sections = index.sections.values.elements
        for position in ids.indices where !(sections[position].items.isEmpty && ids[position].isTransient) {
            new.append((ids[position], sections[position].items))
        }
        comparison.matchRows(old: old, new: new)
    }

    /// The items of `section` with their values, in order, as a fetch produced them.
    mutating func setRows(_ rows: RowChunks<ResultsRow<Item>>, for section: SectionID) {
        itemRows[section] = rows
    }

    /// The value of the item `id`, which no section's rows hold (it is hidden).
    mutating func keepUnplaced(_ id: Int64, _ item: Item) {
        unplaced[id] = item
    }

    /// Forgets the value of the item `id` if no section's rows hold it (it was hidden, or in
    /// a section whose rows are made again): the item went, or is read again.
    mutating func forgetUnplaced(_ id: Int64) {
        unplaced[id] = nil
    }

    /// The items of `sections` changed wholesale (their section went, or hidden items came
    /// into it): their values leave the sections' rows, which the next snapshot makes again.
    mutating func invalidate(_ sections: some Sequence<SectionID>) {
        for section in sections {
            shownRows[section] = nil
            guard let rows = itemRows.removeValue(forKey: section) else { continue }
            for row in rows {
                guard case .item(let item) = row else { continue }
                unplaced[item.objectID.rawValue] = item
            }
        }
    }

    /// A bulk replacement (``SectionedIndex/replaceInBulk(gone:fetched:refetched:parallelMinimum:)``) in the
    /// sections `touched`: each section's item rows are rebuilt from its previous ones, less
    /// those at the indexes `removals` lists (increasing), with `arrivals` (the re-read items
    /// merged into it, at their final indexes, increasing, by their offsets in the re-read
    /// rows, whose values `items` gives) merged in: runs of rows copied between the changed
    /// places, instead of a lookup of every item's value. A section without item rows, or one
    /// that took rows placed one by one (it was made, or made again, by the commit), gets
    /// them at the next snapshot: its values wait in ``unplaced``, the re-read ones given by
    /// `reread`. (The removed items' values that waited there were forgotten before, see
    /// ``forgetUnplaced(_:)``.) `sectionItems` gives each section's items after the commit.
    mutating func replaced(
        in touched: Set<SectionID>, removals: [SectionID: [Int]], arrivals: [SectionID: [(index: Int, offset: Int)]],
        items: (Int) -> Item?, sectionItems: (SectionID) -> RowChunks<Int64>?, reread: (Int64) -> Item?
    ) {
        for section in touched {
            shownRows[section] = nil
            guard let ids = sectionItems(section) else {
                // The section went, with all its items.
                itemRows[section] = nil
                continue
            }
            let count = ids.count
            let removed = removals[section] ?? [], arriving = arrivals[section] ?? []
            let previous = itemRows.removeValue(forKey: section)
            guard let previous, previous.count - removed.count + arriving.count == count else {
                if let previous {
                    var nextRemoved = 0
                    for (index, row) in previous.enumerated() {
                        if nextRemoved < removed.count && removed[nextRemoved] == index {
                            nextRemoved += 1
                            continue
                        }
                        if case .item(let item) = row { unplaced[item.objectID.rawValue] = item }
                    }
                }
                for id in ids where unplaced[id] == nil {
                    guard let item = reread(id) else { preconditionFailure("item \(id) has no value") }
                    unplaced[id] = item
                }
                continue
            }
            var rows = RowChunks<ResultsRow<Item>>()
            var old = 0, nextRemoved = 0, nextArrival = 0
            while rows.count < count {
                if nextArrival < arriving.count && arriving[nextArrival].index == rows.count {
                    guard let item = items(arriving[nextArrival].offset) else { preconditionFailure("a re-read row without its value") }
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
                precondition(end > old, "rows out of step with their section")
                rows.append(from: previous, old..<end)
                old = end
            }
            itemRows[section] = rows
        }
    }

    /// The item `id` at `index` of `section` went (its value too).
    mutating func removed(_ id: Int64, at index: Int, from section: SectionID) {
        shownRows[section] = nil
        if itemRows[section] != nil { itemRows[section]!.remove(at: index) } else { unplaced[id] = nil }
    }

    /// The item `id` came in at `index` of `section`, with its value `item` (nil: the
    /// loading keeps none).
    mutating func inserted(_ id: Int64, _ item: Item?, at index: Int, in section: SectionID) {
        shownRows[section] = nil
        guard let item else {
            itemRows[section] = nil
            return
        }
        if itemRows[section] != nil { itemRows[section]!.insert(.item(item), at: index) } else { unplaced[id] = item }
    }

    /// At the start of a commit: a row journal describes one step from the last snapshot,
    /// so a journal the last snapshot did not take means anything may have changed.
    mutating func beginCommit() {
        changeJournal.beginCommit()
        // The refetch's values compared ahead are no longer the rows' (the batch compares).
        refetchBase?.comparison = nil
    }

    /// The row journal, taken out to be extended (nil when rows are not journaled); give it
    /// back with ``putRowJournal(_:)``. While it is out, anything may have changed.
    mutating func takeRowJournal() -> [Int64: RowChange]? {
        changeJournal.takeRows()
    }

    mutating func putRowJournal(_ journal: [Int64: RowChange]) {
        changeJournal = .rows(journal)
    }

    /// The snapshot of `index` with the values held and the options applied, and what
    /// changed since the previous call. Sections without item rows get them, from
    /// ``unplaced``.
    mutating func snapshotAndChanges(
        _ index: SectionedIndex<Section, FullIndexKeys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: Changes) {
        var changed = Set<SectionID>()
        var result: [ResultsSection<Item, Section>] = []
        result.reserveCapacity(index.sections.count)
        let rowsAreItems = rowsAreItems
        // Over the two arrays by position: zipping the ordered dictionary's views costs
        // generic iterator calls per section, which a one-row commit pays per section.
        let ids = index.sections.keys.elements, sections = index.sections.values.elements
        for position in ids.indices {
            let id = ids[position], section = sections[position]
            var rows: RowChunks<ResultsRow<Item>>
            if let held = itemRows[id] {
                rows = held
            } else {
                rows = placeUnplaced(section.items)
                itemRows[id] = rows
                changed.insert(id)
            }
            if !rowsAreItems {
                if let cached = shownRows[id] {
                    rows = cached
                } else {
                    rows = derive(rows)
                    shownRows[id] = rows
                    changed.insert(id)
                }
            }
            if optionsChanged { changed.insert(id) }
            if rows.isEmpty && id.isTransient { continue }
            result.append(ResultsSection(id: id, value: section.value, rows: ResultsRows(chunks: rows)))
        }
        let changes: Changes
        switch changeJournal {
        case .rows(let journal): changes = .rows(Array(journal.values))
        case .sections: changes = .sections(changed)
        case .all: changes = refetchBase.map { .refetched(refetchedRows($0, index)) } ?? .all
        }
        changeJournal = rowsAreItems ? .rows([:]) : .sections
        refetchBase = nil
        optionsChanged = false
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
        itemRows.removeAll()
        shownRows.removeAll()
        refetchBase = nil
        optionsChanged = false
        changeJournal = .rows([:])
        return (ResultsSnapshot(sections: result), changes)
    }

    /// Each section's item ids in `index`.
    private static func ids<Keys>(of index: SectionedIndex<Section, Keys>) -> [SectionID: RowChunks<Int64>] {
        var ids: [SectionID: RowChunks<Int64>] = [:]
        ids.reserveCapacity(index.sections.count)
        for (id, section) in zip(index.sections.keys, index.sections.values) { ids[id] = section.items }
        return ids
    }

    /// The ids and values of `base` and of the current state, to compare by id: the
    /// comparison started while the refetch placed its rows, or else every item of the
    /// current rows compared, in the results' order, with its value in `base` (copied out of
    /// the last snapshot's rows in the same order, so both are read nearly in sequence).
    private func refetchedRows(_ base: RefetchBase, _ index: SectionedIndex<Section, FullIndexKeys>) -> RefetchedRows {
        let rows = itemRows
        let sections = index.sections.keys.elements
        return RefetchedRows(oldIDs: base.ids, newIDs: Self.ids(of: index), matchedAhead: base.comparison) {
            if let comparison = base.comparison { return comparison.differs() }
            var old = ItemPayload<Item>()
            old.reserveCapacity(base.valueCount)
            base.forEachValue { old.append($0.objectID.rawValue, $0) }
            var changed = old.comparison()
            Self.forEachItem(in: rows, sections: sections) { changed.compare($0) }
            return changed.differs
        }
    }

    /// The rows of `items`, whose values wait in ``unplaced`` (and leave it).
    private mutating func placeUnplaced(_ items: RowChunks<Int64>) -> RowChunks<ResultsRow<Item>> {
        var rows = RowChunks<ResultsRow<Item>>()
        for id in items {
            guard let item = unplaced[id] else { preconditionFailure("item \(id) has no value") }
            unplaced[id] = nil
            rows.append(.item(item))
        }
        return rows
    }

    /// The rows shown of a section whose items are `items`: the post-fetch options applied.
    private func derive(_ items: RowChunks<ResultsRow<Item>>) -> RowChunks<ResultsRow<Item>> {
        var shown: [Item] = []
        var rejected: [Item] = []
        shown.reserveCapacity(items.count)
        for row in items {
            guard case .item(let item) = row else { continue }
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

    /// Checks that each section's item rows are exactly its items, and that nothing is kept
    /// for a section the index no longer has (debug builds only).
    func _checkInvariants<Keys>(against index: SectionedIndex<Section, Keys>) {
        #if DEBUG
        for id in itemRows.keys {
            precondition(index.sections[id] != nil, "rows kept for a section that went: \(id)")
            precondition(
                itemRows[id]!.map { $0.item?.objectID.rawValue } == Array(index.sections[id]!.items), "item rows out of date")
        }
        for id in shownRows.keys {
            precondition(index.sections[id] != nil, "rows derived for a section that went: \(id)")
        }
        #endif
    }

    /// Checks that every indexed item's value is held once — in its section's item rows, or
    /// in ``unplaced`` when hidden or when its section has none — and nothing else is (debug
    /// builds only; eager loading).
    func _checkValues<Keys>(against index: SectionedIndex<Section, Keys>) {
        #if DEBUG
        var expectedUnplaced = 0
        for (id, section) in zip(index.sections.keys, index.sections.values) where itemRows[id] == nil {
            expectedUnplaced += section.items.count
            for item in section.items { precondition(unplaced[item] != nil, "item \(item) has no value") }
        }
        for id in index.keys.ids where index.keys.section(of: id) == .some(nil) {
            expectedUnplaced += 1
            precondition(unplaced[id] != nil, "hidden item \(id) has no value")
        }
        precondition(unplaced.count == expectedUnplaced, "values held for items not indexed")
        unplaced._checkInvariants()
        #endif
    }
}
