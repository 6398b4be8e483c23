import Foundation
import GRDB

/// The values of one batched snapshot, loaded a page at a time.
///
/// A value comes, in this order, from: what a later commit changed and the loader kept for
/// this snapshot (never evicted); the pages this snapshot loaded (at most the loader's
/// `cachedPages`, the oldest evicted first); the previous snapshot's values of items no
/// commit changed in between; else the page is read through the pinned reader, whose state
/// equals this snapshot's for every item not kept (the loader keeps each changed one before
/// it moves the reader).
final class BatchedPages<Item: StrataEntity>: ItemPages, @unchecked Sendable {
    let generation: Int
    let version: Int
    private let loader: PageLoader<Item>
    private let reader: PinnedReader
    private weak var parent: BatchedPages<Item>?
    private let changedSinceParent: Set<Int64>
    /// Ids whose values changed after this snapshot (guarded by the loader's lock; written
    /// by the loader only).
    var changedSince = Set<Int64>()
    /// Values of items changed after this snapshot, as they were in it (or the error
    /// reading them in it gave).
    private var kept: [Int64: Result<Item, any Error>] = [:]
    /// Loaded pages' values, and the pages in the order they were loaded.
    private var values: [Int64: Item] = [:]
    private var pageOrder: [[Int64]] = []
    /// Page loads and values read (for tests and benchmarks).
    private(set) var pagesLoaded = 0

    init(
        loader: PageLoader<Item>, reader: PinnedReader, generation: Int, version: Int, parent: BatchedPages<Item>?,
        changedSinceParent: Set<Int64>
    ) {
        self.loader = loader
        self.reader = reader
        self.generation = generation
        self.version = version
        self.parent = parent
        self.changedSinceParent = changedSinceParent
    }

    // The loader's lock is held by every caller of these (the loader, in a commit).

    /// Moves the value of `id`, if this snapshot has it, where eviction cannot reach it;
    /// returns false when it has none.
    func keepCachedValue(_ id: Int64) -> Bool {
        if kept[id] != nil { return true }
        guard let value = cached(id) else { return false }
        kept[id] = value
        return true
    }

    func keep(_ value: Result<Item, any Error>, for id: Int64) { kept[id] = value }

    /// The value of `id` this snapshot has without reading, or the error reading it gave.
    private func cached(_ id: Int64) -> Result<Item, any Error>? {
        if let value = kept[id] { return value }
        if let value = values[id] { return .success(value) }
        var child = self
        while !child.changedSinceParent.contains(id), let parent = child.parent {
            if let value = parent.kept[id] { return value }
            if let value = parent.values[id] { return .success(value) }
            child = parent
        }
        return nil
    }

    private func cachedValue(_ id: Int64) throws -> Item? { try cached(id)?.get() }

    func item(at position: Int, of ids: RowChunks<Int64>, loadingPage: Bool) throws -> Item {
        try loader.locked {
            let id = ids[position]
            if let value = try cachedValue(id) { return value }
            if !loadingPage {
                // The one row, read in the same state as its page would be, and not cached.
                guard let value = try reader.read({ db in try PageLoader<Item>.fetch([id], db) })[id] else {
                    throw ResultsError.itemUnavailable(id)
                }
                return value
            }
            let start = position - position % loader.pageSize
            let page = (start..<min(ids.count, start + loader.pageSize)).map { ids[$0] }
            let wanted = page.filter { cached($0) == nil }
            let read = try reader.read { db in try PageLoader<Item>.fetch(wanted, db) }
            pagesLoaded += 1
            for id in wanted {
                guard let value = read[id] else {
                    throw ResultsError.itemUnavailable(id)
                }
                values[id] = value
            }
            pageOrder.append(wanted)
            while pageOrder.count > loader.cachedPages {
                for id in pageOrder.removeFirst() { values[id] = nil }
            }
            return values[id]!
        }
    }

    /// Checks the snapshot's pages (debug builds only): at most the loader's `cachedPages`
    /// pages, each id in at most one, and exactly the loaded pages' values cached (so that
    /// eviction frees them all); values kept only for ids changed after the snapshot; a
    /// parent older than the snapshot and of its generation. Traps on violation. For tests.
    func _checkInvariants() {
        #if DEBUG
        loader.locked { _checkInvariantsLocked() }
        #endif
    }

    /// ``_checkInvariants()`` with the loader's lock held (the loader checks its snapshots).
    func _checkInvariantsLocked() {
        #if DEBUG
        precondition(pageOrder.count <= loader.cachedPages, "\(pageOrder.count) pages cached, more than \(loader.cachedPages)")
        var loaded = Set<Int64>()
        for page in pageOrder {
            precondition(!page.isEmpty, "an empty page")
            for id in page { precondition(loaded.insert(id).inserted, "item \(id) cached by two pages") }
        }
        precondition(Set(values.keys) == loaded, "cached values are not exactly the loaded pages'")
        for id in kept.keys { precondition(changedSince.contains(id), "a value kept for item \(id), which did not change") }
        if let parent {
            precondition(parent.version < version && parent.generation == generation, "a parent that is not an older snapshot")
        }
        #endif
    }

    func valueMayDiffer(_ id: Int64, in other: any ItemPages<Item>) -> Bool {
        changedIDs(between: other).map { $0.contains(id) } ?? true
    }

    func changedIDs(between other: any ItemPages<Item>) -> Set<Int64>? {
        guard let other = other as? BatchedPages<Item> else { return nil }
        if other === self { return [] }
        return loader.locked {
            // The older one's changes since it was made: a superset of those in between.
            let (older, newer) = version <= other.version ? (self, other) : (other, self)
            guard older.generation == newer.generation else { return nil }
            return older.changedSince
        }
    }
}
