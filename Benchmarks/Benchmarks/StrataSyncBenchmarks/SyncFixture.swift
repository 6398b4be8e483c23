import Foundation
import GRDB
import PostgresNIO
import Strata
import StrataSync

/// A private PostgreSQL cluster (the sync tests' `PostgresCluster`: `initdb` and `pg_ctl` in a
/// temporary folder, a Unix socket only) with one database holding the sync tables of the sync
/// tests' model (`Models/Boards.yaml`), seeded on the server with boards and their cards.
final class SyncServerFixture: @unchecked Sendable {
    let cluster: PostgresCluster
    let database: String
    /// Where the devices' store files go.
    let folder: URL
    private var deviceCount = 0

    /// A new cluster and database with `objects` objects: one board per 1,000 objects, cards for
    /// the rest, every card column filled.
    init(objects: Int) throws {
        // package-benchmark preloads its malloc interposer in this process; the server, psql and
        // the rest that the cluster starts need not carry it.
        unsetenv("LD_PRELOAD")
        cluster = try PostgresCluster.startBlocking()
        database = try cluster.makeDatabaseBlocking()
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-syncbench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The script a database's manager applies (see the sync article), then the rows.
        try psql(try PostgresSchema(schema: StrataModel.schema).sql)
        let boards = max(1, objects / 1_000)
        try psql("INSERT INTO \"Board\" (id, name, position) SELECT gen_random_uuid(), 'Board ' || n, n FROM generate_series(1, \(boards)) n")
        try insertCards(objects - boards, from: 1)
    }

    var configuration: PostgresConnection.Configuration { cluster.configuration(database: database) }

    @discardableResult
    func psql(_ sql: String) throws -> String { try cluster.psqlBlocking(sql, database: database) }

    /// Inserts `count` cards numbered from `first`, spread over the boards, on the server (its
    /// triggers log them, as for any other service writing the tables).
    func insertCards(_ count: Int, from first: Int) throws {
        try psql("""
            INSERT INTO "Card" (id, title, stage, points, estimate, small, done, due, token, blob, price, link, "boardID") \
            SELECT gen_random_uuid(), 'Card ' || lpad(n::text, 7, '0'), (ARRAY['todo', 'doing', 'done'])[1 + n % 3], n % 101, \
            n * 0.25, (n % 200 - 100)::smallint, n % 2 = 0, timestamptz '2026-01-01 00:00:00+00' + n * interval '1 minute', \
            gen_random_uuid(), decode(md5(n::text), 'hex'), (n * 0.01)::numeric(12, 2), 'https://example.com/cards/' || n, b.id \
            FROM generate_series(\(first), \(first + count - 1)) n \
            JOIN (SELECT id, (row_number() OVER (ORDER BY position)) - 1 AS i FROM "Board") b \
            ON b.i = n % (SELECT count(*) FROM "Board")
            """)
    }

    /// A new device: a store file of its own, its sync, and its server connection.
    func device() throws -> SyncDevice {
        deviceCount += 1
        return try SyncDevice(path: folder.appendingPathComponent("device\(deviceCount).sqlite").path, configuration: configuration)
    }

    func destroy() {
        cluster.destroy()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// One device: a store, its `StoreSync`, and the `PostgresSyncServer` it talks to.
final class SyncDevice: @unchecked Sendable {
    let path: String
    let store: Store
    let server: PostgresSyncServer
    let sync: StoreSync

    init(path: String, configuration: PostgresConnection.Configuration, options: SyncOptions = SyncOptions()) throws {
        self.path = path
        store = try Store(schema: StrataModel.schema, path: path)
        server = try PostgresSyncServer(configuration: configuration, schema: StrataModel.schema)
        sync = try StoreSync(store: store, server: server, options: options)
    }

    /// The number of boards and cards in the store.
    func objectCount() throws -> Int {
        try store.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM Board) + (SELECT count(*) FROM Card)") ?? 0
        }
    }

    /// The store file's size (its log checkpointed into it) as the sync left it; the same
    /// vacuumed; and a copy without the sync's state (every `stratasync_` table and trigger
    /// dropped), vacuumed: the same store unsynced. Stops the sync and closes the store.
    func fileSizes() async throws -> (synced: Int, vacuumed: Int, unsynced: Int) {
        await sync.stop()
        await server.close()
        try store.close()
        func size(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        }
        let database = try DatabaseQueue(path: path)
        try await database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try database.close()
        let synced = try size(path)
        var results: [Int] = []
        for dropSync in [false, true] {
            let copy = path + (dropSync ? ".unsynced" : ".vacuumed")
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            let queue = try DatabaseQueue(path: copy)
            try await queue.writeWithoutTransaction { db in
                if dropSync {
                    for (type, name) in try Row.fetchAll(
                        db, sql: "SELECT type, name FROM sqlite_master WHERE name LIKE 'stratasync%' AND type IN ('trigger', 'table')"
                    ).map({ ($0[0] as String, $0[1] as String) }) where type == "trigger" || !name.hasPrefix("sqlite_") {
                        try db.execute(sql: "DROP \(type == "trigger" ? "TRIGGER" : "TABLE") IF EXISTS \"\(name)\"")
                    }
                }
                try db.execute(sql: "VACUUM")
                _ = try db.checkpoint(.truncate)
            }
            try queue.close()
            results.append(try size(copy))
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
        }
        return (synced, results[0], results[1])
    }

    /// Stops the sync, closes the connection and the store, and removes the file.
    func close() async {
        await sync.stop()
        await server.close()
        try? store.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

enum SyncBenchmarkError: Error, CustomStringConvertible {
    case unexpected(String)
    var description: String {
        switch self {
        case .unexpected(let text): text
        }
    }
}
