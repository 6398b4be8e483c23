// MARK: - Matching rows by identity

/// The rows of two snapshots matched by identity, and the row half of their batch: what
/// ``ChangeBatch/init(from:to:)`` computes after a refetch or a change of options.
///
/// Only the rows of sections that stay (old sections that are not deleted, new ones that
/// are not inserted) and that may have changed are compared. Each is given a position in
/// one flat list per snapshot, and each item is copied out of its row once, with its id,
/// into contiguous storage; ids are then matched once, through a table of old positions,
/// and everything after that works on arrays of positions. Item ids that are 64-bit
/// integers (``EntityID``, `Int`, `Int64`) are matched by value, through an array indexed by
/// id when ids are dense, as row ids are, or an open-addressing table otherwise; other ids
/// through an open-addressing table of their hash values. A group row matches the group row of the same section.
///
/// In a client's module this code is not specialized for the client's item type, so every
/// operation on an item goes through its witness tables: the work per row is kept to one
/// copy of the item, one read of its id and, for rows in both snapshots, one `==`.
struct RowMatching {
    var deletes: [ItemPath] = []
    var inserts: [ItemPath] = []
    var moves: [Move<ItemPath>] = []
    var updates: [ItemPath] = []
    var movedAndUpdated: [ItemPath] = []

    init<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>,
        sections: SectionMatching, changedSections: Set<SectionID>?
    ) {
        func mayHaveChanged(_ id: SectionID) -> Bool { changedSections?.contains(id) ?? true }

        // 1. Flat positions of the compared rows. An offset of -1: not compared.
        // Only the compared sections are read (as arrays: their rows are walked several times).
        let oldRows = old.sections.enumerated().map { o, section in
            sections.oldToNew[o] != nil && mayHaveChanged(section.id) ? section.rows.array : []
        }
        let newRows = new.sections.enumerated().map { n, section in
            !sections.newIsInserted[n] && mayHaveChanged(section.id) ? section.rows.array : []
        }
        var oldOffset = [Int](repeating: -1, count: oldRows.count)
        var oldCount = 0
        for (o, section) in old.sections.enumerated() where sections.oldToNew[o] != nil && mayHaveChanged(section.id) {
            oldOffset[o] = oldCount
            oldCount += oldRows[o].count
        }
        var newOffset = [Int](repeating: -1, count: newRows.count)
        var newCount = 0
        for (n, section) in new.sections.enumerated() where !sections.newIsInserted[n] && mayHaveChanged(section.id) {
            newOffset[n] = newCount
            newCount += newRows[n].count
        }
        precondition(oldCount < Int32.max && newCount < Int32.max, "too many rows")

        // 2. The items, and each compared old row's new flat position (-1: not in a compared
        // new section, so deleted), and whether each compared new row has an old one (else
        // it is inserted).
        let reader = Int64IDReader<Item.ID>()
        let before = FlatItems(oldRows, oldOffset, count: oldCount, reader)
        let after = FlatItems(newRows, newOffset, count: newCount, reader)
        var oldMatch = [Int32](repeating: -1, count: oldCount)
        var newMatched = [Bool](repeating: false, count: newCount)
        if reader != nil {
            let table = Int64PositionTable(keys: before.int64Keys, positions: before.flat)
            Self.match(after.int64Keys, after.flat, table, &oldMatch, &newMatched)
        } else {
            let table = HashedPositionTable(keys: before.keys, positions: before.flat)
            Self.match(after.keys, after.flat, table, &oldMatch, &newMatched)
        }
        // A group row matches the (last) group row of the same section.
        for o in oldRows.indices where oldOffset[o] >= 0 && before.groupIndex[o] >= 0 {
            let n = sections.oldToNew[o]!
            guard newOffset[n] >= 0, after.groupIndex[n] >= 0 else { continue }
            let g = newOffset[n] + after.groupIndex[n]
            oldMatch[oldOffset[o] + before.groupIndex[o]] = Int32(truncatingIfNeeded: g)
            newMatched[g] = true
        }

        /// Whether the row at old flat position `o` differs from the row at new flat
        /// position `n` (old path `oldPath`, new path `newPath`).
        func differs(_ o: Int, _ n: Int, _ oldPath: ItemPath, _ newPath: ItemPath) -> Bool {
            let i = Int(before.slot[o]), j = Int(after.slot[n])
            if i >= 0 && j >= 0 { return !Item._equalItems(before.items + i, after.items + j) }
            return oldRows[oldPath.section][oldPath.item] != newRows[newPath.section][newPath.item]  // group rows
        }
        self.init(
            oldCounts: oldRows.map(\.count), oldOffset: oldOffset, newCounts: newRows.map(\.count), newOffset: newOffset,
            sections: sections, oldMatch: oldMatch, newMatched: newMatched, differs: differs)
    }

    /// The rows of two snapshots whose rows are all items, matched by the ids each section
    /// holds in order, as the results engine kept them (``RefetchedRows``):
    /// `oldIDs[o]` for each old section compared (nil: not compared), `newIDs[n]` for each
    /// new one. No row of the snapshots is read; `differs(id)` compares the old and new
    /// values of an item in both. The result is ``init(from:to:sections:changedSections:)``'s
    /// for the same snapshots.
    init(oldIDs: [RowChunks<Int64>?], newIDs: [RowChunks<Int64>?], sections: SectionMatching, differs: (Int64) -> Bool) {
        func flatten(_ ids: [RowChunks<Int64>?]) -> (ids: [Int64], offsets: [Int]) {
            var flat: [Int64] = []
            flat.reserveCapacity(ids.reduce(0) { $0 + ($1?.count ?? 0) })
            var offsets = [Int](repeating: -1, count: ids.count)
            for (s, section) in ids.enumerated() {
                guard let section else { continue }
                offsets[s] = flat.count
                for chunk in section.chunks { flat.append(contentsOf: chunk) }
            }
            return (flat, offsets)
        }
        let (oldFlat, oldOffset) = flatten(oldIDs)
        let (newFlat, newOffset) = flatten(newIDs)
        precondition(oldFlat.count < Int32.max && newFlat.count < Int32.max, "too many rows")
        var oldMatch = [Int32](repeating: -1, count: oldFlat.count)
        var newMatched = [Bool](repeating: false, count: newFlat.count)
        let table = Int64PositionTable(keys: oldFlat, positions: oldFlat.indices.map { Int32(truncatingIfNeeded: $0) })
        Self.match(newFlat, newFlat.indices.map { Int32(truncatingIfNeeded: $0) }, table, &oldMatch, &newMatched)
        self.init(
            oldCounts: oldIDs.map { $0?.count ?? 0 }, oldOffset: oldOffset, newCounts: newIDs.map { $0?.count ?? 0 },
            newOffset: newOffset, sections: sections, oldMatch: oldMatch, newMatched: newMatched,
            differs: { o, _, _, _ in differs(oldFlat[o]) })
    }

    /// The row half of the batch from rows matched by flat position: `oldCounts[o]` rows of
    /// old section `o` from flat position `oldOffset[o]` (-1: not compared), the same for the
    /// new sections, each compared old row's new flat position (`oldMatch`, -1: none), and
    /// whether each compared new row has an old one (`newMatched`). `differs(o, n, oldPath,
    /// newPath)` compares the rows of a match.
    private init(
        oldCounts: [Int], oldOffset: [Int], newCounts: [Int], newOffset: [Int], sections: SectionMatching,
        oldMatch: [Int32], newMatched: [Bool], differs: (Int, Int, ItemPath, ItemPath) -> Bool
    ) {
        let newCount = newMatched.count
        // The new section of each compared new row, to turn a flat position into a path.
        var newSectionOf = [Int32](repeating: 0, count: newCount)
        for n in newCounts.indices where newOffset[n] >= 0 {
            let start = newOffset[n]
            for r in 0..<newCounts[n] { newSectionOf[start + r] = Int32(truncatingIfNeeded: n) }
        }

        // 3. Per old section that stays: deletes, moves to other sections, and the rows that
        // stay in it, of which a longest increasing subsequence needs not move. The lists come
        // out in order (the batch sorts them, in time linear in rows already sorted): moves
        // by their source, the two kinds of a section merged; moved and updated rows, by
        // their target, marked by new flat position and listed at the end.
        var candidateOld: [Int] = []
        var candidateNew: [Int] = []
        var movesAway: [Move<ItemPath>] = []
        var movedAndUpdatedAt = [Bool](repeating: false, count: newCount)
        for o in oldCounts.indices where oldOffset[o] >= 0 {
            let n = sections.oldToNew[o]!
            let start = oldOffset[o]
            candidateOld.removeAll(keepingCapacity: true)
            candidateNew.removeAll(keepingCapacity: true)
            movesAway.removeAll(keepingCapacity: true)
            for r in 0..<oldCounts[o] {
                let match = Int(oldMatch[start + r])
                let oldPath = ItemPath(section: o, item: r)
                if match < 0 {
                    deletes.append(oldPath)  // gone, or gone into a section that is inserted
                    continue
                }
                let s = Int(newSectionOf[match])
                if s == n {
                    candidateOld.append(r)
                    candidateNew.append(match - newOffset[s])
                } else {
                    let newPath = ItemPath(section: s, item: match - newOffset[s])
                    movesAway.append(Move(from: oldPath, to: newPath))
                    if differs(start + r, match, oldPath, newPath) { movedAndUpdatedAt[match] = true }
                }
            }
            let staying = longestIncreasingSubsequence(candidateNew)
            var away = 0
            for k in candidateOld.indices {
                let oldPath = ItemPath(section: o, item: candidateOld[k])
                let newPath = ItemPath(section: n, item: candidateNew[k])
                let changed = differs(start + oldPath.item, newOffset[n] + newPath.item, oldPath, newPath)
                if staying[k] {
                    if changed { updates.append(oldPath) }
                } else {
                    while away < movesAway.count && movesAway[away].from.item < oldPath.item {
                        moves.append(movesAway[away])
                        away += 1
                    }
                    moves.append(Move(from: oldPath, to: newPath))
                    if changed { movedAndUpdatedAt[newOffset[n] + newPath.item] = true }
                }
            }
            moves.append(contentsOf: movesAway[away...])
        }
        for n in newCounts.indices where newOffset[n] >= 0 {
            let start = newOffset[n]
            for r in 0..<newCounts[n] where movedAndUpdatedAt[start + r] {
                movedAndUpdated.append(ItemPath(section: n, item: r))
            }
        }

        // 4. Compared new rows without an old one are inserted (a row that left a deleted
        // section included).
        for n in newCounts.indices where newOffset[n] >= 0 {
            let start = newOffset[n]
            for r in 0..<newCounts[n] where !newMatched[start + r] {
                inserts.append(ItemPath(section: n, item: r))
            }
        }
    }

    /// Looks up every new item's key: its old flat position, if any.
    private static func match<Table: PositionTable>(
        _ keys: [Table.Key], _ flat: [Int32], _ table: Table, _ oldMatch: inout [Int32], _ newMatched: inout [Bool]
    ) {
        for i in keys.indices {
            let o = table.position(of: keys[i])
            if o >= 0 {
                let n = Int(flat[i])
                oldMatch[o] = Int32(truncatingIfNeeded: n)  // when ids repeat (an invalid snapshot), the last wins
                newMatched[n] = true
            }
        }
    }
}

/// The items of the compared rows of one snapshot, each copied out of its row once, in
/// order, with its id; and where each section's group row is.
final class FlatItems<Item: ResultsItem> {
    /// The items, `count` of them.
    let items: UnsafeMutablePointer<Item>
    let count: Int
    /// The flat position of each item.
    let flat: [Int32]
    /// The item index of each flat position; -1 for a group row.
    let slot: [Int32]
    /// The ids, as integers (when read by an ``Int64IDReader``), or as they are.
    let int64Keys: [Int64]
    let keys: [Item.ID]
    /// For each section, the index of its (last) group row, or -1.
    let groupIndex: [Int]

    init(_ rows: [[ResultsRow<Item>]], _ offsets: [Int], count rowCount: Int, _ reader: Int64IDReader<Item.ID>?) {
        let items = UnsafeMutablePointer<Item>.allocate(capacity: max(rowCount, 1))
        var count = 0
        var flat: [Int32] = []
        flat.reserveCapacity(rowCount)
        var slot = [Int32](repeating: -1, count: rowCount)
        var int64Keys: [Int64] = []
        var keys: [Item.ID] = []
        if reader != nil { int64Keys.reserveCapacity(rowCount) } else { keys.reserveCapacity(rowCount) }
        var groupIndex = [Int](repeating: -1, count: rows.count)
        for s in rows.indices where offsets[s] >= 0 {
            let start = offsets[s]
            rows[s].withUnsafeBufferPointer { rows in
                for r in 0..<rows.count {
                    guard case .item(let item) = rows[r] else {
                        groupIndex[s] = r
                        continue
                    }
                    if let reader { int64Keys.append(reader.read(item.objectID)) } else { keys.append(item.objectID) }
                    flat.append(Int32(truncatingIfNeeded: start + r))
                    slot[start + r] = Int32(truncatingIfNeeded: count)
                    (items + count).initialize(to: item)
                    count += 1
                }
            }
        }
        self.items = items
        self.count = count
        self.flat = flat
        self.slot = slot
        self.int64Keys = int64Keys
        self.keys = keys
        self.groupIndex = groupIndex
    }

    deinit {
        items.deinitialize(count: count)
        items.deallocate()
    }
}

// MARK: - Position tables

/// Old flat positions by key.
protocol PositionTable {
    associatedtype Key
    /// A table of `keys[i] → positions[i]`; when a key repeats, the last wins.
    init(keys: [Key], positions: [Int32])
    /// The position of `key`, or -1.
    func position(of key: Key) -> Int
}

/// Positions by 64-bit integer id: an array indexed by id when the ids are dense (row ids
/// usually are), else an open-addressing table with linear probing.
struct Int64PositionTable: PositionTable {
    private var minimum: Int64 = 0
    private var maximum: Int64 = -1
    /// Dense: the position of id `minimum + i` at `direct[i]`, or -1.
    private var direct: [Int32] = []
    /// Sparse: indexes into `keys` and `positions` in slots (-1 for empty), probed from a
    /// hash of the id.
    private var slots: [Int32] = []
    private var keys: [Int64] = []
    private var positions: [Int32] = []
    private var shift: UInt64 = 63

    init(keys: [Int64], positions: [Int32]) {
        guard let first = keys.first else { return }
        minimum = first
        maximum = first
        for key in keys {
            if key < minimum { minimum = key }
            if key > maximum { maximum = key }
        }
        let (span, overflow) = maximum.subtractingReportingOverflow(minimum)
        if !overflow && span < Int64(4 * keys.count + 1024) {
            direct = [Int32](repeating: -1, count: Int(span) + 1)
            direct.withUnsafeMutableBufferPointer { direct in
                for i in keys.indices { direct[Int(keys[i] &- minimum)] = positions[i] }
            }
            return
        }
        var capacity = 16
        while capacity < 2 * keys.count { capacity *= 2 }
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        slots = [Int32](repeating: -1, count: capacity)
        self.keys = keys
        self.positions = positions
        let mask = capacity - 1
        slots.withUnsafeMutableBufferPointer { slots in
            for i in keys.indices {
                var slot = Self.hash(keys[i], shift)
                while slots[slot] >= 0 && keys[Int(slots[slot])] != keys[i] { slot = (slot + 1) & mask }
                slots[slot] = Int32(truncatingIfNeeded: i)
            }
        }
    }

    private static func hash(_ key: Int64, _ shift: UInt64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    func position(of key: Int64) -> Int {
        if !direct.isEmpty {
            guard key >= minimum && key <= maximum else { return -1 }
            return Int(direct[Int(key &- minimum)])
        }
        if slots.isEmpty { return -1 }
        let mask = slots.count - 1
        var slot = Self.hash(key, shift)
        while true {
            let index = Int(slots[slot])
            if index < 0 { return -1 }
            if keys[index] == key { return Int(positions[index]) }
            slot = (slot + 1) & mask
        }
    }
}

/// Positions by any hashable id: an open-addressing table of hash values, comparing ids
/// only when their hashes are equal. Cheaper than a `Dictionary` where `Key` is generic (in
/// a client's module), since each id is hashed once and nothing else goes through `Key`'s
/// witness tables.
struct HashedPositionTable<Key: Hashable>: PositionTable {
    private var slots: [Int32] = []
    private var hashes: [Int] = []
    private let keys: [Key]
    private let positions: [Int32]

    init(keys: [Key], positions: [Int32]) {
        self.keys = keys
        self.positions = positions
        var capacity = 16
        while capacity < 2 * keys.count { capacity *= 2 }
        let mask = capacity - 1
        var hashes: [Int] = []
        hashes.reserveCapacity(keys.count)
        var slots = [Int32](repeating: -1, count: capacity)
        keys.withUnsafeBufferPointer { keys in
            for i in 0..<keys.count { hashes.append(keys[i].hashValue) }
            slots.withUnsafeMutableBufferPointer { slots in
                for i in 0..<keys.count {
                    let hash = hashes[i]
                    var slot = Self.slot(hash, mask)
                    while slots[slot] >= 0 {
                        let j = Int(slots[slot])
                        if hashes[j] == hash && keys[j] == keys[i] { break }  // a repeated id: the last wins
                        slot = (slot + 1) & mask
                    }
                    slots[slot] = Int32(truncatingIfNeeded: i)
                }
            }
        }
        self.hashes = hashes
        self.slots = slots
    }

    private static func slot(_ hash: Int, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    func position(of key: Key) -> Int {
        let hash = key.hashValue
        let mask = slots.count - 1
        var slot = Self.slot(hash, mask)
        return keys.withUnsafeBufferPointer { keys in
            while true {
                let index = Int(slots[slot])
                if index < 0 { return -1 }
                if hashes[index] == hash && keys[index] == key { return Int(positions[index]) }
                slot = (slot + 1) & mask
            }
        }
    }
}

// MARK: - Ids that are 64-bit integers

/// Identifier types whose whole value is one 64-bit integer, so that two ids are equal
/// exactly when their integers are: their identity difference skips hashing.
protocol Int64Identifier: Hashable {}

extension EntityID: Int64Identifier {}
extension Int64: Int64Identifier {}
extension UInt64: Int64Identifier {}
extension Int: Int64Identifier {}

/// Reads an `ID` as its 64-bit integer; nil when `ID` is not such an identifier.
struct Int64IDReader<ID> {
    init?() {
        guard ID.self is any Int64Identifier.Type, MemoryLayout<ID>.size == 8 else { return nil }
    }

    func read(_ id: ID) -> Int64 { unsafeBitCast(id, to: Int64.self) }
}
