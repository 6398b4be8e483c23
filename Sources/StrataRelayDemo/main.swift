// `make relay-demo`: a private PostgreSQL cluster, `strata-relay` in front of it, and two
// users on three devices that hold no database credentials: each signs in with a token
// (signed here, as your sign-in would), syncs through the relay, and sees its user's data
// only — Alice's private board stays on her phone and laptop, the board she shares with Bob
// reaches his laptop, and changes arrive in the live lists through the relay's signals.
import Foundation
import JWTKit
import StrataSharingFixture

func say(_ line: String = "") { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The relay's program, built beside this one.
let relayProgram = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("strata-relay")
/// The model with per-user data (`access:`), which the relay reads from its YAML (the devices
/// have it generated).
let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/SharingFixture/Models")

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
    }

    func show() {
        list.waitForDeliveries()
        let sections = list.snapshot.sections
        say("  \(name):" + (sections.isEmpty ? " (no cards)" : ""))
        for section in sections {
            say("    \(section.value.object?.title ?? "(no board)"): " + section.items.map(\.title).joined(separator: ", "))
        }
    }

    /// The titles of the boards this device holds.
    func boards() async throws -> Set<String> { Set(try await store.fetchAll(Board.self).map(\.title)) }
}

struct DemoFailure: Error, CustomStringConvertible { var description: String }

/// Waits (up to 20 seconds) until `condition` holds: the background syncs, woken by signals.
func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw DemoFailure(description: "not seen in 20 seconds: \(what)") }
        try await Task.sleep(for: .milliseconds(100))
    }
}

func run() async throws {
    guard FileManager.default.isExecutableFile(atPath: relayProgram.path) else {
        throw DemoFailure(description: "build strata-relay first: swift build --product strata-relay")
    }
    let cluster = try DemoCluster.start()
    defer { cluster.destroy() }
    say("A private PostgreSQL cluster listens on \(cluster.socketPath) (no TCP port).")
    let signIn = SignIn()

    // The relay: the only holder of the database's credentials.
    let relay = Process()
    relay.executableURL = relayProgram
    relay.environment = ProcessInfo.processInfo.environment.merging([
        "STRATA_RELAY_MODELS": models.path, "STRATA_RELAY_PG_SOCKET": cluster.socketPath,
        "STRATA_RELAY_PG_USER": cluster.user, "STRATA_RELAY_PG_DATABASE": cluster.database, "STRATA_RELAY_PORT": "0",
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
    say("The model says who reads what (Tests/SharingFixture/Models/Sharing.yaml): a board is its owner's and its")
    say("members' (access: { owner: ownerID, members: members.userID }), a card is its board's (through: board).")

    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-relay-demo-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let phone = try DemoDevice("alice's phone", user: "alice", folder: folder, relay: url, signIn: signIn)
    let laptop = try DemoDevice("alice's laptop", user: "alice", folder: folder, relay: url, signIn: signIn)
    let bob = try DemoDevice("bob's laptop", user: "bob", folder: folder, relay: url, signIn: signIn)
    let devices = [phone, laptop, bob]
    for device in devices { await device.sync.start() }

    say("\n1. Alice, on her phone, makes a private board and a board she shares with Bob.")
    try await phone.store.write { db in
        let errands = try db.insert(Board(ownerID: "alice", title: "Alice's errands"))
        for title in ["Dentist", "Passport"] { _ = try db.insert(Card(title: title, boardID: errands.id)) }
        let groceries = try db.insert(Board(ownerID: "alice", title: "Groceries"))
        _ = try db.insert(Member(userID: "bob", boardID: groceries.id))
        for title in ["Milk", "Bread"] { _ = try db.insert(Card(title: title, boardID: groceries.id)) }
    }
    try await waitUntil("the boards on alice's laptop and bob's") {
        let alices = try await laptop.boards(), bobs = try await bob.boards()
        return alices.count == 2 && bobs == ["Groceries"]
    }
    for device in devices { device.show() }

    say("\n2. Bob adds a card to the shared board: it reaches both of Alice's devices through the signals.")
    try await bob.store.write { db in
        guard let board = try db.fetchAll(Board.self).first else { throw DemoFailure(description: "the board did not arrive") }
        _ = try db.insert(Card(title: "Apples", boardID: board.id))
    }
    try await waitUntil("Apples on alice's devices") {
        for device in [phone, laptop] where try await !device.store.fetchAll(Card.self).contains(where: { $0.title == "Apples" }) {
            return false
        }
        return true
    }
    phone.show()
    laptop.show()

    say("\n3. Bob makes the shared board his own on his laptop: the relay refuses it, his conflict log says why.")
    try await bob.store.write { db in
        guard var board = try db.fetchAll(Board.self).first else { return }
        board.ownerID = "bob"
        _ = try db.update(board)
    }
    try await waitUntil("the refusal on bob's laptop") { try !bob.sync.conflicts().isEmpty }
    for conflict in try bob.sync.conflicts() { say("  [bob's laptop] \(conflict.kind): \(conflict.reason)") }
    try await waitUntil("the owner back on bob's laptop") { try await bob.store.fetchAll(Board.self).first?.ownerID == "alice" }
    say("  The board's owner on bob's laptop is alice again.")

    say("\n4. Alice removes Bob from the board on her laptop: it leaves his laptop, cards and all.")
    try await laptop.store.write { db in
        for member in try db.fetchAll(Member.self) where member.userID == "bob" { _ = try db.delete(member) }
    }
    try await waitUntil("the board gone from bob's laptop") { try await bob.boards().isEmpty }
    bob.show()

    say("\n5. A device with a forged token is refused, and says why.")
    let forged = RelaySyncServer(url: url) { "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2lnbmF0dXJl" }
    do {
        _ = try await forged.pull(SyncPullRequest(device: UUID(), cursor: 0, limit: 10))
    } catch {
        say("  \(error)")
    }

    for device in devices { await device.sync.stop() }
    // A last sync of each, in the foreground: what the other pushed last is on both.
    for device in [laptop, phone, bob] { _ = try await device.sync.sync() }
    let same = try phone.sync.contents() == laptop.sync.contents()
    let bobsCards = try await bob.store.fetchAll(Card.self).map(\.title)
    say("\nAlice's two devices hold the same objects: \(same). Bob's laptop holds \(bobsCards.count) cards.")
    if !same || !bobsCards.isEmpty { throw DemoFailure(description: "the devices do not hold their users' data") }
}

do {
    try await run()
} catch {
    say("relay-demo failed: \(error)")
    exit(1)
}
