import Foundation
import GRDB

/// The shared state of one batched controller's snapshots: the pinned reader of the current
/// generation, the page size and cache bound, and the snapshots still alive, so that a commit
/// can keep, for each of them, the values it is about to change.
///
/// One lock serialises every page load with every commit's capture and advance, so a load
/// never reads a state between the two.
final class PageLoader<Item: StrataEntity>: @unchecked Sendable {
    let pageSize: Int
    let cachedPages: Int
    private let path: String
    private let store: Store
    private let lock = NSLock()
    private(set) var reader: PinnedReader
    private(set) var generation = 0
    private var version = 0
    private var live: [Weak] = []
    /// The pages of the last snapshot made, while it is alive.
    private weak var lastMade: BatchedPages<Item>?
    /// Ids whose values changed since the last snapshot was made (for the next one).
    private var changedSinceSnapshot = Set<Int64>()
    /// Whether everything may have changed since the last snapshot (a refetch).
    private var unknownSinceSnapshot = false
    /// Ids that left the results (in this generation) while a snapshot that may show them
    /// was alive, each with the version of the last snapshot made before it left: the
    /// snapshots up to that version may show it, though the results no longer hold it.
    private var departed: [Int64: Int] = [:]
    /// The same departures by that version, increasing, so that each is forgotten once every
    /// snapshot up to its version is gone.
    private var departures: [(version: Int, ids: [Int64])] = []

    private struct Weak {
        weak var pages: BatchedPages<Item>?
    }

    init(store: Store, path: String, pageSize: Int, cachedPages: Int) throws {
        self.store = store
        self.path = path
        self.pageSize = max(1, pageSize)
        self.cachedPages = max(1, cachedPages)
        reader = try PinnedReader(store: store, path: path)
        store.observer.checkpoints.follow(reader)
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Before the engine applies a commit that changed the values of `changed` items: keeps
    /// their current values (read in the pinned state, which is the state before the commit)
    /// for every live snapshot that may show them and has not loaded them, then moves the
    /// reader forward. `wasShown` tells which ids the results held before the commit; a
    /// snapshot may also show an id that left them since it was made (see ``left(_:)``).
    func commit(changed: Set<Int64>, wasShown: (Int64) -> Bool) throws {
        try locked {
            live.removeAll { $0.pages == nil }
            forgetDepartures()
            if !changed.isEmpty {
                var needed: [(BatchedPages<Item>, [Int64])] = []
                var ids = Set<Int64>()
                for entry in live {
                    guard let pages = entry.pages, pages.generation == generation else { continue }
                    var missing: [Int64] = []
                    for id in changed {
                        pages.changedSince.insert(id)
                        if pages.keepCachedValue(id) { continue }
                        if wasShown(id) || departed[id].map({ pages.version <= $0 }) == true { missing.append(id) }
                    }
                    if !missing.isEmpty {
                        needed.append((pages, missing))
                        ids.formUnion(missing)
                    }
                }
                if !ids.isEmpty {
                    // Each row on its own: a value the type cannot represent (written by raw
                    // SQL, repaired by this commit) is kept as its error, which only reading
                    // that row in those snapshots throws, as their page read would have.
                    let values = try reader.read { db in try Self.fetchEach(Array(ids), db) }
                    for (pages, missing) in needed {
                        for id in missing { if let value = values[id] { pages.keep(value, for: id) } }
                    }
                }
                changedSinceSnapshot.formUnion(changed)
            }
            try reader.advance()
        }
    }

    /// After the engine applied a commit: `ids` were in the results before it and are not
    /// any more (whether or not their own rows changed: an item also leaves through a related
    /// row). The live snapshots made before may still show them, so a later commit that
    /// changes one keeps its value for them (see ``commit(changed:wasShown:)``), until every
    /// snapshot made before it left is gone.
    func left(_ ids: some Collection<Int64>) {
        guard !ids.isEmpty else { return }
        locked {
            // No snapshot of this generation alive: none shows them.
            guard live.contains(where: { $0.pages?.generation == generation }) else { return }
            for id in ids { departed[id] = version }
            if departures.last?.version == version {
                departures[departures.count - 1].ids.append(contentsOf: ids)
            } else {
                departures.append((version, Array(ids)))
            }
        }
    }

    /// Forgets the departures that no live snapshot may show: those after which no snapshot
    /// made before them is alive. Amortised, each departure is forgotten once.
    private func forgetDepartures() {
        guard let first = departures.first else { return }
        var oldest = Int.max
        for entry in live {
            if let pages = entry.pages, pages.generation == generation { oldest = min(oldest, pages.version) }
        }
        guard first.version < oldest else { return }
        let gone = departures.prefix { $0.version < oldest }
        for departure in gone {
            // Unless it left again later (and a later departure holds it).
            for id in departure.ids where departed[id] == departure.version { departed[id] = nil }
        }
        departures.removeFirst(gone.count)
    }

    /// After a refetch: what changed is not traced. The live snapshots keep the current
    /// reader, frozen in their state; a new reader pins the state after the commit.
    func detach() throws {
        try locked {
            let fresh = try PinnedReader(store: store, path: path)
            // The old reader stays in its state for the older snapshots: not moved again.
            store.observer.checkpoints.unfollow(reader)
            store.observer.checkpoints.follow(fresh)
            reader = fresh
            generation += 1
            unknownSinceSnapshot = true
            // The live snapshots are of older generations now: the reader they read through
            // is not moved again.
            departed = [:]
            departures = []
        }
    }

    /// The pages of a new snapshot.
    func makePages() -> BatchedPages<Item> {
        locked {
            version += 1
            // Only the snapshot made just before: `changedSinceSnapshot` is relative to it.
            let previous = lastMade
            let pages = BatchedPages(
                loader: self, reader: reader, generation: generation, version: version,
                parent: unknownSinceSnapshot || previous?.generation != generation ? nil : previous,
                changedSinceParent: changedSinceSnapshot)
            changedSinceSnapshot = []
            unknownSinceSnapshot = false
            live.append(Weak(pages: pages))
            lastMade = pages
            return pages
        }
    }

    /// Checks the loader and the pages of every live snapshot (debug builds only): each
    /// snapshot of an older generation or version than the loader's current ones, the last
    /// one made the newest, and each snapshot's own invariants (see
    /// ``BatchedPages/_checkInvariants()``). Traps on violation. For tests.
    func _checkInvariants() {
        #if DEBUG
        locked {
            for entry in live {
                guard let pages = entry.pages else { continue }
                precondition(pages.generation <= generation, "a snapshot of a generation to come")
                precondition(pages.version <= version, "a snapshot of a version to come")
                pages._checkInvariantsLocked()
            }
            if let lastMade {
                precondition(lastMade.version == version, "the last snapshot made is not the newest")
            }
            // Departures: in order of version, each id under its last one.
            var previous = Int.min
            var latest = Set<Int64>()
            for departure in departures {
                precondition(previous < departure.version && departure.version <= version, "departures out of order")
                precondition(!departure.ids.isEmpty, "an empty departure")
                previous = departure.version
                for id in departure.ids {
                    precondition(departed[id].map { $0 >= departure.version } == true, "a departure of item \(id) not recorded")
                    if departed[id] == departure.version { latest.insert(id) }
                }
            }
            precondition(latest.count == departed.count, "an item departed in no departure")
        }
        #endif
    }

    /// The items `ids` read with `db`, by id (missing ids are left out).
    static func fetch(_ ids: [Int64], _ db: Database) throws -> [Int64: Item] {
        var result: [Int64: Item] = [:]
        result.reserveCapacity(ids.count)
        try forEachRow(ids, db) { _, item in
            let item = try item()
            result[item.objectID.rawValue] = item
        }
        return result
    }

    /// Like ``fetch(_:_:)``, each row decoded on its own: a row the type cannot represent
    /// gives its error, the others their values.
    static func fetchEach(_ ids: [Int64], _ db: Database) throws -> [Int64: Result<Item, any Error>] {
        var result: [Int64: Result<Item, any Error>] = [:]
        result.reserveCapacity(ids.count)
        try forEachRow(ids, db) { id, item in
            guard let id else { return }
            result[id] = Result { try item() }
        }
        return result
    }

    /// Calls `body` with the id of each row of `ids` (nil when it cannot be read) and a
    /// function that decodes the row (by position for generated entities, as results
    /// fetches do).
    private static func forEachRow(_ ids: [Int64], _ db: Database, _ body: (Int64?, () throws -> Item) throws -> Void) throws {
        let table = Item.entityName.replacingOccurrences(of: "\"", with: "\"\"")
        let key = Item.primaryKeyName
        let byPosition = ResultsFetcher<Item, NoSection>.decodesByPosition
        // Generated entities list their key first.
        let columns = byPosition ? Item.strataColumnNames.map(quoted).joined(separator: ", ") : "*"
        try ResultsFetcher<Item, NoSection>.forEachChunk(of: ids) { chunk in
            // Pages have one size: their prepared statement is reused.
            let list = chunk.map { _ in "?" }.joined(separator: ", ")
            let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM \"\(table)\" WHERE \(quoted(key)) IN (\(list))")
            statement.setUncheckedArguments(StatementArguments(Array(chunk)))
            let sqliteStatement = statement.sqliteStatement
            let rows = try Row.fetchCursor(statement)
            while let row = try rows.next() {
                if byPosition {
                    let id = Int64.fromDatabaseValue(EntityColumns.storedValue(sqliteStatement, 0))
                    try body(id, { try Item(strataColumns: EntityColumns(statement: sqliteStatement)) })
                } else {
                    try body(Int64.fromDatabaseValue(row[key] ?? DatabaseValue.null), { try Item(row: row) })
                }
            }
        }
    }
}
