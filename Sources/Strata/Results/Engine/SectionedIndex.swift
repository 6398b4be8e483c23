import Dispatch
import Foundation
import GRDB
import OrderedCollections

/// Where every item of a request's results is, by id and keys alone: each item's sort and
/// section keys and its section, and the sections in order with their item ids in SQL
/// order. It holds no item values (``ItemPayload`` does), so that what places an item and
/// what shows it can be loaded separately.
///
/// Items whose section is not shown (an entity section the section predicate leaves out, an
/// orphan without an orphans section) are kept, *hidden*, indexed by their section object's
/// id, so that a section that appears adopts them without a scan. Keyed and orphan sections
/// exist only while they hold items; entity sections and the single section always do.
///
/// Every order is ``DatabaseValueOrdering``'s, which is SQLite's `ORDER BY`, ties broken by
/// id, so binary search places an item exactly where a fresh fetch would.
///
/// What it keeps of each item is its `Keys` store's, chosen with its type: every key
/// (``FullIndexKeys``, eager loading), or the section slot alone (``CompactIndexKeys``,
/// batched loading, which reads the keys a search visits from the database).
struct SectionedIndex<Section: Hashable & Sendable, Keys: IndexKeyStore> {
    struct IndexSection {
        var value: SectionValue<Section>
        /// The values that order the section among the others.
        var order: [DatabaseValue]
        /// Its items' ids, in order, in chunks: a batched snapshot shares them, and the next
        /// change copies one chunk, not the section.
        var items: RowChunks<Int64>
    }

    /// Where a removed item was.
    struct Removal {
        var section: SectionID
        var index: Int
        /// The section went with its last item (keyed and orphan sections).
        var sectionRemoved: Bool
    }

    /// The state of a build (``IndexBuild``, not generic: a build's per-row work then looks
    /// up no generic metadata).
    typealias Builder = IndexBuild

    let kind: ResultsQueryPlan.SectionKind
    /// Where items are known to be, from outside the index: a user edit knows the row it
    /// moves or deletes (its place in the delivered snapshot, usually the index's too). A
    /// hint is checked against the section's ids before it is used, so a stale one only
    /// costs the search; the engine clears them after each commit. A batched index, which
    /// keeps no keys to search with, would otherwise scan the section for the item.
    var placeHints: [Int64: (section: SectionID, index: Int)] = [:]
    let itemDescending: [Bool]
    let sectionDescending: [Bool]
    /// What places each item.
    private(set) var keys = Keys()
    private(set) var sections: OrderedDictionary<SectionID, IndexSection> = [:]
    /// The hidden items by their section object's id.
    private var hidden: [Int64: Set<Int64>] = [:]

    init(kind: ResultsQueryPlan.SectionKind, itemDescending: [Bool]) {
        self.kind = kind
        self.itemDescending = itemDescending
        switch kind {
        case .none: sectionDescending = []
        case .key(_, let descending, _): sectionDescending = [descending]
        case .entity(_, _, let sort, _, _): sectionDescending = sort.map(\.descending)
        }
    }

    var isEmptyCapacity: Bool { keys.isEmptyCapacity }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>? = nil) { keys.reserveCapacity(count, ids: ids) }

    // MARK: - Records

    /// The number of items, shown or hidden.
    var count: Int { keys.count }

    /// Whether the item `id` is indexed (shown or hidden).
    func contains(_ id: Int64) -> Bool { keys.contains(id) }

    /// Every indexed id.
    var ids: [Int64] { keys.ids }

    // MARK: - Building from a fetch

    /// Forgets every item and starts a build: the single section, or the entity sections
    /// read (`sectionObjects`, in any order).
    mutating func beginBuild(sectionObjects: [FetchedSection<Section>]) -> Builder {
        keys.removeAll()
        hidden = [:]
        sections = [:]
        switch kind {
        case .none:
            sections[.single] = IndexSection(value: .value(NoSection() as! Section), order: [], items: [])
        case .key:
            break
        case .entity:
            for object in sectionObjects {
                sections[.object(object.id)] = IndexSection(value: .value(object.value), order: object.order, items: [])
            }
        }
        return Builder()
    }

    /// Adds an item read in the results' order; returns the number of its section's bucket (the
    /// order in which the build met the sections), or nil when the item is hidden.
    mutating func appendFetched(_ id: Int64, _ keys: IndexKeys, to builder: inout Builder) -> Int? {
        if !isFirstLetter, let resolved = builder.resolved(keys.key) {
            self.keys.append(id, keys, section: resolved.section)
            guard let bucket = resolved.bucket else {
                addHidden(id, keys.key)
                return nil
            }
            builder.items[bucket].append(id)
            return bucket
        }
        let bucket = appendFetchedResolving(id, keys, to: &builder)
        var result = IndexBuild.Resolved(section: bucket == nil ? nil : builder.last?.id, bucket: bucket)
        result.slot = self.keys.slot(of: id)
        switch keys.key.storage {
        case .int64(let raw) where !isFirstLetter: builder.setResolved(result, for: raw)
        case .null where !isFirstLetter: builder.setResolvedNull(result)
        default: break
        }
        return bucket
    }

    private var isFirstLetter: Bool {
        if case .key(_, _, true) = kind { return true }
        return false
    }

    private mutating func appendFetchedResolving(_ id: Int64, _ keys: IndexKeys, to builder: inout Builder) -> Int? {
        let section = sectionID(for: keys)
        self.keys.append(id, keys, section: section)
        guard let section else {
            addHidden(id, keys.key)
            return nil
        }
        let bucket: Int
        if let last = builder.last, last.id == section {
            bucket = last.bucket
        } else if let existing = builder.buckets[section] {
            bucket = existing
        } else {
            bucket = builder.items.count
            builder.buckets[section] = bucket
            builder.items.append([])
            builder.firstKeys.append(keys)
        }
        builder.last = (section, bucket)
        builder.items[bucket].append(id)
        return bucket
    }

    /// Ends a build: creates the keyed sections, orders the sections, and gives each its
    /// items. Returns the shown sections with their bucket numbers; the items of a key the
    /// section type cannot represent (an unknown enum raw value written by raw SQL) are
    /// hidden, as incremental updates hide them.
    mutating func finishBuild(_ builder: Builder) -> [(section: SectionID, bucket: Int)] {
        keys.settleSlots()
        var shown: [(section: SectionID, bucket: Int)] = []
        shown.reserveCapacity(builder.buckets.count)
        for (id, bucket) in builder.buckets {
            if sections[id] == nil {
                guard let section = try? makeKeySection(id, keys: builder.firstKeys[bucket]) else {
                    hide(builder.items[bucket])
                    continue
                }
                sections[id] = section
            }
            shown.append((id, bucket))
        }
        let descending = sectionDescending
        sections.sort { Self.sectionPrecedes($0.key, $0.value, $1.key, $1.value, descending: descending) }
        for (id, bucket) in shown { sections[id]?.items = RowChunks(builder.items[bucket]) }
        return shown
    }

    // MARK: - Incremental changes

    /// Where the item `id` is shown: its section and its index there.
    func place(of id: Int64) throws -> RowChange.Place? {
        guard let found = keys.section(of: id), let section = found, let items = sections[section]?.items else {
            return nil
        }
        return RowChange.Place(section: section, index: try position(of: id, in: items, section: section))
    }

    /// The position of `id` in its section's `items`: where ``placeHints`` says, when it is
    /// there, else where its key store finds it.
    private func position(of id: Int64, in items: RowChunks<Int64>, section: SectionID) throws -> Int {
        // (Most commits have no hint: no lookup then.)
        if !placeHints.isEmpty, let hint = placeHints[id], hint.section == section, hint.index >= 0, hint.index < items.count, items[hint.index] == id {
            return hint.index
        }
        return try keys.position(of: id, in: items, descending: itemDescending)
    }

    /// Removes the item `id`; returns where it was shown.
    mutating func remove(_ id: Int64) throws -> Removal? {
        guard let found = keys.section(of: id) else { return nil }
        guard let section = found, let s = sections.index(forKey: section) else {
            if let key = keys.hiddenKey(of: id) { removeHidden(id, key) }
            keys.remove(id)
            return nil
        }
        let index = try position(of: id, in: sections.values[s].items, section: section)
        precondition(
            index < sections.values[s].items.count && sections.values[s].items[index] == id,
            "item \(id) not where expected")
        keys.remove(id)
        sections.values[s].items.remove(at: index)
        var removed = false
        if sections.values[s].items.isEmpty, section.isTransient {
            sections.remove(at: s)
            removed = true
        }
        return Removal(section: section, index: index, sectionRemoved: removed)
    }

    /// Inserts the item `id` read afresh; returns where it is shown (nil when hidden).
    mutating func insert(_ id: Int64, _ keys: IndexKeys) throws -> RowChange.Place? {
        guard let section = sectionID(for: keys) else {
            self.keys.set(id, keys, section: nil)
            addHidden(id, keys.key)
            return nil
        }
        self.keys.set(id, keys, section: section)
        if sections[section] == nil {
            guard let created = try? makeKeySection(section, keys: keys) else {
                hide([id])  // a key the section type cannot represent: left out
                return nil
            }
            sections.updateValue(created, forKey: section, insertingAt: sectionInsertionIndex(of: section, created))
        }
        let s = sections.index(forKey: section)!
        let index = try self.keys.insertionIndex(of: id, keys.sort[...], in: sections.values[s].items, descending: itemDescending)
        sections.values[s].items.insert(id, at: index)
        return RowChange.Place(section: section, index: index)
    }

    /// Replaces the section objects of `ids` with those read afresh (`fresh`: the ones the
    /// section predicate keeps), each placed by binary search; items of sections that went
    /// are hidden, hidden items of sections that appeared are adopted. Returns the sections
    /// whose items changed wholesale.
    mutating func updateSections(_ fresh: [FetchedSection<Section>], ids: Set<Int64>) throws -> Set<SectionID> {
        var byID: [SectionID: FetchedSection<Section>] = [:]
        for object in fresh { byID[.object(object.id)] = object }
        var changed = Set<SectionID>()
        var appeared: [Int64] = []
        for id in ids.sorted() {
            let sectionID = SectionID.object(id)
            var items = RowChunks<Int64>()
            let old = sections.removeValue(forKey: sectionID)
            if let old {
                items = old.items
                if byID[sectionID] == nil {
                    changed.insert(sectionID)
                    hide(old.items)
                    continue
                }
                // Its items stay; its value, read afresh, goes into the next snapshot.
            }
            guard let object = byID[sectionID] else { continue }
            if old == nil { appeared.append(id) }
            let section = IndexSection(value: .value(object.value), order: object.order, items: items)
            sections.updateValue(section, forKey: sectionID, insertingAt: sectionInsertionIndex(of: sectionID, section))
        }
        changed.formUnion(try adoptHiddenItems(of: appeared))
        return changed
    }

    /// Replaces every section object with those read afresh (`fresh`, all the section
    /// predicate keeps, in order); the orphans section stays last. Returns the sections
    /// whose items changed wholesale.
    mutating func refreshSections(_ fresh: [FetchedSection<Section>]) throws -> Set<SectionID> {
        var old = sections
        let orphans = old.removeValue(forKey: .orphans)
        var appeared: [Int64] = []
        var next: OrderedDictionary<SectionID, IndexSection> = [:]
        next.reserveCapacity(fresh.count + 1)
        for object in fresh {
            let id = SectionID.object(object.id)
            var section = IndexSection(value: .value(object.value), order: object.order, items: [])
            if let previous = old.removeValue(forKey: id) {
                section.items = previous.items
            } else {
                appeared.append(object.id)
            }
            next[id] = section
        }
        if let orphans { next[.orphans] = orphans }
        sections = next  // in the read order, the section sort's
        // Items of sections that went are no longer shown.
        var changed = Set<SectionID>()
        for (id, gone) in old {
            changed.insert(id)
            hide(gone.items)
        }
        changed.formUnion(try adoptHiddenItems(of: appeared))
        return changed
    }

    /// Moves the hidden items of sections that appeared into them; returns those sections.
    private mutating func adoptHiddenItems(of appeared: [Int64]) throws -> Set<SectionID> {
        var adopted = Set<SectionID>()
        for key in appeared {
            guard let ids = hidden.removeValue(forKey: key) else { continue }
            let sectionID = SectionID.object(key)
            guard sections[sectionID] != nil else { continue }
            var sortKeys: [Int64: ArraySlice<DatabaseValue>] = [:]
            for id in ids {
                sortKeys[id] = try keys.sortKeys(of: id)
                keys.show(id, in: sectionID)
            }
            let descending = itemDescending
            if var items = sections[sectionID].map({ $0.items.flattened }) {
                items.append(contentsOf: ids)
                items.sort { Self.precedes(sortKeys[$0]!, $0, sortKeys[$1]!, $1, descending: descending) }
                sections[sectionID]?.items = RowChunks(items)
            }
            adopted.insert(sectionID)
        }
        return adopted
    }

    // MARK: - Hidden items

    private mutating func addHidden(_ id: Int64, _ rawKey: DatabaseValue) {
        if case .int64(let key) = rawKey.storage { hidden[key, default: []].insert(id) }
    }

    private mutating func removeHidden(_ id: Int64, _ rawKey: DatabaseValue) {
        if case .int64(let key) = rawKey.storage {
            hidden[key]?.remove(id)
            if hidden[key]?.isEmpty == true { hidden[key] = nil }
        }
    }

    /// Takes items out of the shown sections (their section went, or cannot be shown).
    private mutating func hide(_ items: some Sequence<Int64>) {
        for item in items {
            guard let rawKey = keys.hide(item) else { continue }
            addHidden(item, rawKey)
        }
    }

    // MARK: - Sections

    /// The section an item with `keys` belongs in; nil when it is not shown.
    private func sectionID(for keys: IndexKeys) -> SectionID? {
        switch kind {
        case .none:
            return .single
        case .key(_, _, let firstLetter):
            guard firstLetter else { return .key(keys.key) }
            guard case .string(let string) = keys.key.storage, let first = string.first else {
                return .key("".databaseValue)
            }
            // Canonically equivalent letters ("é", "e\u{301}") are one section, keyed by their
            // precomposed form so that its bytes, which order sections, are unique.
            return .key(String(first).uppercased().precomposedStringWithCanonicalMapping.databaseValue)
        case .entity(_, _, _, _, let orphans):
            guard case .int64(let id) = keys.key.storage else { return orphans ? .orphans : nil }
            let section = SectionID.object(id)
            return sections[section] == nil ? nil : section
        }
    }

    private func makeKeySection(_ id: SectionID, keys: IndexKeys) throws -> IndexSection {
        switch id {
        case .orphans:
            return IndexSection(value: .orphans, order: [], items: [])
        case .key(let letter):
            if case .key(_, _, true) = kind {
                guard case .string(let string) = letter.storage, let value = string as? Section else {
                    throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
                }
                return IndexSection(value: .value(value), order: [letter], items: [])
            }
            return IndexSection(value: .value(try Self.sectionValue(keys.key)), order: [keys.keyOrder], items: [])
        default:
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
    }

    private static func sectionValue(_ key: DatabaseValue) throws -> Section {
        guard let type = Section.self as? any DatabaseValueConvertible.Type else {
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
        func convert<T: DatabaseValueConvertible>(_ type: T.Type) -> Section? {
            if key.isNull, let none = Optional<T>.none as? Section { return none }
            return T.fromDatabaseValue(key) as? Section
        }
        guard let value = convert(type) else { throw ResultsError.sectionValueUnreadable(key.description) }
        return value
    }

    // MARK: - Ordering

    private static func precedes(
        _ lhs: ArraySlice<DatabaseValue>, _ lhsID: Int64, _ rhs: ArraySlice<DatabaseValue>, _ rhsID: Int64, descending: [Bool]
    ) -> Bool {
        DatabaseValueOrdering.compare(lhs, id: lhsID, rhs, id: rhsID, descending: descending) < 0
    }

    private func sectionPrecedes(_ lhsID: SectionID, _ lhs: IndexSection, _ rhsID: SectionID, _ rhs: IndexSection) -> Bool {
        Self.sectionPrecedes(lhsID, lhs, rhsID, rhs, descending: sectionDescending)
    }

    private static func sectionPrecedes(
        _ lhsID: SectionID, _ lhs: IndexSection, _ rhsID: SectionID, _ rhs: IndexSection, descending sectionDescending: [Bool]
    ) -> Bool {
        switch (lhsID, rhsID) {
        case (.orphans, _): return false
        case (_, .orphans): return true
        case (.object(let a), .object(let b)):
            return DatabaseValueOrdering.compare(lhs.order, id: a, rhs.order, id: b, descending: sectionDescending) < 0
        case (.key(let a), .key(let b)):
            for index in 0..<min(lhs.order.count, rhs.order.count) {
                let order = DatabaseValueOrdering.compare(lhs.order[index], rhs.order[index])
                if order != 0 { return sectionDescending.first == true ? order > 0 : order < 0 }
            }
            let order = DatabaseValueOrdering.compare(a, b)
            return sectionDescending.first == true ? order > 0 : order < 0
        default:
            return false
        }
    }

    private func sectionInsertionIndex(of id: SectionID, _ section: IndexSection) -> Int {
        var low = 0
        var high = sections.count
        while low < high {
            let mid = (low + high) / 2
            if sectionPrecedes(sections.keys[mid], sections.values[mid], id, section) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    // MARK: - Invariants

    /// Checks the index (debug builds only): sections in order, transient sections not
    /// empty, every shown record in exactly its section and in order, the hidden index
    /// exactly the records without a section.
    func _checkInvariants() {
        #if DEBUG
        var shown = 0
        for (index, (id, section)) in zip(sections.keys, sections.values).enumerated() {
            if index > 0 {
                precondition(
                    sectionPrecedes(sections.keys[index - 1], sections.values[index - 1], id, section),
                    "sections out of order")
            }
            if id.isTransient { precondition(!section.items.isEmpty, "empty transient section") }
            for (position, item) in section.items.enumerated() {
                guard let found = keys.section(of: item) else { preconditionFailure("item \(item) has no record") }
                precondition(found == id, "item \(item) in the wrong section")
                if position > 0 {
                    precondition(keys._inOrder(section.items[position - 1], item, descending: itemDescending), "items out of order")
                }
            }
            shown += section.items.count
        }
        precondition(shown == keys._shownCount(), "shown records not in sections")
        let expectedHidden = keys._hiddenByKey()
        precondition(hidden == expectedHidden, "hidden index out of date")
        #endif
    }
}

// MARK: - Batched loading

extension SectionedIndex where Keys == CompactIndexKeys {
    /// Reads the sort keys of an item from the database, while a commit is applied.
    var keyReader: ((Int64) throws -> [DatabaseValue])? {
        get { keys.keyReader }
        set { keys.keyReader = newValue }
    }

    /// ``appendFetched(_:_:to:)`` for each row of a compact index's fetch, given by `rows`
    /// (id, raw section key, key order, in the results' order): an item met again under an integer or
    /// NULL key is placed without building its keys, by non-generic code (``IndexBuild``),
    /// the index's keys held outside it meanwhile; the first item of a section, or of a key
    /// that needs more (a first letter, a hidden item), goes the general way.
    mutating func appendFetched(
        from rows: ((Int64, DatabaseValue, DatabaseValue) throws -> Void) throws -> Void, to builder: inout Builder
    ) rethrows {
        let resolvesRawKeys = !isFirstLetter
        var keys = CompactIndexKeys()
        swap(&keys, &self.keys)
        defer { swap(&keys, &self.keys) }
        try rows { id, rawKey, keyOrder in
            if resolvesRawKeys, builder.appendResolved(id, rawKey: rawKey, to: &keys) { return }
            swap(&keys, &self.keys)
            defer { swap(&keys, &self.keys) }
            self.appendFetched(id, rawKey: rawKey, keyOrder: keyOrder, resolvesRawKeys: resolvesRawKeys, to: &builder)
        }
    }

    private mutating func appendFetched(
        _ id: Int64, rawKey: DatabaseValue, keyOrder: DatabaseValue, resolvesRawKeys: Bool, to builder: inout Builder
    ) {
        if resolvesRawKeys, let resolved = builder.resolved(rawKey) {
            // A key resolved to no shown section: the item is hidden.
            keys.append(id, slot: resolved.slot, rawKey: rawKey)
            addHidden(id, rawKey)
            return
        }
        _ = appendFetched(id, IndexKeys(sort: [], key: rawKey, keyOrder: keyOrder), to: &builder)
    }
}

// MARK: - Bulk replacement (eager loading)

extension SectionedIndex where Keys == FullIndexKeys {
    /// Where the items of a commit were and are, from ``replaceInBulk(gone:fetched:refetched:parallelMinimum:)``.
    struct BulkReplacement {
        /// Where each removed item was shown, before the commit.
        var old: [Int64: RowChange.Place] = [:]
        /// Where each re-read item is shown, after it.
        var new: [Int64: RowChange.Place] = [:]
        /// The sections whose items changed (some may have gone).
        var touched: Set<SectionID> = []
        /// Per section that lost items, their indexes before the commit, increasing.
        var removedIndexes: [SectionID: [Int]] = [:]
        /// Per section that existed before the commit and took re-read rows, their indexes
        /// after it, increasing, with their offsets in `fetched`.
        var arrivals: [SectionID: [(index: Int, offset: Int)]] = [:]
    }

    /// Removes the items `gone`, then inserts the items `fetched` read afresh: the same
    /// result as ``remove(_:)`` and ``insert(_:_:)`` item by item, in passes over the touched
    /// sections instead of four binary searches per item. For commits that change many rows
    /// of a full (not compact) index: its cost is the touched sections' length plus a sort
    /// of the re-read rows, not the number of rows times the searches' dictionary probes.
    ///
    /// `refetched` holds the ids of `fetched`: their records are overwritten rather than
    /// removed and added again.
    mutating func replaceInBulk(
        gone: Set<Int64>, fetched: [(id: Int64, keys: IndexKeys)], refetched: Set<Int64>, parallelMinimum: Int = 20_000
    ) throws -> BulkReplacement {
        var result = BulkReplacement()
        result.old.reserveCapacity(gone.count)
        result.new.reserveCapacity(fetched.count)
        // 1. Removal: one pass over each section that loses items records their places.
        var leaving: [SectionID: Set<Int64>] = [:]
        for id in gone {
            guard let found = keys.section(of: id) else { continue }
            guard let section = found else {
                if let key = keys.hiddenKey(of: id) { removeHidden(id, key) }
                keys.remove(id)
                continue
            }
            leaving[section, default: []].insert(id)
        }
        // Each section is split into kept items and removed indexes on its own, in parallel
        // when there is enough work for the cores.
        let departures = leaving.map { (section: $0.key, ids: $0.value) }
        let itemLists = departures.map { departure in
            guard let items = sections[departure.section]?.items else {
                preconditionFailure("section of \(departure.ids) not indexed")
            }
            return items
        }
        let splits = Self.map(
            departures.count, parallel: itemLists.reduce(0) { $0 + $1.count } >= parallelMinimum
        ) { index -> (kept: [Int64], removed: [Int]) in
            let items = itemLists[index], ids = departures[index].ids
            var kept: [Int64] = []
            kept.reserveCapacity(items.count - ids.count)
            var removed: [Int] = []
            removed.reserveCapacity(ids.count)
            for (index, id) in items.enumerated() {
                if ids.contains(id) { removed.append(index) } else { kept.append(id) }
            }
            return (kept, removed)
        }
        for (position, departure) in departures.enumerated() {
            let section = departure.section, ids = departure.ids, (kept, removed) = splits[position]
            let items = itemLists[position]
            for index in removed { result.old[items[index]] = RowChange.Place(section: section, index: index) }
            result.removedIndexes[section] = removed
            precondition(removed.count == ids.count, "items not in their section")
            let s = sections.index(forKey: section)!
            for id in ids where !refetched.contains(id) { keys.remove(id) }
            if kept.isEmpty && section.isTransient {
                sections.remove(at: s)
            } else {
                sections.values[s].items = RowChunks(kept)
            }
            result.touched.insert(section)
        }
        // 2. Insertion: the rows of sections that exist are sorted and merged into them; the
        // others (hidden, or a keyed section to create) go one by one.
        var arriving: [SectionID: Arrivals] = [:]
        var oneByOne: [(id: Int64, keys: IndexKeys)] = []
        for (offset, row) in fetched.enumerated() {
            if let section = sectionID(for: row.keys), sections[section] != nil {
                keys.set(row.id, row.keys, section: section)
                arriving[section, default: []].append((row.id, row.keys.sort[...], offset))
            } else {
                oneByOne.append(row)
            }
        }
        // Each section's rows are sorted and merged on their own, in parallel when there is
        // enough work for the cores; the records are only read meanwhile.
        let work = arriving.map { (section: $0.key, position: sections.index(forKey: $0.key)!, rows: $0.value) }
        let merges = Self.mergeAll(
            work.map { ($0.rows, sections.values[$0.position].items.flattened) }, keys: keys, descending: itemDescending,
            parallelMinimum: parallelMinimum)
        for (item, merge) in zip(work, merges) {
            sections.values[item.position].items = RowChunks(merge.merged)
            for (index, offset) in merge.placed {
                result.new[fetched[offset].id] = RowChange.Place(section: item.section, index: index)
            }
            result.arrivals[item.section] = merge.placed
            result.touched.insert(item.section)
        }
        // 3. The rows placed one by one (into sections made for them, or hidden): their
        // places once all are in, with one pass over each section they went to.
        var placedOneByOne = Set<SectionID>()
        for row in oneByOne {
            if let place = try insert(row.id, row.keys) {
                result.touched.insert(place.section)
                placedOneByOne.insert(place.section)
            }
        }
        if !placedOneByOne.isEmpty {
            let ids = Set(oneByOne.lazy.map(\.id))
            for section in placedOneByOne {
                guard let items = sections[section]?.items else { continue }
                for (index, id) in items.enumerated() where ids.contains(id) {
                    result.new[id] = RowChange.Place(section: section, index: index)
                }
            }
        }
        return result
    }

    /// The rows (id, sort keys, offset in the re-read rows) to merge into a section's kept
    /// items.
    typealias Arrivals = [(id: Int64, sort: ArraySlice<DatabaseValue>, offset: Int)]
    /// A section's items after a merge, and where each arriving row went (its index, its
    /// offset in the re-read rows), by increasing index.
    typealias Merge = (merged: [Int64], placed: [(index: Int, offset: Int)])

    /// Merges each `(rows, kept)` pair: on several threads when the sections hold at least
    /// `parallelMinimum` items in all and the machine has more than one core, else on this
    /// one. The result is the same either way.
    static func mergeAll(
        _ work: [(rows: Arrivals, kept: [Int64])], keys: FullIndexKeys, descending: [Bool], parallelMinimum: Int
    ) -> [Merge] {
        let total = work.reduce(0) { $0 + $1.rows.count + $1.kept.count }
        return map(work.count, parallel: total >= parallelMinimum) { index in
            merge(work[index].rows, into: work[index].kept, keys: keys, descending: descending)
        }
    }

    /// `body(0) … body(count - 1)`, on several threads when `parallel` and the machine has
    /// more than one core, else in order on this one. Each call must stand alone.
    static func map<Result: Sendable>(
        _ count: Int, parallel: Bool, _ body: @Sendable (Int) -> Result
    ) -> [Result] {
        guard parallel, count > 1, ProcessInfo.processInfo.activeProcessorCount > 1 else { return (0..<count).map(body) }
        var results = [Result?](repeating: nil, count: count)
        results.withUnsafeMutableBufferPointer { buffer in
            // Each iteration writes its own element only.
            nonisolated(unsafe) let output = buffer.baseAddress!
            DispatchQueue.concurrentPerform(iterations: count) { index in output[index] = body(index) }
        }
        return results.map { $0! }
    }

    /// `rows` sorted and merged into `kept` (items in order, unchanged by the commit).
    private static func merge(_ rows: Arrivals, into kept: [Int64], keys: FullIndexKeys, descending: [Bool]) -> Merge {
        let sorted = rows.sorted { precedes($0.sort, $0.id, $1.sort, $1.id, descending: descending) }
        var merged: [Int64] = []
        merged.reserveCapacity(kept.count + sorted.count)
        var placed: [(index: Int, offset: Int)] = []
        placed.reserveCapacity(sorted.count)
        var next = 0
        // The sort keys of kept[next], read once however many rows are compared with it.
        var nextSort: ArraySlice<DatabaseValue>?
        for row in sorted {
            while next < kept.count {
                if nextSort == nil { nextSort = keys.sortKeys(of: kept[next]) }
                guard precedes(nextSort!, kept[next], row.sort, row.id, descending: descending) else { break }
                merged.append(kept[next])
                next += 1
                nextSort = nil
            }
            placed.append((merged.count, row.offset))
            merged.append(row.id)
        }
        merged.append(contentsOf: kept[next...])
        return (merged, placed)
    }
}

extension SectionID {
    /// Keyed and orphan sections exist only while they hold items.
    var isTransient: Bool {
        switch self {
        case .key, .orphans: true
        case .single, .object: false
        }
    }
}
