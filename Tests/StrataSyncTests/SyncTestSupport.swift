import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// One private PostgreSQL cluster for the whole test process, stopped and removed at exit;
/// each test makes its own database in it.
enum SharedCluster {
    nonisolated(unsafe) static var started: PostgresCluster?
    static let lock = NSLock()

    static func get() throws -> PostgresCluster {
        lock.lock()
        defer { lock.unlock() }
        if let started { return started }
        let cluster = try PostgresCluster.startBlocking()
        started = cluster
        atexit { SharedCluster.started?.destroy() }
        return cluster
    }
}

/// A test's server: its own database in the shared cluster.
struct TestServer {
    let cluster: PostgresCluster
    let database: String

    /// A new database in the shared cluster (started by the first test that asks), made off
    /// the cooperative pool (see `offThePool`).
    init() async throws {
        self = try await offThePool { try TestServer(blocking: ()) }
    }

    private init(blocking: Void) throws {
        cluster = try SharedCluster.get()
        database = try cluster.makeDatabaseBlocking()
    }

    var configuration: PostgresConnection.Configuration { cluster.configuration(database: database) }

    /// A server for `schema`, connecting as `user` (the cluster's superuser unless given).
    func server(
        schema: SchemaDescriptor = StrataModel.schema, policy: PostgresSyncServer.SchemaPolicy = .createAndExtend,
        user: String? = nil
    ) throws -> PostgresSyncServer {
        try PostgresSyncServer(configuration: cluster.configuration(user: user, database: database), schema: schema, policy: policy)
    }

    @discardableResult
    func psql(_ sql: String) async throws -> String { try await cluster.psql(sql, database: database) }

    /// What the server's tables hold.
    func contents() async throws -> SyncContents {
        let server = try server()
        defer { Task { await server.close() } }
        return try await server.contents()
    }
}

/// One device: a store file of its own and its sync.
struct Device {
    let store: Store
    let sync: StoreSync
    let server: PostgresSyncServer

    init(
        _ path: String, _ test: TestServer, schema: SchemaDescriptor = StrataModel.schema, options: SyncOptions = SyncOptions(),
        policy: PostgresSyncServer.SchemaPolicy = .createAndExtend, user: String? = nil
    ) throws {
        try self.init(path, server: try test.server(schema: schema, policy: policy, user: user), schema: schema, options: options)
    }

    init(_ path: String, server: PostgresSyncServer, schema: SchemaDescriptor = StrataModel.schema, options: SyncOptions = SyncOptions()) throws {
        store = try Store(schema: schema, path: path)
        self.server = server
        sync = try StoreSync(store: store, server: server, options: options)
    }

    func close() async {
        await sync.stop()
        await server.close()
        try? store.close()
    }
}

/// Syncs every device, twice round, so that each has pulled what the others pushed.
func settle(_ devices: [Device]) async throws {
    for _ in 0..<2 {
        for device in devices { try await device.sync.sync() }
    }
}

/// Every device's contents equal the server's.
func expectConverged(_ devices: [Device], _ test: TestServer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let server = try await test.contents()
    for (index, device) in devices.enumerated() {
        let contents = try device.sync.contents()
        #expect(contents.difference(from: server) == nil, "device \(index) differs from the server: \(contents.difference(from: server) ?? "")", sourceLocation: sourceLocation)
    }
}

extension SyncContents {
    /// The ids of the objects whose rows differ from `other`'s, or that only one holds.
    func differingIDs(from other: SyncContents) -> Set<UUID> {
        var ids = Set<UUID>()
        for table in Set(objects.keys).union(other.objects.keys) {
            let mine = objects[table] ?? [:], theirs = other.objects[table] ?? [:]
            for id in Set(mine.keys).union(theirs.keys) where mine[id] != theirs[id] { ids.insert(id) }
        }
        return ids
    }
}

/// Waits until `condition` holds, up to `limit` (a wait for the background or the server,
/// not a timing): asked again every 50 ms.
func eventually(_ limit: Duration = .seconds(120), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
