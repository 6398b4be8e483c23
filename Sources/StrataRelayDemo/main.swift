// `make relay-demo`: a private PostgreSQL cluster, `strata-relay` in front of it, and two
// users' devices that hold no database credentials: each signs in with a token (signed here,
// as your sign-in would), syncs through the relay, and sees the other's changes arrive in its
// live list through the relay's signals.
import Foundation
import JWTKit
import StrataSyncFixture

func say(_ line: String = "") { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The relay's program, built beside this one.
let relayProgram = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("strata-relay")
/// The sync tests' model, which the relay reads from its YAML (the devices have it generated).
let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/SyncFixture/Models")

/// What your sign-in would do: tokens for a user, signed with the relay's HS256 secret.
struct SignIn: Sendable {
    let secret = "relay-demo-" + UUID().uuidString
    struct Claims: JWTPayload {
        var sub: String
        var aud: String
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func token(for user: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(sub: user, aud: "relay-demo", exp: Int(Date().timeIntervalSince1970) + 600))
    }
}

/// A device: a store file, its sync through the relay, and a live list of cards by board.
final class DemoDevice: @unchecked Sendable {
    let name: String
    let store: Store
    let sync: StoreSync
    let list: ResultsController<Card, Board>

    init(_ name: String, user: String, folder: URL, relay: URL, signIn: SignIn) throws {
        self.name = name
        store = try Store(schema: StrataModel.schema, path: folder.appendingPathComponent("\(name).sqlite").path)
        let server = RelaySyncServer(url: relay) { try await signIn.token(for: user) }
        sync = try StoreSync(store: store, server: server)
        list = try ResultsController(store: store, request: Card.Fetches.byBoard, deliveryQueue: DispatchQueue(label: name))
        let stream = list.updates
        Task {
            for try await update in stream {
                if case .batch(let batch, _) = update { say("  [\(name)] batch: \(batch)") }
            }
        }
    }

    func show() {
        list.waitForDeliveries()
        say("  \(name):")
        for section in list.snapshot.sections {
            say("    \(section.value.object?.name ?? "(no board)"): " + section.items.map(\.title).joined(separator: ", "))
        }
    }
}

struct DemoFailure: Error, CustomStringConvertible { var description: String }

func run() async throws {
    guard FileManager.default.isExecutableFile(atPath: relayProgram.path) else {
        throw DemoFailure(description: "build strata-relay first: swift build --product strata-relay")
    }
    let cluster = try PostgresCluster.start()
    defer { cluster.destroy() }
    let database = try cluster.makeDatabase()
    say("A private PostgreSQL cluster listens on \(cluster.socketPath) (no TCP port).")
    let signIn = SignIn()

    // The relay: the only holder of the database's credentials.
    let relay = Process()
    relay.executableURL = relayProgram
    relay.environment = ProcessInfo.processInfo.environment.merging([
        "STRATA_RELAY_MODELS": models.path, "STRATA_RELAY_PG_SOCKET": cluster.socketPath,
        "STRATA_RELAY_PG_USER": cluster.user, "STRATA_RELAY_PG_DATABASE": database, "STRATA_RELAY_PORT": "0",
        "STRATA_RELAY_JWT_HS256_SECRET": signIn.secret, "STRATA_RELAY_JWT_AUDIENCE": "relay-demo",
        "STRATA_RELAY_LOG_LEVEL": "warning",
    ]) { _, new in new }
    let output = Pipe()
    relay.standardOutput = output
    try relay.run()
    defer {
        relay.terminate()
        relay.waitUntilExit()
        say("\nThe relay stopped (SIGTERM), status \(relay.terminationStatus).")
    }
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = output.fileHandleForReading.availableData
        guard !chunk.isEmpty else { throw DemoFailure(description: "the relay did not start") }
        line += chunk
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let address = text.components(separatedBy: " ").last, let url = URL(string: address) else {
        throw DemoFailure(description: "unexpected: \(text)")
    }
    say("\(text) (HTTP, loopback; PostgreSQL behind it).")

    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-relay-demo-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let phone = try DemoDevice("alice's phone", user: "alice", folder: folder, relay: url, signIn: signIn)
    let laptop = try DemoDevice("bob's laptop", user: "bob", folder: folder, relay: url, signIn: signIn)

    say("\n1. Both devices sync in the background, through the relay; alice adds a board on her phone.")
    await phone.sync.start()
    await laptop.sync.start()
    try await phone.store.write { db in
        let board = try db.insert(Board(name: "Groceries", position: 1))
        for title in ["Milk", "Bread"] { _ = try db.insert(Card(title: title, points: 1, boardID: board.id)) }
    }
    try await Task.sleep(for: .seconds(1))
    phone.show()
    laptop.show()

    say("\n2. Bob adds a card on his laptop: it reaches alice's phone through the relay's signals.")
    try await laptop.store.write { db in
        guard let board = try db.fetchAll(Board.self).first else { throw DemoFailure(description: "the board did not arrive") }
        _ = try db.insert(Card(title: "Apples", points: 2, boardID: board.id))
    }
    try await Task.sleep(for: .seconds(1))
    phone.show()

    say("\n3. A device with a forged token is refused, and says why.")
    let forged = RelaySyncServer(url: url) { "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2lnbmF0dXJl" }
    do {
        _ = try await forged.pull(SyncPullRequest(device: UUID(), cursor: 0, limit: 10))
    } catch {
        say("  \(error)")
    }

    await phone.sync.stop()
    await laptop.sync.stop()
    let same = try phone.sync.contents() == laptop.sync.contents()
    say("\nBoth devices hold the same objects: \(same).")
    if !same { throw DemoFailure(description: "the devices differ") }
}

do {
    try await run()
} catch {
    say("relay-demo failed: \(error)")
    exit(1)
}
