import Foundation
import StrataSQL
import StrataSyncFixture
import StrataTestSupport
import Testing

/// A request that outlasts the server's `requestTimeout` fails with `SyncTimeoutError` in
/// about that time, whether it waits on the server or for a connection; it leaves no
/// connection stuck mid-transaction, and the next request goes through.
@Suite("Requests past their timeout")
struct SyncTimeoutTests {
    /// The timed requests' timeout; everything else waits the default 60 s (a full run's load
    /// was seen to hold a first sync for more than 15 s: tests that start clusters block the
    /// process's threads meanwhile).
    static let timeout = Duration.seconds(30)

    /// Syncs `device` once the server answers again: a sync that times out under a full run's
    /// load is tried again (twice at most); any other error fails.
    func syncAgain(_ device: Device) async throws {
        for attempt in 1...3 {
            do {
                try await device.sync.sync()
                return
            } catch let error as SyncTimeoutError where attempt < 3 {
                print("SyncTimeoutTests: a sync after the fault timed out (\(error)), trying again")
            }
        }
    }

    @Test("another session holds the log's lock: the sync times out, then goes through once it is released")
    func aRequestWaitingOnALockTimesOut() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        // The timed-out transaction's session ends when its connection is closed, unless a
        // process the tests started meanwhile (a cluster's server) inherited the socket: the
        // server then ends it once it has been idle in its transaction for 20 s.
        try await test.psql("ALTER DATABASE \(test.database) SET idle_in_transaction_session_timeout = '20s'")
        let first = try Device(folder.path("a.sqlite"), test)  // makes the tables
        defer { Task { await first.close() } }
        try await first.sync.sync()
        let server = try PostgresSyncServer(configuration: test.configuration, schema: StrataModel.schema, requestTimeout: Self.timeout)
        let device = try Device(folder.path("b.sqlite"), server: server)
        defer { Task { await device.close() } }
        try await device.store.write { db in _ = try db.insert(Board(name: "Waited")) }

        // A session of another service holds the lock every push and hello takes first.
        let logger = Logger(label: "strata.tests")
        let holder = try await PostgresConnection.connect(configuration: test.configuration, id: 1, logger: logger)
        defer { Task { try? await holder.close() } }
        try await holder.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(\(PostgreSQLDDL.logLock))"), logger: logger)
        let start = ContinuousClock.now
        await #expect(throws: SyncTimeoutError.self) { try await device.sync.sync() }
        #expect(ContinuousClock.now - start < Self.timeout + .seconds(90), "the timeout is \(Self.timeout)")
        #expect(try await test.psql(#"SELECT count(*) FROM "Board""#) == "0\n")

        try await holder.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(\(PostgreSQLDDL.logLock))"), logger: logger)
        try await syncAgain(device)
        #expect(try await test.psql(#"SELECT name FROM "Board""#) == "Waited\n")
        // The timed-out transaction's session ends: none is left in a transaction or waiting
        // for a lock.
        let others = """
            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() \
            AND (state LIKE 'idle in transaction%' OR wait_event_type = 'Lock')
            """
        #expect(try await eventually { try await test.psql(others) == "0\n" })
    }

    @Test("a statement of an empty store's snapshot waits on a lock: the sync times out, applies nothing, and reads the snapshot once the lock is released")
    func aSnapshotStatementWaitingOnALockTimesOut() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        // (Past the timeout: the lock's holder stays idle in its transaction until then.)
        try await test.psql("ALTER DATABASE \(test.database) SET idle_in_transaction_session_timeout = '90s'")
        let timeout = Duration.seconds(10)
        let first = try Device(folder.path("a.sqlite"), test)
        defer { Task { await first.close() } }
        try await first.store.write { db in _ = try db.insert(Board(name: "Read")) }
        try await first.sync.sync()
        // (A snapshot has no deadline of its own: each of its statements has the timeout.)
        let server = try PostgresSyncServer(configuration: test.configuration, schema: StrataModel.schema, requestTimeout: timeout)
        let device = try Device(folder.path("b.sqlite"), server: server)
        defer { Task { await device.close() } }

        // A session of another service holds the boards' table, which the snapshot reads.
        let logger = Logger(label: "strata.tests")
        let holder = try await PostgresConnection.connect(configuration: test.configuration, id: 1, logger: logger)
        var holding = true
        defer { if holding { Task { try? await holder.close() } } }
        try await holder.query("BEGIN", logger: logger)
        try await holder.query(PostgresQuery(unsafeSQL: #"LOCK TABLE "Board" IN ACCESS EXCLUSIVE MODE"#), logger: logger)
        let start = ContinuousClock.now
        await #expect(throws: SyncTimeoutError.self) { try await device.sync.sync() }
        let waited = ContinuousClock.now - start
        #expect(waited >= timeout - .seconds(1) && waited < timeout + .seconds(60), "waited \(waited); the timeout is \(timeout)")
        #expect(try await device.store.fetchAll(Board.self).isEmpty)

        holding = false
        try await holder.close()  // (its transaction ends)
        try await syncAgain(device)
        #expect(try await device.store.fetchAll(Board.self).map(\.name) == ["Read"])
        // The timed-out statement's connection was closed: its session waits for nothing.
        let others = """
            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() \
            AND (state LIKE 'idle in transaction%' OR wait_event_type = 'Lock')
            """
        #expect(try await eventually { try await test.psql(others) == "0\n" })
    }

    @Test("a server that accepts no connection: the sync times out, then goes through once it does")
    func aRequestWaitingForAConnectionTimesOut() async throws {
        let cluster = try await PostgresCluster.start()  // its own: this test stops the server's postmaster
        defer { cluster.destroy() }
        let database = try await cluster.makeDatabase()
        let folder = try TemporaryDirectory()
        let first = try Device(folder.path("a.sqlite"), server: try PostgresSyncServer(
            configuration: cluster.configuration(database: database), schema: StrataModel.schema))
        defer { Task { await first.close() } }
        try await first.sync.sync()  // makes the tables
        var configuration = cluster.configuration(database: database)
        configuration.options.connectTimeout = .seconds(300)  // the request's timeout ends it first
        let server = try PostgresSyncServer(configuration: configuration, schema: StrataModel.schema, requestTimeout: Self.timeout)
        let device = try Device(folder.path("b.sqlite"), server: server)
        defer { Task { await device.close() } }
        try await device.store.write { db in _ = try db.insert(Board(name: "Waited")) }

        // The postmaster stopped (SIGSTOP): a new connection is accepted by the system and never
        // answered, past the connect timeout; the server has none yet.
        let pidFile = try String(contentsOf: cluster.dataFolder.appendingPathComponent("postmaster.pid"), encoding: .utf8)
        let postmaster = try #require(pidFile.split(separator: "\n").first.flatMap { pid_t($0) })
        #expect(kill(postmaster, SIGSTOP) == 0)
        let start = ContinuousClock.now
        await #expect(throws: SyncTimeoutError.self) { try await device.sync.sync() }
        let took = ContinuousClock.now - start
        #expect(kill(postmaster, SIGCONT) == 0)
        #expect(took < Self.timeout + .seconds(90), "the timeout is \(Self.timeout), the connect timeout 300 s")

        try await syncAgain(device)
        #expect(try await cluster.psql(#"SELECT name FROM "Board""#, database: database) == "Waited\n")
    }
}
