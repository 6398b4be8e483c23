/// The rows of a ``ResultsSection``, in display order: a random-access collection of
/// ``ResultsRow`` values.
///
/// With eager loading (the default) every row holds its item. With batched loading (see
/// ``ResultsLoading``) a section knows its item ids from the start and reads the items
/// themselves a page at a time, the first time a row of the page is read: `rows[i]`,
/// iteration, `snapshot[path]`. A page once read stays with the snapshot, so reading a row
/// twice gives the same value. What a value read later means is in ``ResultsLoading``.
///
/// Rows compare equal when they hold the same items with the same values; two sections of
/// the same batched snapshot compare by ids without loading anything.
///
/// Rows can be edited like an array (`remove(at:)`, `insert(_:at:)`, …), for a snapshot a
/// list view edits itself; editing batched rows reads every page first.
public struct ResultsRows<Item: ResultsItem>: RandomAccessCollection, RangeReplaceableCollection,
    Hashable, Sendable, ExpressibleByArrayLiteral {
    enum Storage: Sendable {
        /// Chunked, so that a snapshot made from another by a few row changes shares all but
        /// the chunks it changed (see ``RowChunks``).
        case eager(RowChunks<ResultsRow<Item>>)
        /// The ids in chunks, shared with the index that made them (see ``RowChunks``).
        case batched(ids: RowChunks<Int64>, pages: any ItemPages<Item>)
    }

    private(set) var storage: Storage

    /// Rows that hold their items.
    public init(_ rows: [ResultsRow<Item>]) {
        storage = .eager(RowChunks(rows))
    }

    /// Rows that hold their items, in chunks.
    init(chunks: RowChunks<ResultsRow<Item>>) {
        storage = .eager(chunks)
    }

    /// No rows.
    public init() {
        storage = .eager(RowChunks())
    }

    /// Replaces the rows in `range` with `newRows` (batched rows are read first). Inserting,
    /// removing or replacing one row of eager rows copies only the chunk of rows around it.
    public mutating func replaceSubrange<C: Collection>(_ range: Range<Int>, with newRows: C)
    where C.Element == ResultsRow<Item> {
        guard case .eager(var chunks) = storage, range.count <= 1, newRows.count <= 1 else {
            var rows = array
            rows.replaceSubrange(range, with: newRows)
            storage = .eager(RowChunks(rows))
            return
        }
        storage = .eager(RowChunks())  // so that `chunks` is the only reference
        switch (range.count, newRows.first) {
        case (0, let row?): chunks.insert(row, at: range.lowerBound)
        case (1, nil): chunks.remove(at: range.lowerBound)
        case (1, let row?): chunks.replace(at: range.lowerBound, with: row)
        default: break
        }
        storage = .eager(chunks)
    }

    /// Rows that hold their items.
    public init(arrayLiteral elements: ResultsRow<Item>...) {
        storage = .eager(RowChunks(elements))
    }

    /// The chunks of eager rows; nil for batched rows.
    var chunks: RowChunks<ResultsRow<Item>>? {
        if case .eager(let chunks) = storage { return chunks }
        return nil
    }

    init(ids: RowChunks<Int64>, pages: any ItemPages<Item>) {
        storage = .batched(ids: ids, pages: pages)
    }

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .eager(let rows): rows.count
        case .batched(let ids, _): ids.count
        }
    }

    // `RandomAccessCollection`'s index arithmetic, written out so that `count` and the
    // indices cost no generic look-ups in code not specialized for the item type.

    /// The number of rows.
    public var count: Int { endIndex }
    /// Whether there are no rows.
    public var isEmpty: Bool { endIndex == 0 }
    /// `0..<count`.
    public var indices: Range<Int> { 0..<endIndex }
    /// `i + 1`.
    public func index(after i: Int) -> Int { i + 1 }
    /// `i - 1`.
    public func index(before i: Int) -> Int { i - 1 }
    /// `i + distance`.
    public func index(_ i: Int, offsetBy distance: Int) -> Int { i + distance }
    /// `end - start`.
    public func distance(from start: Int, to end: Int) -> Int { end - start }

    /// The row at `position`. In a batched section, reading it loads its page if the snapshot
    /// has not read it yet; a page that cannot be read (an I/O error, or a value stored by
    /// another program in a form Strata refuses) stops the program with the error: use
    /// ``item(at:)`` to handle it instead.
    public subscript(position: Int) -> ResultsRow<Item> {
        switch storage {
        case .eager(let rows):
            return rows[position]
        case .batched(let ids, let pages):
            do {
                return .item(try pages.item(at: position, of: ids, loadingPage: true))
            } catch {
                preconditionFailure("a page of batched results could not be read: \(error)")
            }
        }
    }

    /// Iterates eager rows chunk by chunk, and batched rows by position.
    public struct Iterator: IteratorProtocol {
        private var eager: RowChunks<ResultsRow<Item>>.Iterator?
        private let rows: ResultsRows
        private var position = 0

        init(_ rows: ResultsRows) {
            self.rows = rows
            if case .eager(let chunks) = rows.storage { eager = chunks.makeIterator() }
        }

        public mutating func next() -> ResultsRow<Item>? {
            if eager != nil { return eager!.next() }
            guard position < rows.endIndex else { return nil }
            defer { position += 1 }
            return rows[position]
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// The item of the row at `position` (nil for a group row), loading its page in a batched
    /// section; throws the error that kept the page from being read.
    public func item(at position: Int) throws -> Item? {
        try item(at: position, loadingPage: true)
    }

    /// ``item(at:)``; when a batched section has not loaded the row's page, reads the page
    /// (`loadingPage`, then cached) or only the row (for one row used once, as a user's move
    /// reads the moved item).
    func item(at position: Int, loadingPage: Bool) throws -> Item? {
        switch storage {
        case .eager(let rows): return rows[position].item
        case .batched(let ids, let pages): return try pages.item(at: position, of: ids, loadingPage: loadingPage)
        }
    }

    /// Whether the last row is the group of filtered items, reading nothing (batched rows
    /// have none: batched loading has no post-fetch filter).
    var endsWithGroup: Bool {
        switch storage {
        case .eager(let rows): return rows.last?.isGroup == true
        case .batched: return false
        }
    }

    /// Whether the items are read a page at a time (batched loading).
    public var isBatched: Bool {
        if case .batched = storage { return true }
        return false
    }

    /// The items' ids, in order, without loading anything; nil for eager rows.
    var batchedIDs: RowChunks<Int64>? {
        if case .batched(let ids, _) = storage { return ids }
        return nil
    }

    var batchedPages: (any ItemPages<Item>)? {
        if case .batched(_, let pages) = storage { return pages }
        return nil
    }

    /// The rows in `range`, sharing a batched section's pages.
    func slice(_ range: Range<Int>) -> ResultsRows {
        switch storage {
        case .eager(let rows):
            var slice = RowChunks<ResultsRow<Item>>()
            slice.append(from: rows, range)
            return ResultsRows(chunks: slice)
        case .batched(let ids, let pages):
            var slice = RowChunks<Int64>()
            slice.append(from: ids, range)
            return ResultsRows(ids: slice, pages: pages)
        }
    }

    /// Removes the row at `position`; batched rows stay batched when `keepingBatched`.
    mutating func remove(at position: Int, keepingBatched: Bool) {
        if keepingBatched, case .batched(var ids, let pages) = storage {
            ids.remove(at: position)
            storage = .batched(ids: ids, pages: pages)
        } else {
            remove(at: position)
        }
    }

    /// Inserts `row` (of the item `id`) at `position`; batched rows stay batched, reading
    /// the item through their pages, when `keepingBatched`.
    mutating func insert(_ row: ResultsRow<Item>, id: Int64, at position: Int, keepingBatched: Bool) {
        if keepingBatched, case .batched(var ids, let pages) = storage {
            ids.insert(id, at: position)
            storage = .batched(ids: ids, pages: pages)
        } else {
            insert(row, at: position)
        }
    }

    /// The rows as an array (loads every page of a batched section).
    public var array: [ResultsRow<Item>] {
        switch storage {
        case .eager(let chunks): return chunks.flattened
        case .batched: return Array(self)
        }
    }

    public static func == (lhs: ResultsRows, rhs: ResultsRows) -> Bool {
        if case .batched(let a, let pa) = lhs.storage, case .batched(let b, let pb) = rhs.storage {
            // Same ids; values are compared only for items changed between the two
            // snapshots (one set, read once: a list that redraws per commit pays no more).
            guard a == b else { return false }
            if pa === pb { return true }
            if let changed = pa.changedIDs(between: pb) {
                guard !changed.isEmpty else { return true }
                // A few changed ids (a user edit, a one-row commit): compared directly, which
                // is several times cheaper per row than hashing each id.
                let few = changed.count <= 8 ? Array(changed) : nil
                for (position, id) in a.enumerated() where few?.contains(id) ?? changed.contains(id) {
                    if lhs[position] != rhs[position] { return false }
                }
                return true
            }
        }
        guard lhs.count == rhs.count else { return false }
        if case .eager(let a) = lhs.storage, case .eager(let b) = rhs.storage {
            if a.sharesStorage(with: b) { return true }
            if a.ends == b.ends {
                // Chunk by chunk: the chunks a change did not touch are shared.
                for index in a.chunks.indices where !a.sharesChunk(index, with: b) {
                    if a.chunks[index] != b.chunks[index] { return false }
                }
                return true
            }
        }
        return lhs.elementsEqual(rhs)
    }

    /// Whether `lhs` holds exactly the rows of `rhs`.
    public static func == (lhs: ResultsRows, rhs: [ResultsRow<Item>]) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    /// Whether `lhs` holds exactly the rows of `rhs`.
    public static func == (lhs: [ResultsRow<Item>], rhs: ResultsRows) -> Bool { rhs == lhs }

    /// Whether `lhs` differs from the rows of `rhs`.
    public static func != (lhs: ResultsRows, rhs: [ResultsRow<Item>]) -> Bool { !(lhs == rhs) }

    /// Whether `lhs` differs from the rows of `rhs`.
    public static func != (lhs: [ResultsRow<Item>], rhs: ResultsRows) -> Bool { !(rhs == lhs) }

    /// Hashes the number of rows, without loading anything.
    public func hash(into hasher: inout Hasher) {
        // The count only: eager and batched rows can be equal, and a batched row's id is not
        // loaded. Snapshots hash their sections' ids as well.
        hasher.combine(count)
    }
}

extension ResultsRows where Item: StrataEntity {
    /// The id of the item at `position` (nil for a group row), reading nothing: a batched
    /// section knows its ids without loading their page.
    func itemID(at position: Int) -> Int64? {
        switch storage {
        case .eager(let rows): return rows[position].item?.objectID.rawValue
        case .batched(let ids, _): return ids[position]
        }
    }
}

/// The pages of a batched snapshot: reads an item by its position in a section's ids,
/// loading the page around it the first time.
protocol ItemPages<Item>: AnyObject, Sendable {
    associatedtype Item
    /// The item at `position`: from the snapshot's cache, else read with its page
    /// (`loadingPage`, then cached) or alone (not cached).
    func item(at position: Int, of ids: RowChunks<Int64>, loadingPage: Bool) throws -> Item
    /// Whether the value of the item `id` may differ between `self`'s snapshot and `other`'s,
    /// without loading it.
    func valueMayDiffer(_ id: Int64, in other: any ItemPages<Item>) -> Bool
    /// The ids whose values may differ between the two snapshots; nil when any may.
    func changedIDs(between other: any ItemPages<Item>) -> Set<Int64>?
}
