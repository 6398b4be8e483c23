import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

@Suite("Two devices and a server")
struct SyncConvergenceTests {
    @Test func changesOfEitherDeviceReachTheOther() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }

        let due = Date(timeIntervalSince1970: 1_790_000_000.125)
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox", position: 1))
            let card = try db.insert(Card(
                title: "Write", stage: .doing, points: 3, estimate: 0.1, small: -7, done: true, due: due,
                token: UUID(), blob: Data([0, 1, 254, 255]), price: Decimal(string: "12.50"),
                link: URL(string: "https://example.com/a?b=c"), boardID: board.id))
            let label = try db.insert(Label(name: "urgent"))
            try db.link(card.id, Card.labels, label.id)
        }
        try await settle([a, b])
        let cards = try await b.store.fetchAll(Card.self)
        #expect(cards.count == 1)
        #expect(cards.first?.title == "Write")
        #expect(cards.first?.due == due)
        #expect(cards.first?.blob == Data([0, 1, 254, 255]))
        #expect(cards.first?.estimate == 0.1)
        #expect(try await b.store.fetchAll(Label.self).map(\.name) == ["urgent"])
        try await expectConverged([a, b], test)

        // B edits, unlinks, deletes; A sees it.
        try await b.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.title = "Written"
            card.done = false
            _ = try db.update(card)
            let label = try db.fetchAll(Label.self)[0]
            try db.unlink(card.id, Card.labels, label.id)
            _ = try db.delete(label)
        }
        try await settle([b, a])
        #expect(try await a.store.fetchAll(Card.self).map(\.title) == ["Written"])
        #expect(try await a.store.fetchAll(Label.self).isEmpty)
        try await expectConverged([a, b], test)
    }

    @Test func concurrentEditsMergePerColumn() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            _ = try db.insert(Card(title: "Card", boardID: board.id))
        }
        try await settle([a, b])
        // Offline, each changes another column, and both change `estimate`.
        try await a.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.title = "Title from A"
            card.estimate = 1
            _ = try db.update(card)
        }
        try await b.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.points = 42
            card.estimate = 2
            _ = try db.update(card)
        }
        try await a.sync.sync()
        try await b.sync.sync()  // B reaches the server last: its estimate wins
        try await a.sync.sync()
        for device in [a, b] {
            let card = try await device.store.fetchAll(Card.self)[0]
            #expect(card.title == "Title from A")
            #expect(card.points == 42)
            #expect(card.estimate == 2)
        }
        try await expectConverged([a, b], test)
        #expect(try a.sync.conflicts().isEmpty)
        #expect(try b.sync.conflicts().isEmpty)
    }

    @Test func anObjectThatExistedBeforeSyncGetsAnIdentity() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let path = folder.path("a.sqlite")
        do {
            let store = try Store(schema: StrataModel.schema, path: path)
            try await store.write { db in
                let board = try db.insert(Board(name: "Before"))
                for index in 0..<20 {
                    let card = try db.insert(Card(title: "Card \(index)", boardID: board.id))
                    if index.isMultiple(of: 3) {
                        let label = try db.insert(Label(name: "L\(index)"))
                        try db.link(card.id, Card.labels, label.id)
                    }
                }
            }
            try store.close()
        }
        let a = try Device(path, test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        try await settle([a, b])
        #expect(try await b.store.fetchCount(Card.self) == 20)
        #expect(try b.sync.contents().links["Card_labels"]?.count == 7)
        try await expectConverged([a, b], test)
    }
}
