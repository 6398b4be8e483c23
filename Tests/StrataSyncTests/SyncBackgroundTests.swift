import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

@Suite("The background sync")
struct SyncBackgroundTests {
    /// Waits until `condition` holds, up to `limit` (a wait for the background, not a timing).
    func eventually(_ limit: Duration = .seconds(120), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    @Test func lastErrorClearsOnceASyncSucceedsAgain() async throws {
        let cluster = try PostgresCluster.start()  // its own: this test stops the server
        defer { cluster.destroy() }
        let database = try cluster.makeDatabase()
        let folder = try TemporaryDirectory()
        let server = try PostgresSyncServer(configuration: cluster.configuration(database: database), schema: StrataModel.schema)
        let options = SyncOptions(retryDelays: .milliseconds(50)...(.milliseconds(400)))
        let device = try Device(folder.path("a.sqlite"), server: server, options: options)
        defer { Task { await device.close() } }
        await device.sync.start()
        try await device.store.write { db in _ = try db.insert(Board(name: "Before")) }
        #expect(try await eventually { (try? cluster.psql(#"SELECT count(*) FROM "Board""#, database: database)) == "1\n" })
        #expect(await device.sync.lastError == nil)

        try cluster.stop(mode: "immediate")
        try await device.store.write { db in _ = try db.insert(Board(name: "While down")) }
        #expect(try await eventually { await device.sync.lastError != nil })
        try cluster.startServer()
        #expect(try await eventually { (try? cluster.psql(#"SELECT count(*) FROM "Board""#, database: database)) == "2\n" })
        let cleared = try await eventually { await device.sync.lastError == nil }
        let left = await device.sync.lastError.map { String(describing: $0) } ?? "nil"
        #expect(cleared, "lastError: \(left)")
    }
}
