// The sync benchmarks on package-benchmark: StrataSync through a private PostgreSQL cluster (a
// Unix socket, no TCP), beside plain postgres-nio where there is a baseline. Each benchmark runs
// in a process of its own with a cluster of its own, seeded in its setup. See
// Benchmarks/README.md, "Sync through PostgreSQL".
import Benchmark
import Dispatch
import Foundation
import GRDB
import PostgresNIO
import Strata
import StrataSync

let benchmarks: @Sendable () -> Void = {
    registerInitialSync(objects: 100_000)
    registerWriteToBatch(objects: 10_000, samples: 300)
    registerThroughput(objects: 100_000, changes: 10_000)
    registerLocalWrites(objects: 100_000, changes: 10_000)
}

// MARK: - Initial sync

/// An empty store's first `sync()` of `objects` objects (hello, every pull, every batch applied
/// in its transaction), against a plain postgres-nio read of the same rows, each decoded into
/// Swift values. Both sides open their connection in the measured region.
func registerInitialSync(objects: Int) {
    let metrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident]
    let fileSizes = [count("file (KiB)"), count("file vacuumed (KiB)"), count("file unsynced (KiB)")]
    let server = Fixture<SyncServerFixture>()
    let setup: Benchmark.BenchmarkSetupHook = { server.set(try SyncServerFixture(objects: objects)) }
    let teardown: Benchmark.BenchmarkTeardownHook = {
        server.value.destroy()
        server.set(nil)
    }
    Benchmark(
        "InitialSync.\(formatCount(objects)).Strata",
        configuration: .with(metrics + fileSizes, Runs(warmUp: 1, measured: 5), setup: setup, teardown: teardown)
    ) { benchmark in
        let device = try server.value.device()
        benchmark.startMeasurement()
        let report = try await device.sync.sync()
        benchmark.stopMeasurement()
        let count = try device.objectCount()
        // The file as the sync left it, the same vacuumed, and the same store without the
        // sync's state (its tables and triggers dropped), vacuumed: the store unsynced.
        let sizes = try await device.fileSizes()
        for (metric, bytes) in zip(fileSizes, [sizes.synced, sizes.vacuumed, sizes.unsynced]) {
            benchmark.measurement(metric, (bytes + 512) / 1024)
        }
        await device.close()
        guard report.pulledChanges == objects, count == objects, report.conflictsWhilePulling == 0 else {
            throw SyncBenchmarkError.unexpected("initial sync: \(report), \(count) objects in the store, \(objects) expected")
        }
    }
    // The same sync through a relay (in this process: its work counts in `cpuTotal`), over
    // HTTP on loopback: a phone app's first sync.
    let relay = Fixture<RelayFixture>()
    Benchmark(
        "InitialSync.\(formatCount(objects)).Relay",
        configuration: .with(
            metrics, Runs(warmUp: 1, measured: 5),
            setup: {
                try await setup()
                relay.set(try await RelayFixture(server.value))
            },
            teardown: {
                await relay.value.stop()
                relay.set(nil)
                try await teardown()
            })
    ) { benchmark in
        let (store, sync) = try relay.value.device(server.value, name: "relay")
        benchmark.startMeasurement()
        let report = try await sync.sync()
        benchmark.stopMeasurement()
        await sync.stop()
        let count = try await store.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM Board) + (SELECT count(*) FROM Card)") ?? 0
        }
        try store.close()
        guard report.pulledChanges == objects, count == objects, report.conflictsWhilePulling == 0 else {
            throw SyncBenchmarkError.unexpected("initial sync through a relay: \(report), \(count) objects in the store, \(objects) expected")
        }
    }
    Benchmark(
        "InitialSync.\(formatCount(objects)).PostgresNIO",
        configuration: .with(metrics, Runs(warmUp: 1, measured: 5), setup: setup, teardown: teardown)
    ) { benchmark in
        benchmark.startMeasurement()
        let count = try await PlainRead.readAll(server.value.configuration)
        benchmark.stopMeasurement()
        guard count == objects else { throw SyncBenchmarkError.unexpected("plain read: \(count) rows, \(objects) expected") }
    }
    Benchmark(
        "InitialSync.\(formatCount(objects)).PostgresNIOThenGRDB",
        configuration: .with(metrics, Runs(warmUp: 1, measured: 5), setup: setup, teardown: teardown)
    ) { benchmark in
        let path = server.value.folder.appendingPathComponent("plain-\(UUID().uuidString.prefix(8)).sqlite").path
        benchmark.startMeasurement()
        let count = try await PlainRead.copyAll(server.value.configuration, into: path)
        benchmark.stopMeasurement()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        guard count == objects else { throw SyncBenchmarkError.unexpected("plain copy: \(count) rows, \(objects) expected") }
    }
}

/// The baseline: every board and card read with postgres-nio, each column decoded into a Swift
/// value (the types the generated structs hold), nothing else.
enum PlainRead {
    struct BoardRow {
        var id: UUID, name: String, position: Int
    }
    struct CardRow {
        var id: UUID, title: String, stage: String, points: Int, estimate: Double, small: Int16, done: Bool
        var due: Date?, token: UUID?, blob: Data?, price: Decimal?, link: String?, board: UUID
    }

    static func readAll(_ configuration: PostgresConnection.Configuration) async throws -> Int {
        let (boards, cards) = try await readRows(configuration)
        return boards.count + cards.count
    }

    /// Every board and card, on a new connection closed before it returns.
    static func readRows(_ configuration: PostgresConnection.Configuration) async throws -> (boards: [BoardRow], cards: [CardRow]) {
        let logger = Logger(label: "strata.benchmarks.plain")
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        var boards: [BoardRow] = []
        var cards: [CardRow] = []
        do {
            let boardRows = try await connection.query("SELECT id, name, position FROM \"Board\"", logger: logger)
            for try await (id, name, position) in boardRows.decode((UUID, String, Int).self) {
                boards.append(BoardRow(id: id, name: name, position: position))
            }
            let cardRows = try await connection.query(
                """
                SELECT id, title, stage, points, estimate, small, done, due, token, blob, price, link, "boardID" FROM "Card"
                """, logger: logger)
            for try await (id, title, stage, points, estimate, small, done, due, token, blob, price, link, board) in cardRows.decode(
                (UUID, String, String, Int, Double, Int16, Bool, Date?, UUID?, Data?, Decimal?, String?, UUID).self)
            {
                cards.append(CardRow(
                    id: id, title: title, stage: stage, points: points, estimate: estimate, small: small, done: done, due: due,
                    token: token, blob: blob, price: price, link: link, board: board))
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return (boards, cards)
    }

    /// Not a baseline of the aim but its floor, for the record: ``readAll(_:)``, then what a
    /// hand-written copy that could later be kept in sync needs at least, with plain GRDB. A
    /// new SQLite file in WAL mode holds the rows in tables of the store's columns (each with
    /// its server id, unique, and the cards' board as a local key, indexed), written in one
    /// transaction by one cached statement per table, after the read.
    static func copyAll(_ configuration: PostgresConnection.Configuration, into path: String) async throws -> Int {
        let (boards, cards) = try await readRows(configuration)
        let database = try DatabasePool(path: path)
        try await database.write { [boards, cards] db in
            try db.execute(sql: """
                CREATE TABLE Board (id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, name TEXT NOT NULL, position INTEGER NOT NULL);
                CREATE TABLE Card (id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, title TEXT NOT NULL, stage TEXT NOT NULL, \
                points INTEGER NOT NULL, estimate REAL NOT NULL, small INTEGER NOT NULL, done INTEGER NOT NULL, due TEXT, token BLOB, \
                blob BLOB, price TEXT, link TEXT, boardID INTEGER NOT NULL REFERENCES Board(id));
                CREATE INDEX Card_boardID ON Card(boardID);
                """)
            var keys: [UUID: Int64] = [:]
            let board = try db.cachedStatement(sql: "INSERT INTO Board (uuid, name, position) VALUES (?, ?, ?)")
            for row in boards {
                try board.execute(arguments: [row.id.uuidString.lowercased(), row.name, row.position])
                keys[row.id] = db.lastInsertedRowID
            }
            let card = try db.cachedStatement(sql: """
                INSERT INTO Card (uuid, title, stage, points, estimate, small, done, due, token, blob, price, link, boardID) \
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for row in cards {
                try card.execute(arguments: [
                    row.id.uuidString.lowercased(), row.title, row.stage, row.points, row.estimate, row.small, row.done, row.due,
                    row.token, row.blob, row.price.map { "\($0)" }, row.link, keys[row.board],
                ])
            }
        }
        try database.close()
        return boards.count + cards.count
    }
}

// MARK: - A write on one device → a batch on another

/// Two devices in sync with the server, both running `start()` (push on each local commit,
/// pull on each `NOTIFY`); device B has a live `ResultsController` of `Card.Fetches.byBoard`.
/// Each sample retitles a random card on A and times from A's commit (its first commit handler)
/// to the batch carrying the new title on B's delivery queue. Samples are 5 to 25 ms apart,
/// each after the previous one arrived.
final class WriteToBatchFixture: @unchecked Sendable {
    let server: SyncServerFixture
    let a: SyncDevice
    let b: SyncDevice
    let controller: ResultsController<Card, Board>
    let watcher: TitleWatcher
    let probe: CommitProbe
    let cardIDs: [Int64]
    var generator = SystemRandomNumberGenerator()
    var next = 0

    init(objects: Int) async throws {
        let server = try SyncServerFixture(objects: objects)
        let a = try server.device(), b = try server.device()
        try await a.sync.sync()
        try await b.sync.sync()
        let controller = try ResultsController(
            store: b.store, request: Card.Fetches.byBoard, deliveryQueue: DispatchQueue(label: "strata.benchmarks.sync.deliveries"))
        let watcher = TitleWatcher()
        controller.coordinate(watcher)
        controller.waitForDeliveries()
        let cardIDs = try await a.store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Card") }
        guard controller.snapshot.rowCounts.reduce(0, +) == cardIDs.count else {
            throw SyncBenchmarkError.unexpected("device B lists \(controller.snapshot.rowCounts.reduce(0, +)) cards, A has \(cardIDs.count)")
        }
        self.server = server
        self.a = a
        self.b = b
        self.controller = controller
        self.watcher = watcher
        self.cardIDs = cardIDs
        probe = CommitProbe(store: a.store)  // before the sync's own commit observer
        await a.sync.start()
        await b.sync.start()
    }

    /// One write on A, and how long until B's controller delivered it.
    func sample() async throws -> UInt64 {
        next += 1
        let title = "Live \(next)"
        let id = cardIDs[Int.random(in: 0..<cardIDs.count, using: &generator)]
        watcher.expect(title)
        try await a.store.write { db in try db.execute(sql: "UPDATE Card SET title = ? WHERE id = ?", arguments: [title, id]) }
        guard let delivered = await watcher.wait(seconds: 30) else {
            throw SyncBenchmarkError.unexpected("no batch with \(title) on device B within 30 s (A: \(await a.sync.lastError.map { "\($0)" } ?? "no error"), B: \(await b.sync.lastError.map { "\($0)" } ?? "no error"))")
        }
        return delivered - probe.lastCommit
    }

    /// Checks that both stores and the server agree, and removes everything.
    func finish() async throws {
        defer { server.destroy() }
        await a.sync.stop()
        await b.sync.stop()
        try await a.sync.sync()
        try await b.sync.sync()
        let contents = try await a.server.contents()
        let differences = [try a.sync.contents().difference(from: contents), try b.sync.contents().difference(from: contents)]
        controller.waitForDeliveries()
        let listed = Set(controller.snapshot.items.map(\.title))
        let stored = Set(try await b.store.read { db in try String.fetchAll(db, sql: "SELECT title FROM Card") })
        await a.close()
        await b.close()
        if let difference = differences.compactMap({ $0 }).first { throw SyncBenchmarkError.unexpected("a device differs from the server: \(difference)") }
        guard listed == stored else { throw SyncBenchmarkError.unexpected("device B's controller differs from its store") }
    }
}

/// The time of the last commit of a store: its commit handler is registered before the sync's,
/// so it runs first, right after SQLite's commit returned.
final class CommitProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var committedAt: UInt64 = 0
    private var observation: CommitObservation?

    init(store: Store) {
        observation = store.observeCommits { [weak self] _ in self?.commitDidHappen() }
    }

    private func commitDidHappen() {
        let time = now()
        lock.withLock { committedAt = time }
    }

    var lastCommit: UInt64 { lock.withLock { committedAt } }
}

/// Watches device B's batches for the card title expected next.
final class TitleWatcher: Coordinatable, @unchecked Sendable {
    typealias Item = Card
    typealias Section = Board
    private let lock = NSLock()
    private var expected: String?
    private var deliveredAt: UInt64?
    private let arrived = DispatchSemaphore(value: 0)

    func expect(_ title: String) {
        lock.withLock {
            expected = title
            deliveredAt = nil
        }
    }

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Card, Board>) {
        let time = now()
        guard let expected = lock.withLock({ expected }) else { return }
        // Inserts, move targets and moved-and-updated rows are new paths; updates are old paths,
        // the same as new ones in a batch of one change.
        let paths = batch.itemInserts + batch.itemMoves.map(\.to) + batch.movedAndUpdatedItems + batch.itemUpdates
        let found = paths.contains { path in
            path.section < snapshot.numberOfSections && path.item < snapshot.numberOfRows(inSection: path.section)
                && snapshot[path].item?.title == expected
        }
        guard found else { return }
        lock.withLock {
            self.expected = nil
            deliveredAt = time
        }
        arrived.signal()
    }

    func reload(_ snapshot: ResultsSnapshot<Card, Board>) {}

    /// When the expected title was delivered (nil: not within `seconds`).
    func wait(seconds: Double) async -> UInt64? {
        let arrived = arrived
        let signalled = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: arrived.wait(timeout: .now() + seconds) == .success) }
        }
        return signalled ? lock.withLock { deliveredAt } : nil
    }
}

func registerWriteToBatch(objects: Int, samples: Int) {
    let fixture = Fixture<WriteToBatchFixture>()
    let metric = latency("write to batch")
    Benchmark(
        "SyncLatency.\(formatCount(objects)).Strata",
        configuration: .with(
            [metric], Runs(warmUp: 0, measured: 1),
            setup: { fixture.set(try await WriteToBatchFixture(objects: objects)) },
            teardown: {
                try await fixture.value.finish()
                fixture.set(nil)
            })
    ) { benchmark in
        let fixture = fixture.value
        for index in 0..<(samples + 20) {
            let nanoseconds = try await fixture.sample()
            if index >= 20 { benchmark.record(metric, nanoseconds: nanoseconds) }  // 20 to warm up
            try await Task.sleep(for: .milliseconds(Int.random(in: 5...25)))
        }
    }
}

// MARK: - Push and pull throughput

/// A device in sync with a server of `objects` objects. Push: the device changes `changes` rows
/// in one transaction (outside the measured region), and `push()` sends them until the server
/// acknowledged everything. Pull: the server changes `changes` rows with SQL (outside the
/// measured region), and `pull()` applies them. Updates give existing cards a new title and
/// points; inserts add new cards.
func registerThroughput(objects: Int, changes: Int) {
    enum Direction: String { case push = "SyncPush", pull = "SyncPull" }
    enum Kind: String { case updates = "Updates", inserts = "Inserts" }
    final class State: @unchecked Sendable {
        let server: SyncServerFixture
        let device: SyncDevice
        var round = 0
        var inserted = 0
        init(objects: Int) async throws {
            server = try SyncServerFixture(objects: objects)
            device = try server.device()
            try await device.sync.sync()
        }
    }
    let rowChanges = count("row changes")
    for direction in [Direction.push, .pull] {
        for kind in [Kind.updates, .inserts] {
            let state = Fixture<State>()
            Benchmark(
                "\(direction.rawValue).\(formatCount(changes)).\(kind.rawValue)",
                configuration: .with(
                    [.wallClock, .cpuTotal, .mallocCountTotal, rowChanges], Runs(warmUp: 1, measured: 5),
                    setup: { state.set(try await State(objects: objects)) },
                    teardown: {
                        let state = state.value
                        let contents = try await state.device.server.contents()
                        let difference = try state.device.sync.contents().difference(from: contents)
                        await state.device.close()
                        state.server.destroy()
                        if let difference { throw SyncBenchmarkError.unexpected("the device differs from the server: \(difference)") }
                    })
            ) { benchmark in
                let state = state.value
                state.round += 1
                let round = state.round
                let sync = state.device.sync
                switch (direction, kind) {
                case (.push, .updates):
                    try await state.device.store.write { db in try CardWrites.update(changes, round: round, db) }
                case (.push, .inserts):
                    try await state.device.store.write { db in try CardWrites.insert(changes, round: round, db) }
                case (.pull, .updates):
                    try state.server.psql("""
                        UPDATE "Card" SET title = left(title, 12) || ' round \(round)', points = (points + 1) % 101 \
                        WHERE id IN (SELECT id FROM "Card" ORDER BY id LIMIT \(changes))
                        """)
                case (.pull, .inserts):
                    try state.server.insertCards(changes, from: 10_000_000 + state.inserted)
                    state.inserted += changes
                }
                benchmark.startMeasurement()
                let report = direction == .push ? try await sync.push() : try await sync.pull()
                benchmark.stopMeasurement()
                let moved = direction == .push ? report.pushedChanges : report.pulledChanges
                guard moved == changes, report.changesRefusedByServer == 0, report.conflictsWhilePulling == 0 else {
                    throw SyncBenchmarkError.unexpected("\(direction.rawValue) \(kind.rawValue): \(report), \(changes) expected")
                }
                benchmark.measurement(rowChanges, moved)
            }
        }
    }
}

// MARK: - The sync's triggers on local writes

/// An app's writes of cards, in one transaction: round `round` gives the first `count` cards
/// a new title and points, or inserts `count` new cards spread over the boards.
enum CardWrites {
    static func update(_ count: Int, round: Int, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE Card SET title = 'Card ' || id || ' round ' || ?, points = (points + 1) % 101 WHERE id IN (SELECT id FROM Card ORDER BY id LIMIT ?)",
            arguments: [round, count])
    }

    static func insert(_ count: Int, round: Int, _ db: Database) throws {
        let boards = try Int64.fetchAll(db, sql: "SELECT id FROM Board ORDER BY id")
        let statement = try db.makeStatement(sql: "INSERT INTO Card (title, points, estimate, due, boardID) VALUES (?, ?, ?, ?, ?)")
        for index in 0..<count {
            try statement.execute(arguments: [
                "New \(round)-\(index)", index % 101, Double(index) / 4, Date(timeIntervalSince1970: 1_780_000_000 + Double(index)),
                boards[index % boards.count],
            ])
        }
    }
}

/// What the sync's triggers cost the app's own writes: one transaction that updates
/// `changes` cards (a new title and points), or inserts as many, in a store of `objects`
/// objects after its initial sync, beside the same store without the sync's state (its
/// `stratasync_` tables and triggers dropped: the app as it would be without the sync).
func registerLocalWrites(objects: Int, changes: Int) {
    enum Kind: String { case updates = "Updates", inserts = "Inserts" }
    final class State: @unchecked Sendable {
        let server: SyncServerFixture
        let device: SyncDevice
        let plain: Store
        var round = 0
        init(objects: Int) async throws {
            server = try SyncServerFixture(objects: objects)
            device = try server.device()
            try await device.sync.sync()
            let copy = device.path + ".unsynced"
            let source = try DatabaseQueue(path: device.path)
            try await source.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
            try source.close()
            let queue = try DatabaseQueue(path: copy)
            try await queue.writeWithoutTransaction { db in
                for (type, name) in try Row.fetchAll(
                    db, sql: "SELECT type, name FROM sqlite_master WHERE name LIKE 'stratasync%' AND type IN ('trigger', 'table')"
                ).map({ ($0[0] as String, $0[1] as String) }) where type == "trigger" || !name.hasPrefix("sqlite_") {
                    try db.execute(sql: "DROP \(type == "trigger" ? "TRIGGER" : "TABLE") IF EXISTS \"\(name)\"")
                }
            }
            try queue.close()
            plain = try Store(schema: StrataModel.schema, path: copy)
        }
    }
    for kind in [Kind.updates, .inserts] {
        for synced in [true, false] {
            let state = Fixture<State>()
            Benchmark(
                "LocalWrite.\(formatCount(changes)).\(kind.rawValue).\(synced ? "Synced" : "Unsynced")",
                configuration: .with(
                    [.wallClock, .cpuTotal, .mallocCountTotal], Runs(warmUp: 1, measured: 5),
                    setup: { state.set(try await State(objects: objects)) },
                    teardown: {
                        let state = state.value
                        try? state.plain.close()
                        await state.device.close()
                        state.server.destroy()
                    })
            ) { benchmark in
                let state = state.value
                state.round += 1
                let round = state.round
                let store = synced ? state.device.store : state.plain
                benchmark.startMeasurement()
                try await store.write { db in
                    switch kind {
                    case .updates: try CardWrites.update(changes, round: round, db)
                    case .inserts: try CardWrites.insert(changes, round: round, db)
                    }
                }
                benchmark.stopMeasurement()
            }
        }
    }
}

