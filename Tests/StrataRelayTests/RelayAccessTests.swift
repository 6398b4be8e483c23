import Foundation
import StrataRelay
import StrataSharingFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// Per-user data (the model's `access:`, Tests/SharingFixture/Models/Sharing.yaml) through
    /// `strata-relay`, a real process, and a private PostgreSQL cluster: Alice on two devices,
    /// Bob on one, a board Alice shares with Bob. What each user holds is checked on every
    /// device's store, against the server's rows of exactly that user's data and by name.
    @Suite("Per-user data through the relay")
    struct RelayAccessTests {
        /// A device of one user: a store file of its own, syncing through the relay.
        struct UserDevice {
            let name: String
            let user: String
            let store: Store
            let sync: StoreSync

            init(_ name: String, user: String, folder: TemporaryDirectory, relay: RelayProcess, keys: TestKeys) throws {
                self.name = name
                self.user = user
                store = try Store(schema: StrataModel.schema, path: folder.path("\(name).sqlite"))
                sync = try StoreSync(store: store, server: RelaySyncServer(url: relay.url) { try await keys.token(user: user) })
            }

            /// The values of `column` of the objects of `table` this device holds.
            func values(_ table: String, _ column: String = "title") throws -> Set<String> {
                Set(try sync.contents().objects[table, default: [:]].values.compactMap { $0[column] ?? nil })
            }

            func close() async {
                await sync.stop()
                try? store.close()
            }
        }

        /// The relay, the server seen with the database's credentials, and the devices.
        struct World {
            let test: TestServer
            let keys: TestKeys
            let relay: RelayProcess
            let admin: PostgresSyncServer
            let folder: TemporaryDirectory
            let alicePhone: UserDevice
            let aliceLaptop: UserDevice
            let bobPhone: UserDevice
            var devices: [UserDevice] { [alicePhone, aliceLaptop, bobPhone] }

            init() async throws {
                test = try await TestServer()
                keys = TestKeys()
                relay = try await RelayProcess(
                    test, keys: keys,
                    environment: ["STRATA_RELAY_MODELS": packageRoot.appendingPathComponent("Tests/SharingFixture/Models").path])
                admin = try test.server(schema: StrataModel.schema)
                folder = try TemporaryDirectory()
                alicePhone = try UserDevice("alice-phone", user: "alice", folder: folder, relay: relay, keys: keys)
                aliceLaptop = try UserDevice("alice-laptop", user: "alice", folder: folder, relay: relay, keys: keys)
                bobPhone = try UserDevice("bob-phone", user: "bob", folder: folder, relay: relay, keys: keys)
            }

            /// Alice: a private board with a card, its comment and a label; a board shared with
            /// Bob with a card and a comment; a note. Bob: a private board with a card; a note.
            func populate() async throws {
                try await alicePhone.store.write { db in
                    let own = try db.insert(Board(ownerID: "alice", title: "Alice private"))
                    let secret = try db.insert(Card(title: "Alice secret", boardID: own.id))
                    _ = try db.insert(Comment(text: "Alice comment", cardID: secret.id))
                    let label = try db.insert(Label(name: "urgent"))
                    try db.link(secret.id, Card.labels, label.id)
                    let shared = try db.insert(Board(ownerID: "alice", title: "Shared"))
                    _ = try db.insert(Member(userID: "bob", boardID: shared.id))
                    let card = try db.insert(Card(title: "Shared card", boardID: shared.id))
                    _ = try db.insert(Comment(text: "Shared comment", cardID: card.id))
                    try db.link(card.id, Card.labels, label.id)
                    _ = try db.insert(Note(ownerID: "alice", text: "Alice note"))
                }
                try await bobPhone.store.write { db in
                    let own = try db.insert(Board(ownerID: "bob", title: "Bob private"))
                    _ = try db.insert(Card(title: "Bob card", boardID: own.id))
                    _ = try db.insert(Note(ownerID: "bob", text: "Bob note"))
                }
                try await settle()
            }

            /// Every device syncs, twice round.
            func settle() async throws {
                for _ in 0..<2 {
                    for device in devices { try await device.sync.sync() }
                }
            }

            /// Each device holds exactly its user's data: the server's rows of it, value for
            /// value, and not one object or link more.
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

            /// The id of the object of `table` whose `column` is `value`, on the server.
            func id(_ table: String, _ value: String, column: String = "title") async throws -> UUID {
                let objects = try await admin.contents().objects[table, default: [:]]
                return try #require(objects.first { $0.value[column] == value }?.key, "no \(table) \(value)")
            }

            func close() async {
                for device in devices { await device.close() }
                await admin.close()
                relay.stop()
            }
        }

        /// A push as a device sends it, signed in as `user`: the relay's answer.
        static func push(_ changes: [SyncChange], as user: String, device: UUID, _ world: World) async throws -> SyncPushResult {
            let body = try JSONEncoder().encode(SyncPush(id: UUID(), device: device, changes: changes))
            let answer = try await http(
                "POST", world.relay.url.appendingPathComponent("v1/push"), token: try await world.keys.token(user: user), body: body)
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            return try JSONDecoder().decode(SyncPushResult.self, from: answer.body)
        }

        static let prefix = "outside the user's data: "

        /// The lines of a snapshot, as they arrive.
        final class Lines: @unchecked Sendable {
            private let lock = NSLock()
            private var lines: [SyncPullResult] = []
            func append(_ line: SyncPullResult) { lock.withLock { lines.append(line) } }
            var all: [SyncPullResult] { lock.withLock { lines } }
        }

        @Test("Each user is served exactly their data: their own, what is shared with them, what everyone has")
        func eachUserHoldsTheirData() async throws {
            let world = try await World()
            try await world.populate()
            try await world.expectEachHoldsItsUsersData()
            for alice in [world.alicePhone, world.aliceLaptop] {
                #expect(try alice.values("Board") == ["Alice private", "Shared"])
                #expect(try alice.values("Card") == ["Alice secret", "Shared card"])
                #expect(try alice.values("Note", "text") == ["Alice note"])
                #expect(try alice.values("Label", "name") == ["urgent"])
            }
            let bob = world.bobPhone
            #expect(try bob.values("Board") == ["Bob private", "Shared"])
            #expect(try bob.values("Card") == ["Bob card", "Shared card"])
            #expect(try bob.values("Comment", "text") == ["Shared comment"])
            #expect(try bob.values("Note", "text") == ["Bob note"])
            #expect(try bob.values("Member", "userID") == ["bob"])
            #expect(try bob.values("Label", "name") == ["urgent"])
            // The link of the label with Alice's private card is not Bob's; that with the shared card is.
            #expect(try bob.sync.contents().links.values.reduce(0) { $0 + $1.count } == 1)
            await world.close()
        }

        @Test("An empty store's first sync reads its user's snapshot through the relay: exactly the user's data, links between two of its objects, in lines of the size asked, each with the log position it holds")
        func anEmptyStoreReadsItsUsersSnapshot() async throws {
            let world = try await World()
            try await world.populate()
            guard case .joinTable(let links, let cardColumn, let labelColumn)? = StrataModel.schema.entity(named: "Card")?
                .relationship(named: "labels")?.storage
            else { throw RelayProcess.RelayError("Card.labels is not a many-to-many") }
            // The log's last position: a pull of all of it ends there.
            let position = try await world.admin.pull(SyncPullRequest(device: UUID(), cursor: 0, limit: 1 << 40)).cursor
            for user in ["alice", "bob", "carol"] {
                // The snapshot as a device reads it, two objects or links a line.
                let relay = RelaySyncServer(url: world.relay.url) { try await world.keys.token(user: user) }
                let lines = Lines()
                let offered = try await relay.readSnapshot(batchSize: 2) { batch in
                    lines.append(batch.result)
                    return true
                }
                #expect(offered)
                let results = lines.all
                var read = SyncContents()
                for (index, result) in results.enumerated() {
                    #expect(result.changes.count <= 2, "\(user), line \(index): \(result.changes.count) changes")
                    #expect(result.cursor == position, "\(user), line \(index)")
                    #expect(result.hasMore == (index < results.count - 1), "\(user), line \(index)")
                    for change in result.changes {
                        switch change.kind {
                        case .insert:
                            let id = try #require(change.id)
                            #expect(read.objects[change.table]?[id] == nil, "\(user): \(change.table) \(id) twice")
                            read.objects[change.table, default: [:]][id] = change.values
                        case .link:
                            #expect(change.table == links)
                            let a = try #require(change.link?[cardColumn]), b = try #require(change.link?[labelColumn])
                            read.links[links, default: []].insert("\(a.uuidString.lowercased()) \(b.uuidString.lowercased())")
                        default:
                            Issue.record("\(user): a snapshot holds \(change.kind)")
                        }
                    }
                }
                var expected = try await world.admin.contents(user: user)
                expected.objects = expected.objects.filter { !$0.value.isEmpty }
                expected.links = expected.links.filter { !$0.value.isEmpty }
                #expect(read.difference(from: expected) == nil, "\(user)'s snapshot: \(read.difference(from: expected) ?? "")")
                let cards = Set(read.objects["Card", default: [:]].values.compactMap { $0["title"] ?? nil })
                let expectedCards: Set<String> = ["alice": ["Alice secret", "Shared card"], "bob": ["Bob card", "Shared card"]][user] ?? []
                #expect(cards == expectedCards, "\(user)")
                #expect(read.links[links, default: []].count == ["alice": 2, "bob": 1][user] ?? 0, "\(user)")
            }
            // A new device of each user, its store empty: the sync reads the snapshot, and holds
            // what the user's other devices hold.
            var tablets: [UserDevice] = []
            for user in ["alice", "bob"] {
                let tablet = try UserDevice("\(user)-tablet", user: user, folder: world.folder, relay: world.relay, keys: world.keys)
                let watcher = SnapshotWatcher(RelaySyncServer(url: world.relay.url) { try await world.keys.token(user: user) })
                let sync = try StoreSync(store: tablet.store, server: watcher)
                try await sync.sync()
                #expect(watcher.offered == [true], "\(user)")
                let other = user == "alice" ? world.alicePhone : world.bobPhone
                let held = try sync.contents(), others = try other.sync.contents()
                #expect(held == others, "\(user)'s tablet: \(held.difference(from: others) ?? "")")
                await sync.stop()
                tablets.append(tablet)
            }
            for tablet in tablets { await tablet.close() }
            await world.close()
        }

        @Test("Every way a push could reach outside the user's data is refused with its reason, and changes nothing")
        func pushesOutsideAreRefused() async throws {
            let world = try await World()
            try await world.populate()
            let before = try await world.admin.contents()
            let aliceBoard = try await world.id("Board", "Alice private")
            let shared = try await world.id("Board", "Shared")
            let secret = try await world.id("Card", "Alice secret")
            let bobCard = try await world.id("Card", "Bob card")
            let label = try await world.id("Label", "urgent", column: "name")
            guard case .joinTable(let links, let cardColumn, let labelColumn)? = StrataModel.schema.entity(named: "Card")?
                .relationship(named: "labels")?.storage
            else { throw RelayProcess.RelayError("Card.labels is not a many-to-many") }
            let text = { (id: UUID) in id.uuidString.lowercased() }
            let expected: [(SyncChange, String)] = [
                (SyncChange(kind: .update, table: "Card", id: secret, values: ["title": "mine now"]), "Card \(text(secret)) is not in the user's data"),
                (SyncChange(kind: .delete, table: "Board", id: aliceBoard), "Board \(text(aliceBoard)) is not in the user's data"),
                (SyncChange(kind: .insert, table: "Card", id: UUID(), values: ["title": "planted", "boardID": text(aliceBoard)]),
                 "Card.boardID refers to Board \(text(aliceBoard))"),
                (SyncChange(kind: .insert, table: "Member", id: UUID(), values: ["userID": "bob", "boardID": text(aliceBoard)]),
                 "Member.boardID refers to Board \(text(aliceBoard))"),
                (SyncChange(kind: .insert, table: "Comment", id: UUID(), values: ["text": "hi", "cardID": text(secret)]),
                 "Comment.cardID refers to Card \(text(secret))"),
                (SyncChange(kind: .insert, table: "Note", id: UUID(), values: ["ownerID": "bob", "text": "spy", "cardID": text(secret)]),
                 "Note.cardID refers to Card \(text(secret))"),
                (SyncChange(kind: .update, table: "Card", id: bobCard, values: ["boardID": text(aliceBoard)]),
                 "Card.boardID refers to Board \(text(aliceBoard))"),
                (SyncChange(kind: .link, table: links, link: [cardColumn: secret, labelColumn: label]), "links Card \(text(secret))"),
                (SyncChange(kind: .unlink, table: links, link: [cardColumn: secret, labelColumn: label]), "links Card \(text(secret))"),
                (SyncChange(kind: .insert, table: "Board", id: UUID(), values: ["ownerID": "alice", "title": "Forged"]),
                 "Board.ownerID set to another user's id"),
                (SyncChange(kind: .update, table: "Board", id: shared, values: ["ownerID": "bob"]), "Board.ownerID changed"),
                (SyncChange(kind: .insert, table: "Card", id: secret, values: ["title": "same id", "boardID": text(shared)]),
                 "Card \(text(secret)) exists in another user's data"),
                (SyncChange(kind: .delete, table: "Label", id: label), "it reaches a link to Card \(text(secret))"),
            ]
            let result = try await Self.push(expected.map(\.0), as: "bob", device: UUID(), world)
            #expect(result.refused.map(\.index) == Array(expected.indices))
            for refusal in result.refused where expected.indices.contains(refusal.index) {
                #expect(refusal.reason.hasPrefix(Self.prefix), "\(refusal.reason)")
                #expect(refusal.reason.contains(expected[refusal.index].1), "change \(refusal.index): \(refusal.reason)")
                // Nothing of Alice's private data comes back in a refusal.
                if let values = refusal.serverValues {
                    #expect(values["title"] != "Alice secret" && values["title"] != "Alice private", "\(values)")
                }
            }
            #expect(try await world.admin.contents() == before)

            // A member's own change that reaches outside: recorded in the device's conflict log,
            // and the device takes the server's state back.
            try await world.bobPhone.store.write { db in
                var board = try #require(try db.fetchAll(Board.self).first { $0.title == "Shared" })
                board.ownerID = "bob"
                _ = try db.update(board)
            }
            try await world.settle()
            let conflicts = try world.bobPhone.sync.conflicts()
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.kind == .refusedByServer)
            #expect(conflicts.first?.reason.hasPrefix(Self.prefix + "Board.ownerID changed") == true, "\(conflicts)")
            #expect(try await world.bobPhone.store.fetchAll(Board.self).first { $0.title == "Shared" }?.ownerID == "alice")
            #expect(try await world.admin.contents() == before)
            try await world.expectEachHoldsItsUsersData()
            await world.close()
        }

        @Test("What leaves a user's data leaves their devices; what enters arrives whole")
        func objectsLeaveAndEnter() async throws {
            let world = try await World()
            try await world.populate()
            let bob = world.bobPhone

            // Alice removes Bob from the shared board: the board, its card, comment, member and
            // link leave Bob's phone.
            try await world.alicePhone.store.write { db in
                let member = try #require(try db.fetchAll(Member.self).first { $0.userID == "bob" })
                _ = try db.delete(member)
            }
            try await world.settle()
            try await world.expectEachHoldsItsUsersData()
            #expect(try bob.values("Board") == ["Bob private"])
            #expect(try bob.values("Card") == ["Bob card"])
            #expect(try bob.values("Comment", "text").isEmpty)
            #expect(try bob.values("Member", "userID").isEmpty)

            // She adds him again: all of it arrives, with the label's link.
            try await world.aliceLaptop.store.write { db in
                let board = try #require(try db.fetchAll(Board.self).first { $0.title == "Shared" })
                _ = try db.insert(Member(userID: "bob", boardID: board.id))
            }
            try await world.settle()
            try await world.expectEachHoldsItsUsersData()
            #expect(try bob.values("Board") == ["Bob private", "Shared"])
            #expect(try bob.values("Card") == ["Bob card", "Shared card"])
            #expect(try bob.values("Comment", "text") == ["Shared comment"])
            #expect(try bob.sync.contents().links.values.reduce(0) { $0 + $1.count } == 1)

            // She moves the shared card to her private board: it leaves Bob's phone, with its comment.
            try await world.alicePhone.store.write { db in
                let boards = try db.fetchAll(Board.self)
                var card = try #require(try db.fetchAll(Card.self).first { $0.title == "Shared card" })
                card.boardID = try #require(boards.first { $0.title == "Alice private" }).id
                _ = try db.update(card)
            }
            try await world.settle()
            try await world.expectEachHoldsItsUsersData()
            #expect(try bob.values("Card") == ["Bob card"])
            #expect(try bob.values("Comment", "text").isEmpty)
            #expect(try world.aliceLaptop.values("Card") == ["Alice secret", "Shared card"])

            // A trusted process gives Alice's private board to Bob: it leaves both of Alice's
            // devices, and arrives whole on Bob's phone (its cards, their comments and links).
            try await world.test.psql(#"UPDATE "Board" SET "ownerID" = 'bob' WHERE title = 'Alice private'"#)
            try await world.settle()
            try await world.expectEachHoldsItsUsersData()
            for alice in [world.alicePhone, world.aliceLaptop] {
                #expect(try alice.values("Board") == ["Shared"])
                #expect(try alice.values("Card").isEmpty)
                #expect(try alice.values("Comment", "text").isEmpty)
            }
            #expect(try bob.values("Board") == ["Alice private", "Bob private", "Shared"])
            #expect(try bob.values("Card") == ["Alice secret", "Bob card", "Shared card"])
            #expect(try bob.values("Comment", "text") == ["Alice comment", "Shared comment"])
            #expect(try bob.sync.contents().links.values.reduce(0) { $0 + $1.count } == 2)
            await world.close()
        }

        @Test("A user's pull leaves out what others made outside the user's data after its cursor; what left it still comes as deleted")
        func othersNewObjectsStayOut() async throws {
            let world = try await World()
            try await world.populate()
            let bob = RelaySyncServer(url: world.relay.url) { try await world.keys.token(user: "bob") }
            let device = UUID()
            var cursor = try await bob.pull(SyncPullRequest(device: device, cursor: 0, limit: 10_000)).cursor
            func titles(_ changes: [SyncChange], _ kind: SyncChange.Kind) -> [String] {
                changes.filter { $0.kind == kind && $0.table == "Card" }.compactMap { $0.values["title"] ?? nil }.sorted()
            }
            func deletedCards(_ changes: [SyncChange]) -> Int { changes.filter { $0.kind == .delete && $0.table == "Card" }.count }
            /// Alice moves the card `title` to her private board, and syncs.
            func moveToAlicesBoard(_ title: String) async throws {
                try await world.alicePhone.store.write { db in
                    let own = try #require(try db.fetchAll(Board.self).first { $0.title == "Alice private" })
                    var card = try #require(try db.fetchAll(Card.self).first { $0.title == title })
                    card.boardID = own.id
                    _ = try db.update(card)
                }
                try await world.alicePhone.sync.sync()
            }

            // Alice makes cards on her private board, and one on the board she shares: Bob's
            // pull names the shared one only (it would have named the others as deleted).
            try await world.alicePhone.store.write { db in
                let boards = try db.fetchAll(Board.self)
                let own = try #require(boards.first { $0.title == "Alice private" }), shared = try #require(boards.first { $0.title == "Shared" })
                for index in 0..<5 { _ = try db.insert(Card(title: "Private \(index)", boardID: own.id)) }
                _ = try db.insert(Card(title: "Shared new", boardID: shared.id))
                // Made and moved out at once: Bob never held it.
                _ = try db.insert(Card(title: "Briefly shared", boardID: shared.id))
            }
            try await world.alicePhone.sync.sync()
            try await moveToAlicesBoard("Briefly shared")
            var answer = try await bob.pull(SyncPullRequest(device: device, cursor: cursor, limit: 10_000))
            #expect(titles(answer.changes, .insert) == ["Shared new"])
            #expect(deletedCards(answer.changes) == 0, "no card of Alice's private board named: \(answer.changes)")
            cursor = answer.cursor

            // She moves a card Bob held (made before his cursor) to her private board: his pull
            // names it as deleted.
            try await moveToAlicesBoard("Shared new")
            answer = try await bob.pull(SyncPullRequest(device: device, cursor: cursor, limit: 10_000))
            #expect(deletedCards(answer.changes) == 1 && titles(answer.changes, .insert).isEmpty, "\(answer.changes)")

            // And Bob's phone, syncing all along, holds exactly his data.
            try await world.settle()
            try await world.expectEachHoldsItsUsersData()
            await world.close()
        }

        @Test("A server made before its log marked inserts: pulls answer as before, until a device's hello extends the log")
        func aServerMadeBeforeTheLogMarkedInserts() async throws {
            let world = try await World()
            try await world.populate()
            // The log and its function as an earlier version made them.
            try await world.test.psql("""
                ALTER TABLE strata_sync_log DROP COLUMN created;
                CREATE OR REPLACE FUNCTION strata_sync_log_object() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  PERFORM pg_advisory_xact_lock(51730911);
                  INSERT INTO strata_sync_log (tbl, id, origin) VALUES (TG_TABLE_NAME,
                    (CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END ->> TG_ARGV[0])::uuid,
                    NULLIF(current_setting('strata.device', true), ''));
                  PERFORM pg_notify('strata_sync', '');
                  RETURN NULL;
                END $$;
                """)
            let models = ["STRATA_RELAY_MODELS": packageRoot.appendingPathComponent("Tests/SharingFixture/Models").path]
            let existing = try await RelayProcess(
                world.test, keys: world.keys, environment: models.merging(["STRATA_RELAY_SCHEMA_POLICY": "requireExisting"]) { $1 })
            let bob = RelaySyncServer(url: existing.url) { try await world.keys.token(user: "bob") }
            let device = UUID()
            func deletedCards(after cursor: Int64) async throws -> (count: Int, cursor: Int64) {
                let answer = try await bob.pull(SyncPullRequest(device: device, cursor: cursor, limit: 10_000))
                return (answer.changes.filter { $0.kind == .delete && $0.table == "Card" }.count, answer.cursor)
            }
            // Written by a trusted process (the running relay of `world` already read the log
            // as it was before the downgrade above).
            func alicesPrivateCards(_ count: Int, round: Int) async throws {
                try await world.test.psql("""
                    INSERT INTO "Card" (id, title, done, "boardID") SELECT gen_random_uuid(), 'Private \(round).' || g, false, b.id \
                    FROM "Board" b, generate_series(1, \(count)) g WHERE b.title = 'Alice private'
                    """)
            }
            var cursor = try await deletedCards(after: 0).cursor
            // A relay that may not extend the server: pulls work, others' new objects named as before.
            try await alicesPrivateCards(3, round: 1)
            var answer = try await deletedCards(after: cursor)
            #expect(answer.count == 3, "the log does not mark inserts: named as deleted, as before")
            cursor = answer.cursor
            // A relay that may: a device's hello extends the log, and new objects stay out.
            let extending = try await RelayProcess(world.test, keys: world.keys, environment: models)
            let tablet = try UserDevice("bob-tablet", user: "bob", folder: world.folder, relay: extending, keys: world.keys)
            try await tablet.sync.sync()
            #expect(try await world.test.psql("SELECT count(*) FROM pg_attribute WHERE attrelid = 'strata_sync_log'::regclass AND attname = 'created'")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "1")
            try await alicesPrivateCards(3, round: 2)
            answer = try await deletedCards(after: cursor)
            #expect(answer.count == 0, "the log marks inserts: others' new objects left out")
            try await world.settle()
            try await world.expectEachHoldsItsUsersData()
            await tablet.close()
            _ = existing.stop()
            _ = extending.stop()
            await world.close()
        }

        /// The signals one user's stream received (the first is `ready`).
        final class SignalCount: @unchecked Sendable {
            private let lock = NSLock()
            private var value = 0
            private var task: Task<Void, Never>?

            init(_ world: World, user: String) async throws {
                let stream = try await RelaySyncServer(url: world.relay.url) { try await world.keys.token(user: user) }.changeSignals()
                task = Task {
                    do {
                        for try await _ in stream { self.lock.withLock { self.value += 1 } }
                    } catch {}
                }
            }

            var count: Int { lock.withLock { value } }
            func cancel() { task?.cancel() }
        }

        /// A change signals the devices of the users who may read it, not every connected
        /// device; a change that may take an object out of someone's data (a deletion, a
        /// member removed, a card moved) signals everyone. Each step waits for the signal that
        /// must come, then long enough for one that must not to have come too.
        @Test("A change signals the users who may read it; one that may take an object out of someone's data signals everyone")
        func signalsGoToTheUsersAChangeConcerns() async throws {
            let world = try await World()
            try await world.populate()
            let alice = try await SignalCount(world, user: "alice")
            let bob = try await SignalCount(world, user: "bob")
            let carol = try await SignalCount(world, user: "carol")  // no data at all
            #expect(try await eventually { alice.count == 1 && bob.count == 1 && carol.count == 1 }, "each stream starts with ready")
            func expectSignals(alice a: Int, bob b: Int, carol c: Int, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                let arrived = try await eventually(.seconds(20)) { alice.count >= a && bob.count >= b && carol.count >= c }
                try await Task.sleep(for: .milliseconds(700))
                #expect(
                    arrived && alice.count == a && bob.count == b && carol.count == c,
                    "\(step): alice \(alice.count), bob \(bob.count), carol \(carol.count); expected \(a), \(b), \(c)",
                    sourceLocation: sourceLocation)
            }

            // A card on Alice's private board: Alice only.
            try await world.alicePhone.store.write { db in
                let own = try #require(try db.fetchAll(Board.self).first { $0.title == "Alice private" })
                _ = try db.insert(Card(title: "Private again", boardID: own.id))
            }
            try await world.alicePhone.sync.push()
            try await expectSignals(alice: 2, bob: 1, carol: 1, "a card on Alice's private board")

            // A comment on the shared card: Alice and Bob (a member).
            try await world.bobPhone.store.write { db in
                let card = try #require(try db.fetchAll(Card.self).first { $0.title == "Shared card" })
                _ = try db.insert(Comment(text: "From Bob", cardID: card.id))
            }
            try await world.bobPhone.sync.push()
            try await expectSignals(alice: 3, bob: 2, carol: 1, "a comment on the shared card")

            // Bob's note: Bob only.
            try await world.bobPhone.store.write { db in _ = try db.insert(Note(ownerID: "bob", text: "Bob again")) }
            try await world.bobPhone.sync.push()
            try await expectSignals(alice: 3, bob: 3, carol: 1, "Bob's note")

            // A deletion: everyone (what left may have been anyone's).
            try await world.alicePhone.store.write { db in
                _ = try db.delete(try #require(try db.fetchAll(Card.self).first { $0.title == "Private again" }))
            }
            try await world.alicePhone.sync.push()
            try await expectSignals(alice: 4, bob: 4, carol: 2, "a deletion")

            // Bob removed from the shared board: everyone, Bob included, whose phone then drops it.
            try await world.alicePhone.store.write { db in
                _ = try db.delete(try #require(try db.fetchAll(Member.self).first { $0.userID == "bob" }))
            }
            try await world.alicePhone.sync.push()
            try await expectSignals(alice: 5, bob: 5, carol: 3, "a member removed")
            try await world.settle()
            try await world.expectEachHoldsItsUsersData()
            #expect(try world.bobPhone.values("Board") == ["Bob private"])

            // Another service's write (no device): everyone.
            try await world.test.psql(#"UPDATE "Note" SET text = 'edited by a service' WHERE text = 'Bob again'"#)
            try await expectSignals(alice: 6, bob: 6, carol: 4, "another service's write")
            for count in [alice, bob, carol] { count.cancel() }
            await world.close()
        }

        @Test("The relay reads the model's access rules from its YAML as the generator writes them")
        func theAccessRulesFromYAMLAreTheGeneratedOnes() throws {
            let loaded = try RelayModel.load(paths: [packageRoot.appendingPathComponent("Tests/SharingFixture/Models").path])
            #expect(loaded == StrataModel.schema)
            #expect(loaded.entity(named: "Board")?.access == .users(owner: "ownerID", members: .init(relationship: "members", attribute: "userID")))
            #expect(loaded.entity(named: "Comment")?.access == .through("card"))
            #expect(loaded.entity(named: "Label")?.access == .everyone)
        }

        @Test("A device id belongs to the user who first synced with it: another user's token is refused with 403")
        func aDeviceIsBoundToItsUser() async throws {
            let world = try await World()
            try await world.alicePhone.sync.sync()  // the server's tables
            let device = UUID()
            let body = try JSONEncoder().encode(SyncPullRequest(device: device, cursor: 0, limit: 100))
            let url = world.relay.url.appendingPathComponent("v1/pull")
            let first = try await http("POST", url, token: try await world.keys.token(user: "alice"), body: body)
            #expect(first.status == 200)
            let other = try await http("POST", url, token: try await world.keys.token(user: "bob"), body: body)
            #expect(other.status == 403)
            #expect(other.refusal?["error"] == "device_of_another_user")
            let push = try JSONEncoder().encode(SyncPush(id: UUID(), device: device, changes: []))
            let pushed = try await http("POST", world.relay.url.appendingPathComponent("v1/push"), token: try await world.keys.token(user: "bob"), body: push)
            #expect(pushed.status == 403)
            #expect(try await http("POST", url, token: try await world.keys.token(user: "alice"), body: body).status == 200)
            await world.close()
        }
    }
}
