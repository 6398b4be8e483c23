import Foundation
import Logging
import PostgresNIO
import StrataRelay
import StrataSharingFixture
import StrataTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RelayTests {
    /// Several relays serving one database (the per-user data model of
    /// Tests/SharingFixture/Models): two `strata-relay` processes in front of one private
    /// PostgreSQL cluster, devices of two users moving from one to the other.
    ///
    /// The contract: a relay keeps nothing a device depends on. A push is applied once, and its
    /// answer recorded, in the database: a push whose answer was lost, sent again to another
    /// relay, gets the first answer and changes nothing (a change made meanwhile by another
    /// device stays). A pull is answered from the database after the device's cursor, which
    /// the device keeps: a device that moves pulls on from where it was, missing and repeating
    /// nothing. A change pushed through one relay signals the devices connected to any relay
    /// (each listens to the database). So after quiescence every device holds exactly its
    /// user's data on the server, each object once, with no conflict recorded.
    @Suite("Scaling out: several relays, one database")
    struct RelayScaleOutTests {
        /// A device's server as the test sees it: a `RelaySyncServer`, the answers to the
        /// pushes it sent, and, when told, a push whose answer is lost on its way back (the
        /// relay applied it; the device never heard).
        final class ObservedServer: SyncServer, @unchecked Sendable {
            let relay: RelaySyncServer
            private let lock = NSLock()
            private var answered: [SyncPushResult] = []
            private var losesNextAnswer = false
            private var lostID: UUID?
            private var sent: [UUID] = []

            init(url: URL, token: @escaping @Sendable () async throws -> String) {
                relay = RelaySyncServer(url: url, token: token)
            }

            /// The answers the device received.
            var answers: [SyncPushResult] { lock.withLock { answered } }

            /// The id of the push whose answer was lost.
            var lostPush: UUID? { lock.withLock { lostID } }

            /// The ids of the pushes the device sent, each time it sent one.
            var sends: [UUID] { lock.withLock { sent } }

            /// The next push reaches the relay, and its answer is lost.
            func loseNextAnswer() { lock.withLock { losesNextAnswer = true } }

            func hello(_ hello: SyncHello) async throws -> SyncWelcome { try await relay.hello(hello) }

            func push(_ push: SyncPush) async throws -> SyncPushResult {
                lock.withLock { sent.append(push.id) }
                let result = try await relay.push(push)
                let lost = lock.withLock { () -> Bool in
                    defer { losesNextAnswer = false }
                    if losesNextAnswer {
                        lostID = push.id
                    } else {
                        answered.append(result)
                    }
                    return losesNextAnswer
                }
                if lost { throw URLError(.networkConnectionLost) }
                return result
            }

            func pull(_ request: SyncPullRequest) async throws -> SyncPullResult { try await relay.pull(request) }

            func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> { try await relay.changeSignals() }
        }

        /// One user's device: a store file of its own, syncing through one relay at a time; it
        /// moves as an app would, with a new server for the other relay's URL on the same store.
        final class MovingDevice: @unchecked Sendable {
            let name: String
            let user: String
            let store: Store
            let keys: TestKeys
            let options: SyncOptions
            private(set) var sync: StoreSync
            private(set) var server: ObservedServer
            /// Every answer the device received, on every relay.
            private var earlierAnswers: [SyncPushResult] = []
            private var earlierSends: [UUID] = []

            init(_ name: String, user: String, folder: TemporaryDirectory, relay: RelayProcess, keys: TestKeys, options: SyncOptions) throws {
                self.name = name
                self.user = user
                self.keys = keys
                self.options = options
                store = try Store(schema: StrataModel.schema, path: folder.path("\(name).sqlite"))
                server = ObservedServer(url: relay.url) { try await keys.token(user: user) }
                sync = try StoreSync(store: store, server: server, options: options)
            }

            /// Stops syncing through the current relay and syncs through `relay` from now on.
            func move(to relay: RelayProcess) async throws {
                await sync.stop()
                earlierAnswers += server.answers
                earlierSends += server.sends
                let keys = keys, user = user
                server = ObservedServer(url: relay.url) { try await keys.token(user: user) }
                sync = try StoreSync(store: store, server: server, options: options)
            }

            var answers: [SyncPushResult] { earlierAnswers + server.answers }
            var sends: [UUID] { earlierSends + server.sends }

            /// The values of `column` of the objects of `table` this device holds, each as
            /// many times as it holds it.
            func values(_ table: String, _ column: String = "title") throws -> [String] {
                try sync.contents().objects[table, default: [:]].values.compactMap { $0[column] ?? nil }.sorted()
            }

            func close() async {
                await sync.stop()
                try? store.close()
            }
        }

        static let models = packageRoot.appendingPathComponent("Tests/SharingFixture/Models").path

        /// Two relays of the per-user model in front of one private cluster, a folder for the
        /// devices' stores, and the sync options of these tests: no timer (only a commit of
        /// the device's own, or a signal, makes a running sync pull), quick retries, and quiet
        /// logs (the failures while a relay is gone). The relays stop with the fixture.
        struct TwoRelays {
            let test: TestServer
            let keys = TestKeys()
            let one: RelayProcess
            let two: RelayProcess
            let folder: TemporaryDirectory
            let options: SyncOptions

            init() async throws {
                test = try await TestServer()
                let environment = ["STRATA_RELAY_MODELS": RelayScaleOutTests.models]
                one = try await RelayProcess(test, keys: keys, environment: environment)
                two = try await RelayProcess(test, keys: keys, environment: environment)
                folder = try TemporaryDirectory()
                var quiet = Logger(label: "strata.sync")
                quiet.logLevel = .critical
                options = SyncOptions(pollInterval: .seconds(3600), retryDelays: .milliseconds(50)...(.milliseconds(500)), logger: quiet)
            }

            func stop() {
                one.stop()
                two.stop()
            }
        }

        @Test("Devices move between two relays of one database: nothing lost, nothing applied twice, signals from either")
        func devicesMoveBetweenRelays() async throws {
            let relays = try await TwoRelays()
            defer { relays.stop() }
            let (test, keys, one, two, folder, options) = (relays.test, relays.keys, relays.one, relays.two, relays.folder, relays.options)
            #expect(one.url != two.url)
            let admin = try test.server(schema: StrataModel.schema)
            let alicePhone = try MovingDevice("alice-phone", user: "alice", folder: folder, relay: one, keys: keys, options: options)
            let aliceLaptop = try MovingDevice("alice-laptop", user: "alice", folder: folder, relay: one, keys: keys, options: options)
            let bobPhone = try MovingDevice("bob-phone", user: "bob", folder: folder, relay: one, keys: keys, options: options)
            let devices = [alicePhone, aliceLaptop, bobPhone]
            func settle() async throws {
                for _ in 0..<2 {
                    for device in devices { try await device.sync.sync() }
                }
            }
            func expectEachHoldsItsUsersData(sourceLocation: SourceLocation = #_sourceLocation) async throws {
                for device in devices {
                    let expected = try await admin.contents(user: device.user)
                    let held = try device.sync.contents()
                    #expect(
                        held.difference(from: expected) == nil,
                        "\(device.name) holds other than \(device.user)'s data: \(held.difference(from: expected) ?? "")",
                        sourceLocation: sourceLocation)
                }
            }
            func serverCards() async throws -> [String] {
                try await admin.contents().objects["Card", default: [:]].values.compactMap { $0["title"] ?? nil }.sorted()
            }

            // 1. Everyone through relay 1.
            try await alicePhone.store.write { db in
                let own = try db.insert(Board(ownerID: "alice", title: "Alice private"))
                _ = try db.insert(Card(title: "Alice secret", boardID: own.id))
                let shared = try db.insert(Board(ownerID: "alice", title: "Shared"))
                _ = try db.insert(Member(userID: "bob", boardID: shared.id))
                _ = try db.insert(Card(title: "Shared card", boardID: shared.id))
            }
            try await bobPhone.store.write { db in
                let own = try db.insert(Board(ownerID: "bob", title: "Bob private"))
                _ = try db.insert(Card(title: "Bob card", boardID: own.id))
            }
            try await settle()
            try await expectEachHoldsItsUsersData()

            // 2. Alice's laptop moves to relay 2 while the others stay on relay 1: both relays
            // serve the same data at once, and a change pushed through one signals the devices
            // connected to the other.
            try await aliceLaptop.move(to: two)
            await bobPhone.sync.start()
            #expect(try await eventually { one.log.contains("GET /v1/signals 200") })
            try await aliceLaptop.store.write { db in
                let shared = try #require(try db.fetchAll(Board.self).first { $0.title == "Shared" })
                _ = try db.insert(Card(title: "From the laptop", boardID: shared.id))
            }
            try await aliceLaptop.sync.sync()
            #expect(
                try await eventually(.seconds(30)) { try bobPhone.values("Card").contains("From the laptop") },
                "a push through relay 2 did not reach Bob on relay 1: \(one.log.suffix(2000))")

            // 3. A push whose answer is lost: Alice's phone renames the shared card and adds one;
            // relay 1 applies the push, the answer never arrives.
            alicePhone.server.loseNextAnswer()
            try await alicePhone.store.write { db in
                var card = try #require(try db.fetchAll(Card.self).first { $0.title == "Shared card" })
                card.title = "Renamed by Alice"
                _ = try db.update(card)
                _ = try db.insert(Card(title: "Lost answer", boardID: card.boardID))
            }
            await #expect(throws: URLError.self) { try await alicePhone.sync.push() }
            let lost = try #require(alicePhone.server.lostPush)
            #expect(try await serverCards().contains("Lost answer"))
            // Bob, on relay 1, gets the rename and renames the card again.
            #expect(try await eventually(.seconds(30)) { try bobPhone.values("Card").contains("Renamed by Alice") })
            try await bobPhone.store.write { db in
                var card = try #require(try db.fetchAll(Card.self).first { $0.title == "Renamed by Alice" })
                card.title = "Renamed by Bob"
                _ = try db.update(card)
            }
            #expect(try await eventually(.seconds(30)) { try await serverCards().contains("Renamed by Bob") })

            // 4. Relay 1 is killed; its devices move to relay 2 (Bob's with his signals stream).
            one.kill()
            try await bobPhone.move(to: two)
            try await alicePhone.move(to: two)
            await bobPhone.sync.start()
            // Alice's phone sends the push of the lost answer again, to relay 2: the recorded
            // answer comes back, and nothing is applied again (Bob's rename stays).
            try await alicePhone.sync.sync()
            let resent = try #require(alicePhone.server.answers.first)
            #expect(resent.push == lost)
            #expect(resent.isRepeat)
            #expect(resent.refused.isEmpty)
            #expect(try await serverCards().filter { $0.hasPrefix("Renamed by") } == ["Renamed by Bob"])

            // 5. Signals from relay 2 wake Bob's phone, which moved there.
            #expect(try await eventually { two.log.contains("GET /v1/signals 200") })
            try await aliceLaptop.store.write { db in
                let shared = try #require(try db.fetchAll(Board.self).first { $0.title == "Shared" })
                _ = try db.insert(Card(title: "After the move", boardID: shared.id))
            }
            try await aliceLaptop.sync.sync()
            #expect(
                try await eventually(.seconds(30)) { try bobPhone.values("Card").contains("After the move") },
                "relay 2's signals did not wake Bob's phone: \(two.log.suffix(2000))")

            // 6. Everyone keeps writing through relay 2, then settles.
            try await bobPhone.store.write { db in
                let own = try #require(try db.fetchAll(Board.self).first { $0.title == "Bob private" })
                _ = try db.insert(Card(title: "Bob after the move", boardID: own.id))
            }
            try await alicePhone.store.write { db in
                let own = try #require(try db.fetchAll(Board.self).first { $0.title == "Alice private" })
                _ = try db.insert(Card(title: "Phone after the move", boardID: own.id))
            }
            await bobPhone.sync.stop()
            try await settle()
            try await expectEachHoldsItsUsersData()

            // Each card once on the server and on each device of its users; no conflict; a push
            // answered as a repeat is one the device had sent before (the lost answer, and any
            // answer of relay 1 that was on its way when it was killed).
            let all = [
                "After the move", "Alice secret", "Bob after the move", "Bob card", "From the laptop", "Lost answer",
                "Phone after the move", "Renamed by Bob",
            ]
            #expect(try await serverCards() == all)
            let shared = ["After the move", "From the laptop", "Lost answer", "Renamed by Bob"]
            for alice in [alicePhone, aliceLaptop] {
                #expect(try alice.values("Card") == all.filter { !$0.hasPrefix("Bob") })
            }
            #expect(try bobPhone.values("Card") == (shared + ["Bob after the move", "Bob card"]).sorted())
            for device in devices {
                let conflicts = try device.sync.conflicts()
                #expect(conflicts.isEmpty, "\(device.name): \(conflicts)")
                let sends = device.sends
                for answer in device.answers where answer.isRepeat {
                    #expect(sends.filter { $0 == answer.push }.count >= 2, "\(device.name): \(answer.push) repeats no earlier delivery")
                }
                #expect(Set(device.answers.map(\.push)) == Set(sends), "\(device.name): a push sent and never answered")
            }
            #expect(alicePhone.answers.filter(\.isRepeat).map(\.push).contains(lost))
            // The database recorded each push once.
            let pushes = try await test.psql("SELECT count(*), count(DISTINCT push) FROM strata_sync_pushes")
            let sent = Set(devices.flatMap(\.sends))
            #expect(pushes.trimmingCharacters(in: .whitespacesAndNewlines) == "\(sent.count)|\(sent.count)")

            for device in devices { await device.close() }
            await admin.close()
        }

        @Test("A relay killed under load: devices given both relays move to the other by themselves; all converge, nothing lost or repeated")
        func devicesFailOverWhenARelayIsKilled() async throws {
            let relays = try await TwoRelays()
            defer { relays.stop() }
            let (test, keys, one, two, folder, options) = (relays.test, relays.keys, relays.one, relays.two, relays.folder, relays.options)
            let admin = try test.server(schema: StrataModel.schema)
            // Each device is given both relays, relay 1 first: an app's one line.
            let devices = try [("alice-phone", "alice"), ("alice-laptop", "alice"), ("bob-phone", "bob")].map { name, user in
                let store = try Store(schema: StrataModel.schema, path: folder.path("\(name).sqlite"))
                let server = RelaySyncServer(urls: [one.url, two.url], requestTimeout: .seconds(10)) { try await keys.token(user: user) }
                return (name: name, user: user, store: store, server: server, sync: try StoreSync(store: store, server: server, options: options))
            }
            func serverCards() async throws -> [String] {
                try await admin.contents().objects["Card", default: [:]].values.compactMap { $0["title"] ?? nil }.sorted()
            }
            try await devices[0].store.write { db in
                let shared = try db.insert(Board(ownerID: "alice", title: "Shared"))
                _ = try db.insert(Member(userID: "bob", boardID: shared.id))
                _ = try db.insert(Board(ownerID: "alice", title: "Alice private"))
            }
            try await devices[2].store.write { db in _ = try db.insert(Board(ownerID: "bob", title: "Bob private")) }
            for _ in 0..<2 {
                for device in devices { try await device.sync.sync() }
            }
            for device in devices { await device.sync.start() }
            #expect(try await eventually { one.log.components(separatedBy: "GET /v1/signals 200").count > 3 })

            // Every device writes a card every few milliseconds, on its user's boards (the
            // shared one every other time); relay 1 is killed halfway.
            var written: [String] = []
            for round in 0..<40 {
                if round == 20 { one.kill() }
                for device in devices {
                    let title = "\(device.name) \(round)"
                    written.append(title)
                    try await device.store.write { db in
                        let boards = try db.fetchAll(Board.self)
                        let own = device.user == "alice" ? "Alice private" : "Bob private"
                        let board = try #require(boards.first { $0.title == (round.isMultiple(of: 2) ? "Shared" : own) })
                        _ = try db.insert(Card(title: title, boardID: board.id))
                    }
                }
                try await Task.sleep(for: .milliseconds(15))
            }
            #expect(
                try await eventually(.seconds(60)) { try await serverCards().count >= written.count },
                "the background syncs did not push every card through relay 2: \(two.log.suffix(2000))")
            for device in devices { await device.sync.stop() }
            for _ in 0..<2 {
                for device in devices { try await device.sync.sync() }
            }

            // Every card once on the server, each device exactly its user's data, no conflict,
            // every device on relay 2, and each push recorded once.
            #expect(try await serverCards() == written.sorted())
            for device in devices {
                #expect(device.server.url == two.url, "\(device.name) still syncs through relay 1")
                let expected = try await admin.contents(user: device.user)
                let held = try device.sync.contents()
                #expect(held.difference(from: expected) == nil, "\(device.name): \(held.difference(from: expected) ?? "")")
                let conflicts = try device.sync.conflicts()
                #expect(conflicts.isEmpty, "\(device.name): \(conflicts)")
            }
            let bobCards = try devices[2].sync.contents().objects["Card", default: [:]].values.compactMap { $0["title"] ?? nil }
            #expect(bobCards.count == written.filter { !$0.hasPrefix("alice") || Int($0.split(separator: " ")[1])!.isMultiple(of: 2) }.count)
            let pushes = try await test.psql("SELECT count(*) = count(DISTINCT push) FROM strata_sync_pushes")
            #expect(pushes.trimmingCharacters(in: .whitespacesAndNewlines) == "t")
            for device in devices { try? device.store.close() }
            await admin.close()
        }

        @Test("A relay killed with SIGKILL while a push waits in the database: the push, sent again to another relay, is applied once")
        func aRelayKilledMidPush() async throws {
            let relays = try await TwoRelays()
            defer { relays.stop() }
            let (test, keys, one, two, folder) = (relays.test, relays.keys, relays.one, relays.two, relays.folder)
            let device = try MovingDevice(
                "alice-phone", user: "alice", folder: folder, relay: one, keys: keys, options: SyncOptions(logger: relays.options.logger))
            try await device.store.write { db in _ = try db.insert(Board(ownerID: "alice", title: "Before")) }
            try await device.sync.sync()

            // A session of another service locks the table of recorded pushes: relay 1's push
            // waits there, in its transaction, when relay 1 is killed.
            let logger = Logger(label: "strata.tests")
            let holder = try await PostgresConnection.connect(configuration: test.configuration, id: 1, logger: logger)
            try await holder.query("BEGIN", logger: logger)
            try await holder.query("LOCK TABLE strata_sync_pushes IN ACCESS EXCLUSIVE MODE", logger: logger)
            try await device.store.write { db in
                let board = try #require(try db.fetchAll(Board.self).first)
                _ = try db.insert(Card(title: "In flight", boardID: board.id))
            }
            let sync = device.sync
            let push = Task { try await sync.push() }
            let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            #expect(try await eventually { try await test.psql(waiting) == "1\n" })
            one.kill()
            try await holder.query("ROLLBACK", logger: logger)
            try await holder.close()
            await #expect(throws: (any Error).self) { try await push.value }

            // The device moves to relay 2 and sends the same push: relay 1's transaction never
            // committed, so it is applied now, once.
            try await device.move(to: two)
            try await device.sync.sync()
            let answer = try #require(device.answers.first)
            #expect(!answer.isRepeat)
            #expect(answer.refused.isEmpty)
            #expect(try await test.psql(#"SELECT title FROM "Card""#) == "In flight\n")
            #expect(try await test.psql("SELECT count(*) FROM strata_sync_pushes WHERE push = '\(answer.push.uuidString.lowercased())'") == "1\n")
            let admin = try test.server(schema: StrataModel.schema)
            let expected = try await admin.contents(user: "alice")
            #expect(try device.sync.contents().difference(from: expected) == nil)
            #expect(try device.sync.conflicts().isEmpty)
            await admin.close()
            await device.close()
        }

        @Test("A database restored from an older backup: a cursor beyond its log pulls nothing; a new server id stops the devices")
        func aRestoredBackup() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let environment = ["STRATA_RELAY_MODELS": Self.models]
            let folder = try TemporaryDirectory()
            var relay = try await RelayProcess(test, keys: keys, environment: environment)
            let device = try MovingDevice("alice-phone", user: "alice", folder: folder, relay: relay, keys: keys, options: SyncOptions())
            try await device.store.write { db in _ = try db.insert(Board(ownerID: "alice", title: "Before the backup")) }
            try await device.sync.sync()

            // The backup: a copy of the database (no connection may be open to it meanwhile).
            relay.stop()
            let backup = "b_" + test.database
            try await test.cluster.psql("CREATE DATABASE \(backup) TEMPLATE \(test.database)")
            relay = try await RelayProcess(test, keys: keys, environment: environment)
            try await device.move(to: relay)
            try await device.store.write { db in _ = try db.insert(Board(ownerID: "alice", title: "After the backup")) }
            try await device.sync.sync()
            let cursor = try #require(Int64(await test.psql("SELECT max(seq) FROM strata_sync_log").trimmingCharacters(in: .whitespacesAndNewlines)))
            relay.stop()

            // The backup restored: its log ends before the device's cursor. A pull from beyond it
            // answers nothing and keeps the cursor, so the device would not notice.
            let restored = try await RelayProcess(test, keys: keys, environment: environment.merging(["STRATA_RELAY_PG_DATABASE": backup]) { $1 })
            defer { restored.stop() }
            let lastRestored = try #require(Int64(
                await test.cluster.psql("SELECT max(seq) FROM strata_sync_log", database: backup).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(lastRestored < cursor)
            let server = RelaySyncServer(url: restored.url) { try await keys.token(user: "alice") }
            let answer = try await server.pull(SyncPullRequest(device: device.sync.device, cursor: cursor, limit: 100))
            #expect(answer.cursor == cursor)
            #expect(answer.changes.isEmpty)
            #expect(!answer.hasMore)

            // What the article says to do after a restore: give the database a new server id.
            // The device's next sync stops, before it pushes or pulls anything.
            try await test.cluster.psql("UPDATE strata_sync_meta SET value = gen_random_uuid()::text WHERE key = 'server'", database: backup)
            try await device.move(to: restored)
            await #expect {
                try await device.sync.sync()
            } throws: { error in
                guard case .anotherServer = error as? SyncModelError else { return false }
                return true
            }
            let boards = try await test.cluster.psql("SELECT title FROM \"Board\" ORDER BY title", database: backup)
            #expect(boards.trimmingCharacters(in: .whitespacesAndNewlines) == "Before the backup")
            await device.close()
        }
    }
}
