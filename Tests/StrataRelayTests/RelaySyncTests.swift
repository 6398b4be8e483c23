import Foundation
import Logging
import StrataSyncFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// Devices syncing through `strata-relay`, a real process between them and a private
    /// PostgreSQL cluster, signed in with tokens the tests sign.
    @Suite("Sync through the relay")
    struct RelaySyncTests {
        @Test("Two devices, one over URLSession and one over AsyncHTTPClient, sync through the relay and converge with the server's tables")
        func twoDevicesConverge() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let relay = try await RelayProcess(test, keys: keys)
            defer { relay.stop() }
            let folder = try TemporaryDirectory()
            // One device signs in with the HS256 secret, the other with the ES256 key; each
            // speaks HTTP through one of the two transports.
            let a = try RelayDevice(folder.path("a.sqlite"), relay: relay, transport: .urlSession) { try await keys.token(user: "alice") }
            let b = try RelayDevice(folder.path("b.sqlite"), relay: relay, transport: .asyncHTTPClient) {
                try await keys.token(user: "bob", signer: .es256)
            }

            try await a.store.write { db in
                let board = try db.insert(Board(name: "Relay"))
                let card = try db.insert(Card(
                    title: "Through HTTP", stage: .doing, points: 3, due: Date(timeIntervalSince1970: 1_700_000_000.25),
                    blob: Data([0, 255]), price: Decimal(string: "12.5"), boardID: board.id))
                let label = try db.insert(Label(name: "urgent"))
                try db.link(card.id, Card.labels, label.id)
            }
            try await b.store.write { db in
                _ = try db.insert(Board(name: "From B", position: 2))
                _ = try db.insert(Album(title: "Album", slug: "album"))
            }
            try await settle([a, b])
            try await expectConverged([a, b], test)
            #expect(try await test.contents().objects["Board"]?.count == 2)
            #expect(try await b.store.fetchAll(Card.self).map(\.title) == ["Through HTTP"])

            // Edits, links and deletions on both sides.
            try await b.store.write { db in
                let board = try #require(try db.fetchAll(Board.self).first { $0.name == "Relay" })
                let label = try db.fetchAll(Label.self)[0]
                let card = try db.insert(Card(title: "Second", boardID: board.id))
                try db.link(card.id, Card.labels, label.id)
            }
            try await a.store.write { db in
                var board = try #require(try db.fetchAll(Board.self).first { $0.name == "Relay" })
                board.name = "Relay (renamed)"
                _ = try db.update(board)
                _ = try db.delete(try db.fetchAll(Label.self)[0])
            }
            try await settle([a, b])
            try await expectConverged([a, b], test)
            #expect(try await test.contents().objects["Card"]?.count == 2)
            #expect(try await b.store.fetchAll(Label.self).isEmpty)

            await a.close()
            await b.close()
        }

        @Test("A device's change reaches another through the relay's signals, without a pull of its own; one LISTEN for all")
        func liveChangesArriveThroughTheSignals() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let relay = try await RelayProcess(test, keys: keys, environment: ["STRATA_RELAY_HEARTBEAT_SECONDS": "1"])
            defer { relay.stop() }
            let folder = try TemporaryDirectory()
            // No timer: only a commit of the device's own, or a signal, makes it sync.
            let options = SyncOptions(pollInterval: .seconds(3600), retryDelays: .milliseconds(50)...(.milliseconds(500)))
            // Device b's signals come through URLSession, the others' through AsyncHTTPClient.
            let devices = try (["a", "b", "c"] as [String]).map { name in
                try RelayDevice(folder.path("\(name).sqlite"), relay: relay, options: options, transport: name == "b" ? .urlSession : .asyncHTTPClient) {
                    try await keys.token(user: name)
                }
            }
            for device in devices { await device.sync.start() }
            // Each device's signals stream is open (the relay logs each at the request's end is
            // not enough: wait for the three GETs to be answered with 200).
            #expect(try await eventually { relay.log.components(separatedBy: "GET /v1/signals 200").count - 1 >= 3 })

            try await devices[0].store.write { db in _ = try db.insert(Board(name: "Live")) }
            let arrived = try await eventually(.seconds(30)) {
                let names = try await devices[2].store.fetchAll(Board.self).map(\.name)
                return names == ["Live"]
            }
            #expect(arrived, "the board did not reach device c: \(relay.log.suffix(3000))")
            #expect(try await eventually(.seconds(30)) {
                try await devices[1].store.fetchAll(Board.self).count == 1
            })

            // One LISTEN for the three devices: the relay's signals connection, and no other.
            let listeners = try await test.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'")
            #expect(listeners.trimmingCharacters(in: .whitespacesAndNewlines) == "1")

            // The other way, from device c, while the heartbeats go on.
            try await Task.sleep(for: .seconds(2))
            try await devices[2].store.write { db in _ = try db.insert(Label(name: "from c")) }
            #expect(try await eventually(.seconds(30)) {
                try await devices[0].store.fetchAll(Label.self).count == 1
            })
            for device in devices { #expect(await device.sync.lastError == nil) }
            for device in devices { await device.sync.stop() }
            try await settle(devices)
            try await expectConverged(devices, test)

            // A graceful stop with no device connected any more … and one connected: SIGTERM ends
            // the signals stream, and the relay exits 0.
            let watcher = try RelayDevice(folder.path("d.sqlite"), relay: relay, options: options) { try await keys.token(user: "d") }
            let signals = try await watcher.server.changeSignals()
            var iterator = signals.makeAsyncIterator()
            _ = try await iterator.next()  // ready
            let started = ContinuousClock.now
            #expect(relay.stop() == 0, "\(relay.log.suffix(2000))")
            #expect(started.duration(to: .now) < .seconds(10))
            _ = try? await iterator.next()
            for device in devices { await device.close() }
            await watcher.close()
        }

        @Test("The relay listens again after the database restarted; a request while it is down gets 503")
        func theRelayOutlivesADatabaseRestart() async throws {
            let cluster = try await PostgresCluster.start()  // its own: this test stops the server
            defer { cluster.destroy() }
            let test = try await TestServer(cluster: cluster)
            let keys = TestKeys()
            let relay = try await RelayProcess(test, keys: keys)
            defer { relay.stop() }
            let folder = try TemporaryDirectory()
            var quiet = Logger(label: "strata.sync")
            quiet.logLevel = .critical  // (the failures while the server is down)
            let options = SyncOptions(pollInterval: .seconds(3600), retryDelays: .milliseconds(50)...(.milliseconds(500)), logger: quiet)
            let a = try RelayDevice(folder.path("a.sqlite"), relay: relay, options: options) { try await keys.token(user: "a") }
            let b = try RelayDevice(folder.path("b.sqlite"), relay: relay, options: options) { try await keys.token(user: "b") }
            try await a.sync.sync()
            await b.sync.start()
            #expect(try await eventually { relay.log.contains("GET /v1/signals 200") })

            try await cluster.stop(mode: "immediate")
            let pull = relay.url.appendingPathComponent("v1/pull")
            let body = Data(#"{"device":"8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11","cursor":0,"limit":10}"#.utf8)
            let token = try await keys.token()
            var refusal: HTTPAnswer?
            for _ in 0..<5 where refusal?.status != 503 { refusal = try await http("POST", pull, token: token, body: body) }
            #expect(refusal?.status == 503)
            #expect(refusal?.refusal?["error"] == "database_unavailable")
            #expect(refusal?.refusal?["reason"]?.contains("PSQL") == false)

            try await cluster.startServer()
            #expect(try await eventually { relay.log.components(separatedBy: "listening for the server's changes").count - 1 >= 2 })
            try await a.store.write { db in _ = try db.insert(Board(name: "After the restart")) }
            try await a.sync.sync()
            let arrived = try await eventually(.seconds(30)) {
                try await b.store.fetchAll(Board.self).map(\.name) == ["After the restart"]
            }
            #expect(arrived, "\(relay.log.suffix(3000))")
            await a.close()
            await b.close()
        }
    }
}

extension TestServer {
    /// A database of its own in `cluster`.
    init(cluster: PostgresCluster) async throws {
        self.cluster = cluster
        database = try await cluster.makeDatabase()
    }
}
