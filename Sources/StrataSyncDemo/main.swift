// `make sync-demo`: two stores edit offline, then converge through a private PostgreSQL
// cluster, their live lists updating as ordinary change batches.
import Foundation
import StrataSyncFixture

func say(_ line: String = "") { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// A device: a store file, its sync, and a live sectioned list of cards by board.
final class DemoDevice: @unchecked Sendable {
    let name: String
    let store: Store
    let sync: StoreSync
    let server: PostgresSyncServer
    let list: ResultsController<Card, Board>
    let queue: DispatchQueue

    init(_ name: String, folder: URL, cluster: PostgresCluster, database: String) throws {
        self.name = name
        store = try Store(schema: StrataModel.schema, path: folder.appendingPathComponent("\(name).sqlite").path)
        server = try PostgresSyncServer(configuration: cluster.configuration(database: database), schema: StrataModel.schema)
        sync = try StoreSync(store: store, server: server)
        queue = DispatchQueue(label: name)
        list = try ResultsController(store: store, request: Card.Fetches.byBoard, deliveryQueue: queue)
        let name = name
        list.observe { batch in say("  [\(name)] batch: \(batch)") }
    }

    func show() {
        list.waitForDeliveries()
        say("  \(name):")
        for section in list.snapshot.sections {
            let board = section.value.object?.name ?? "(no board)"
            say("    \(board): " + section.items.map { "\($0.title) (\($0.points) pts)" }.joined(separator: ", "))
        }
    }
}

extension ResultsController {
    /// Calls `handler` with each change batch.
    func observe(_ handler: @escaping @Sendable (ChangeBatch) -> Void) {
        let stream = updates
        Task {
            for try await update in stream {
                if case .batch(let batch, _) = update { handler(batch) }
            }
        }
    }
}

struct DemoFailure: Error {}

func run() async throws {
    let cluster = try await PostgresCluster.start()
    defer { cluster.destroy() }
    let database = try await cluster.makeDatabase()
    say("A private PostgreSQL cluster listens on \(cluster.socketPath) (no TCP port).")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sync-demo-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let phone = try DemoDevice("phone", folder: folder, cluster: cluster, database: database)
    let laptop = try DemoDevice("laptop", folder: folder, cluster: cluster, database: database)

    say("\n1. Both devices edit offline.")
    try await phone.store.write { db in
        let board = try db.insert(Board(name: "Groceries", position: 1))
        for title in ["Milk", "Bread", "Apples"] { _ = try db.insert(Card(title: title, points: 1, boardID: board.id)) }
    }
    try await laptop.store.write { db in
        let board = try db.insert(Board(name: "Work", position: 0))
        for title in ["Release notes", "Review"] { _ = try db.insert(Card(title: title, points: 3, boardID: board.id)) }
    }
    phone.show()
    laptop.show()

    say("\n2. The laptop syncs in the background (it pulls when PostgreSQL notifies it); the phone syncs once.")
    await laptop.sync.start()
    try await laptop.sync.sync()
    try await phone.sync.sync()
    try await Task.sleep(for: .milliseconds(800))
    phone.show()
    laptop.show()

    say("\n3. Both edit the same card offline: the phone its title, the laptop its points. Per column, both stay.")
    await laptop.sync.stop()
    try await phone.store.write { db in
        var card = try db.fetchAll(Card.self).first { $0.title == "Milk" }!
        card.title = "Oat milk"
        _ = try db.update(card)
    }
    try await laptop.store.write { db in
        var card = try db.fetchAll(Card.self).first { $0.title == "Milk" }!
        card.points = 2
        _ = try db.update(card)
    }
    try await phone.sync.sync()
    try await laptop.sync.sync()
    try await phone.sync.sync()
    phone.show()
    laptop.show()

    say("\n4. Both create a board named \"Errands\" (names are unique): the first to reach the server keeps it.")
    try await phone.store.write { db in _ = try db.insert(Board(name: "Errands", position: 2)) }
    try await laptop.store.write { db in _ = try db.insert(Board(name: "Errands", position: 5)) }
    try await phone.sync.sync()
    try await laptop.sync.sync()
    for conflict in try laptop.sync.conflicts() {
        say("  laptop's conflict log: \(conflict.kind) \(conflict.table): \(conflict.reason)")
    }

    say("\n5. Another service writes the server's tables with SQL; both devices see it.")
    try await cluster.psql("""
        INSERT INTO "Card" (id, title, "boardID", points) SELECT gen_random_uuid(), 'Stamps', id, 1 FROM "Board" WHERE name = 'Errands'
        """, database: database)
    try await phone.sync.sync()
    try await laptop.sync.sync()
    phone.show()
    laptop.show()

    let serverContents = try await phone.server.contents()
    let converged = try phone.sync.contents() == serverContents && laptop.sync.contents() == serverContents
    say("\nBoth stores equal the server's tables: \(converged ? "yes" : "NO")")
    say("The server's Card table:")
    say(try await cluster.psql("SELECT title, points, \"boardID\" FROM \"Card\" ORDER BY title", database: database)
        .split(separator: "\n").map { "  " + $0.replacingOccurrences(of: "|", with: "  ") }.joined(separator: "\n"))
    for device in [phone, laptop] {
        await device.sync.stop()
        await device.server.close()
        try device.store.close()
    }
    if !converged { throw DemoFailure() }
}

try await run()
