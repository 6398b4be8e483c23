import Foundation
import Synchronization
import StrataSyncFixture
import StrataTestSupport
import Testing

/// The device's side of the sync against ``MemorySyncServer``: the push, the pull and the
/// applier, with faults the real server cannot be made to show on demand (an answer lost
/// after the push was applied), in a few milliseconds a test. The same exchanges against
/// PostgreSQL are the other sync suites'; this one never replaces them.
@Suite("The device against an in-memory server")
struct MemoryServerTests {
    struct MemoryDevice {
        let store: Store
        let sync: StoreSync

        init(_ path: String, _ server: MemorySyncServer, options: SyncOptions = SyncOptions()) throws {
            store = try Store(schema: StrataModel.schema, path: path)
            sync = try StoreSync(store: store, server: server, options: options)
        }

        func close() async {
            await sync.stop()
            try? store.close()
        }
    }

    func expectEqual(_ devices: [MemoryDevice], _ server: MemorySyncServer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let contents = await server.contents()
        for (index, device) in devices.enumerated() {
            let difference = try device.sync.contents().difference(from: contents)
            #expect(difference == nil, "device \(index) differs from the server: \(difference ?? "")", sourceLocation: sourceLocation)
        }
    }

    @Test("changes of either device reach the other: inserts, edits per column, links, deletes")
    func changesReachTheOtherDevice() async throws {
        let server = MemorySyncServer(schema: StrataModel.schema), folder = try TemporaryDirectory()
        let a = try MemoryDevice(folder.path("a.sqlite"), server), b = try MemoryDevice(folder.path("b.sqlite"), server)
        defer { Task { await a.close(); await b.close() } }

        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox", position: 1))
            let card = try db.insert(Card(title: "Write", points: 3, boardID: board.id))
            let label = try db.insert(Label(name: "urgent"))
            try db.link(card.id, Card.labels, label.id)
        }
        for device in [a, b, a] { _ = try await device.sync.sync() }
        #expect(try await b.store.fetchAll(Card.self).map(\.title) == ["Write"])
        #expect(try await b.store.fetchAll(Label.self).map(\.name) == ["urgent"])
        try await expectEqual([a, b], server)

        // Offline, each edits another column of the card; B also unlinks and deletes the label.
        try await a.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.title = "Written"
            _ = try db.update(card)
        }
        try await b.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.points = 8
            _ = try db.update(card)
            let label = try db.fetchAll(Label.self)[0]
            try db.unlink(card.id, Card.labels, label.id)
            _ = try db.delete(label)
        }
        for device in [a, b, a] { _ = try await device.sync.sync() }
        for device in [a, b] {
            let card = try await device.store.fetchAll(Card.self)[0]
            #expect(card.title == "Written")
            #expect(card.points == 8)
            #expect(try await device.store.fetchAll(Label.self).isEmpty)
        }
        try await expectEqual([a, b], server)
    }

    @Test("a push whose answer was lost is sent again and applied once")
    func aLostAnswerIsAppliedOnce() async throws {
        let server = MemorySyncServer(schema: StrataModel.schema), folder = try TemporaryDirectory()
        let a = try MemoryDevice(folder.path("a.sqlite"), server), b = try MemoryDevice(folder.path("b.sqlite"), server)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            for i in 0..<3 { _ = try db.insert(Card(title: "card \(i)", boardID: board.id)) }
        }
        await server.loseNextAnswers(1)
        await #expect(throws: MemorySyncServer.LostAnswer.self) { try await a.sync.sync() }
        #expect(await server.appliedPushes == 1)
        // The push is still in the outbox: sent again, answered from the record.
        _ = try await a.sync.sync()
        #expect(await server.appliedPushes == 1, "the repeated push was applied again")
        _ = try await b.sync.sync()
        #expect(try await b.store.fetchAll(Card.self).map(\.title).sorted() == ["card 0", "card 1", "card 2"])
        try await expectEqual([a, b], server)
    }

    @Test("an edit of an object deleted on the server gives way to the deletion, and is recorded")
    func anEditOfADeletedObjectGivesWay() async throws {
        let server = MemorySyncServer(schema: StrataModel.schema), folder = try TemporaryDirectory()
        let a = try MemoryDevice(folder.path("a.sqlite"), server), b = try MemoryDevice(folder.path("b.sqlite"), server)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in _ = try db.insert(Card(title: "Card", boardID: try db.insert(Board(name: "Inbox")).id)) }
        for device in [a, b] { _ = try await device.sync.sync() }
        try await a.store.write { db in _ = try db.delete(try db.fetchAll(Card.self)[0]) }
        try await b.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.title = "Edited"
            _ = try db.update(card)
        }
        _ = try await a.sync.sync()
        _ = try await b.sync.sync()
        #expect(try await b.store.fetchAll(Card.self).isEmpty, "the deletion wins")
        #expect(try b.sync.conflicts().contains { $0.table == "Card" }, "the refused edit is in the conflict log")
        try await expectEqual([a, b], server)
    }

    @Test("a pull of many small batches is applied whole: the store moves from one server state to the last")
    func aPullOfManyBatchesIsOneTransaction() async throws {
        let server = MemorySyncServer(schema: StrataModel.schema), folder = try TemporaryDirectory()
        var options = SyncOptions()
        options.pullBatchSize = 3
        let a = try MemoryDevice(folder.path("a.sqlite"), server)
        let b = try MemoryDevice(folder.path("b.sqlite"), server, options: options)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            for i in 0..<20 { _ = try db.insert(Card(title: "card \(i)", boardID: board.id)) }
        }
        _ = try await a.sync.sync()
        // Every commit B's store sees while it pulls: one, holding every card.
        let counts = Mutex<[Int]>([])
        let observation = b.store.observeCommits(reading: { _, db in
            let count = (try? Card.fetchCount(db)) ?? -1
            counts.withLock { $0.append(count) }
        })
        _ = try await b.sync.sync()
        observation.cancel()
        #expect(counts.withLock { $0 } == [20], "the pull's commits: \(counts.withLock { $0 })")
        try await expectEqual([a, b], server)
    }
}
