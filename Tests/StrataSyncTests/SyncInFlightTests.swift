import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// A real server behind a connection that loses what it is told to: a push that never
/// reaches the server, or one the server applied whose answer never comes back.
actor LosingServer: SyncServer {
    struct Lost: Error {}

    let server: PostgresSyncServer
    /// Pushes to lose before they reach the server.
    var requestsToLose = 0
    /// Pushes the server applies whose answers are lost.
    var answersToLose = 0

    init(_ server: PostgresSyncServer) { self.server = server }

    func lose(requests: Int = 0, answers: Int = 0) {
        requestsToLose = requests
        answersToLose = answers
    }

    func hello(_ hello: SyncHello) async throws -> SyncWelcome { try await server.hello(hello) }

    func push(_ push: SyncPush) async throws -> SyncPushResult {
        if requestsToLose > 0 {
            requestsToLose -= 1
            throw Lost()
        }
        let result = try await server.push(push)
        if answersToLose > 0 {
            answersToLose -= 1
            throw Lost()
        }
        return result
    }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullResult { try await server.pull(request) }

    func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> { try await server.changeSignals() }
}

/// Changes made while a push is in flight (written to the outbox, not answered yet): the
/// push arrives once, whenever it does, and what was changed after it follows.
@Suite("Changes while a push is in flight")
struct SyncInFlightTests {
    @Test(arguments: ["request lost", "answer lost"])
    func anObjectDeletedWhileItsPushIsInFlightIsDeletedOnTheServer(_ fault: String) async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let losing = LosingServer(try test.server())
        let a = try Device(folder.path("a.sqlite"), server: try test.server())
        let store = try Store(schema: StrataModel.schema, path: folder.path("b.sqlite"))
        let b = try StoreSync(store: store, server: losing)
        defer { Task { await a.close(); await b.stop(); try? store.close() } }
        try await store.write { db in
            let board = try db.insert(Board(name: "Short-lived"))
            _ = try db.insert(Card(title: "Goes with it", boardID: board.id))
            _ = try db.insert(Board(name: "Stays"))
        }
        await losing.lose(requests: fault == "request lost" ? 1 : 0, answers: fault == "answer lost" ? 1 : 0)
        await #expect(throws: LosingServer.Lost.self) { try await b.sync() }
        // Deleted here before the push was answered: the deletion must reach the server
        // after the push that created it.
        try await store.write { db in try db.execute(sql: "DELETE FROM Board WHERE name = 'Short-lived'") }
        try await b.sync()
        try await a.sync.sync()
        let server = try await test.contents()
        #expect(server.objects["Board"]?.values.compactMap { $0["name"] ?? nil } == ["Stays"])
        #expect(server.objects["Card"]?.isEmpty ?? true)
        #expect(try b.contents() == server)
        #expect(try a.sync.contents() == server)
        #expect(try b.conflicts().isEmpty)
    }

    @Test func editsAndLinksMadeWhileAPushIsInFlightFollowIt() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let losing = LosingServer(try test.server())
        let store = try Store(schema: StrataModel.schema, path: folder.path("b.sqlite"))
        let b = try StoreSync(store: store, server: losing)
        defer { Task { await b.stop(); try? store.close() } }
        try await store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            let card = try db.insert(Card(title: "First title", boardID: board.id))
            let label = try db.insert(Label(name: "urgent"))
            try db.link(card.id, Card.labels, label.id)
        }
        await losing.lose(answers: 1)
        await #expect(throws: LosingServer.Lost.self) { try await b.sync() }
        try await store.write { db in
            try db.execute(sql: "UPDATE Card SET title = 'Second title', points = 5")
            try db.execute(sql: "DELETE FROM Card_labels")
            try db.execute(sql: "UPDATE Board SET position = 3")
        }
        try await b.sync()
        let server = try await test.contents()
        #expect(server.objects["Card"]?.values.map { $0["title"] ?? nil } == ["Second title"])
        #expect(server.objects["Card"]?.values.map { $0["points"] ?? nil } == ["5"])
        #expect(server.objects["Board"]?.values.map { $0["position"] ?? nil } == ["3"])
        #expect(server.links["Card_labels"]?.isEmpty ?? true)
        #expect(try b.contents() == server)
    }
}
