import Foundation
import JWTKit
import StrataSyncFixture
import StrataTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The package's root folder (this file is Tests/StrataRelayTests/RelayTestSupport.swift).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The keys the tests sign tokens with, made for each run: an HS256 secret and an ES256 key
/// pair that the relay trusts, and a secret it does not know (a forger's).
struct TestKeys: Sendable {
    let secret = "relay-test-" + UUID().uuidString
    let forgerSecret = "forger-" + UUID().uuidString
    let ecKey = ES256PrivateKey()
    let issuer = "https://auth.strata.test"
    let audience = "strata-relay-tests"

    /// The claims of a test token (seconds since 1970).
    struct Claims: JWTPayload {
        var sub: String?
        var uid: String?
        var exp: Int?
        var nbf: Int?
        var iss: String?
        var aud: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    enum Signer: Sendable { case hs256, es256, forger }

    /// A token for `user` (in `sub`; in `uid` too when given): valid for an hour from now
    /// unless told otherwise; with a `kid` header when given.
    func token(
        user: String? = "alice", uid: String? = nil, signer: Signer = .hs256, kid: String? = nil, expiresIn: Int? = 3600,
        notBefore: Int? = nil, issuer: String? = nil, audience: String? = nil
    ) async throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let claims = Claims(
            sub: user, uid: uid, exp: expiresIn.map { now + $0 }, nbf: notBefore.map { now + $0 }, iss: issuer ?? self.issuer,
            aud: audience ?? self.audience)
        let keys = JWTKeyCollection()
        let identifier = kid.map { JWKIdentifier(string: $0) }
        switch signer {
        case .hs256: await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: identifier)
        case .es256: await keys.add(ecdsa: ecKey, kid: identifier)
        case .forger: await keys.add(hmac: HMACKey(from: forgerSecret), digestAlgorithm: .sha256, kid: identifier)
        }
        return try await keys.sign(claims, kid: identifier)
    }

    /// The ES256 key as a JWKS document, under `kid`.
    func jwks(kid: String) throws -> String {
        let parameters = try #require(ecKey.publicKey.parameters)
        return #"{"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "\#(kid)", "x": "\#(parameters.x)", "y": "\#(parameters.y)"}]}"#
    }
}

/// The relay as a process: the built `strata-relay` (beside this test bundle), serving the
/// sync fixture's model from its YAML files on a loopback port of its choosing, connected to
/// the test's database over the cluster's Unix socket. Its log goes to a file, printed when
/// a test fails to start it.
final class RelayProcess: @unchecked Sendable {
    static var executable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("strata-relay").path
    }

    let process = Process()
    let output = Pipe()
    let folder: TemporaryDirectory
    let url: URL
    var log: String { (try? String(contentsOfFile: folder.path("relay.log"), encoding: .utf8)) ?? "" }

    /// Starts a relay for `test`'s database; `environment` adds or overrides settings (an
    /// empty value unsets one), `arguments` are the program's.
    init(_ test: TestServer, keys: TestKeys, environment extra: [String: String] = [:], arguments: [String] = []) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable), "build first: swift build --build-tests")
        folder = try TemporaryDirectory()
        let publicKey = folder.path("es256.pem")
        try keys.ecKey.publicKey.pemRepresentation.write(toFile: publicKey, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STRATA_RELAY_") }
        environment.merge([
            "STRATA_RELAY_HOST": "127.0.0.1", "STRATA_RELAY_PORT": "0",
            "STRATA_RELAY_MODELS": packageRoot.appendingPathComponent("Tests/SyncFixture/Models").path,
            "STRATA_RELAY_PG_SOCKET": test.cluster.socketPath, "STRATA_RELAY_PG_USER": test.cluster.user,
            "STRATA_RELAY_PG_DATABASE": test.database,
            "STRATA_RELAY_JWT_HS256_SECRET": keys.secret, "STRATA_RELAY_JWT_ES256_PUBLIC_KEY_FILE": publicKey,
            "STRATA_RELAY_JWT_ISSUER": keys.issuer, "STRATA_RELAY_JWT_AUDIENCE": keys.audience,
            "STRATA_RELAY_JWT_LEEWAY_SECONDS": "5", "STRATA_RELAY_LOG_LEVEL": "debug",
        ]) { _, new in new }
        environment.merge(extra) { _, new in new }
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: folder.path("relay.log"), contents: nil)
        process.standardError = FileHandle(forWritingAtPath: folder.path("relay.log"))
        try process.run()
        // The wait for its first line blocks a thread of its own (see `offThePool`).
        let handle = output.fileHandleForReading
        let first = try await offThePool { Self.readLine(handle, timeout: .seconds(60)) }
        guard let line = first,
            let prefix = line.range(of: "strata-relay listening on "),
            let url = URL(string: String(line[prefix.upperBound...]))
        else {
            process.killAndReap()
            let log = (try? String(contentsOfFile: folder.path("relay.log"), encoding: .utf8)) ?? ""
            throw RelayError("the relay did not start: \(log)")
        }
        self.url = url
    }

    /// A line of `handle`, or nil at its end or after `timeout`.
    static func readLine(_ handle: FileHandle, timeout: Duration) -> String? {
        var buffer = Data()
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var ready = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(left.components.seconds * 1000 + 1))
            if polled < 0, errno == EINTR { continue }
            guard polled > 0 else { return nil }
            // One byte at a time: nothing after the line is taken from the pipe.
            var byte: UInt8 = 0
            guard read(handle.fileDescriptor, &byte, 1) == 1 else { return nil }
            buffer.append(byte)
        }
    }

    /// The relay's exit status once it has ended and been reaped here (see
    /// `Process.reap(within:)`: Foundation may never learn that it ended).
    private var ended: Int32??

    /// Stops the relay with SIGTERM (SIGKILL after `grace`); its exit status, or nil when
    /// it had to be killed.
    @discardableResult
    func stop(grace: Duration = .seconds(20)) -> Int32? {
        if let ended { return ended }
        Foundation.kill(process.processIdentifier, SIGTERM)
        if let status = process.reap(within: grace) {
            ended = .some(status)
            return status
        }
        kill()
        return nil
    }

    /// Kills the relay (SIGKILL) and reaps it; nothing once it has ended, so that a signal
    /// never reaches another process that took its id.
    func kill() {
        guard ended == nil else { return }
        process.killAndReap()
        ended = .some(nil)
    }

    deinit { if ended == nil { stop(grace: .seconds(5)) } }

    struct RelayError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// One device syncing through a relay: a store file of its own and a `RelaySyncServer`.
struct RelayDevice {
    let store: Store
    let sync: StoreSync
    let server: RelaySyncServer

    init(
        _ path: String, relay: RelayProcess, options: SyncOptions = SyncOptions(), transport: RelaySyncServer.Transport = .platformDefault,
        token: @escaping @Sendable () async throws -> String
    ) throws {
        try self.init(path, url: relay.url, options: options, transport: transport, token: token)
    }

    init(
        _ path: String, url: URL, options: SyncOptions = SyncOptions(), transport: RelaySyncServer.Transport = .platformDefault,
        token: @escaping @Sendable () async throws -> String
    ) throws {
        store = try Store(schema: StrataModel.schema, path: path)
        server = RelaySyncServer(url: url, transport: transport, token: token)
        sync = try StoreSync(store: store, server: server, options: options)
    }

    func close() async {
        await sync.stop()
        try? store.close()
    }
}

/// Syncs every device, twice round, so that each has pulled what the others pushed.
func settle(_ devices: [RelayDevice]) async throws {
    for _ in 0..<2 {
        for device in devices { try await device.sync.sync() }
    }
}

/// Every device's contents equal the server's, and the server holds something.
func expectConverged(_ devices: [RelayDevice], _ test: TestServer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let server = try await test.contents()
    #expect(server.objectCount > 0, sourceLocation: sourceLocation)
    for (index, device) in devices.enumerated() {
        let contents = try device.sync.contents()
        #expect(
            contents.difference(from: server) == nil,
            "device \(index) differs from the server: \(contents.difference(from: server) ?? "")", sourceLocation: sourceLocation)
    }
}

/// A plain HTTP exchange with the relay: the status, the headers and the body.
struct HTTPAnswer {
    var status: Int
    var headers: [String: String]
    var body: Data

    /// The relay's refusal body, `{"error": ..., "reason": ...}`.
    var refusal: [String: String]? { try? JSONDecoder().decode([String: String].self, from: body) }
}

func http(_ method: String, _ url: URL, token: String? = nil, body: Data? = nil, contentType: String? = "application/json") async throws -> HTTPAnswer {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.timeoutInterval = 60
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
    request.httpBody = body
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as! HTTPURLResponse
    var headers: [String: String] = [:]
    for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
    return HTTPAnswer(status: http.statusCode, headers: headers, body: data)
}

/// Every relay test, one at a time: each starts relay processes (and some a cluster), which
/// the other tests of the package, running meanwhile, share the machine with.
@Suite("The relay", .serialized)
enum RelayTests {}

/// A relay and its database that the tests of one suite share: started by the suite's first
/// test (a subclass's `static let instance = Task { … }`), stopped when the test process exits.
class SharedRelay: @unchecked Sendable {
    let test: TestServer
    let keys = TestKeys()
    let relay: RelayProcess

    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: [RelayProcess] = []

    /// A relay in front of a new database, with `environment` added to its own.
    init(environment: [String: String]) async throws {
        test = try await TestServer()
        relay = try await RelayProcess(test, keys: keys, environment: environment)
        let relay = relay
        Self.lock.withLock {
            if Self.started.isEmpty { atexit { SharedRelay.stopAll() } }
            Self.started.append(relay)
        }
    }

    /// A device signs in and syncs once, which makes the server's tables.
    func syncAFirstDevice() async throws {
        let folder = try TemporaryDirectory()
        let keys = keys
        let first = try RelayDevice(folder.path("first.sqlite"), relay: relay) { try await keys.token() }
        try await first.sync.sync()
        await first.close()
    }

    /// The bodies a real device sends this relay (its hello, pushes and pulls), recorded: a
    /// board named `board` with a card of every type, linked to a label, and `cards` more
    /// cards of few values, pushed and pulled once.
    func recordADevice(board name: String, cards: [String] = []) async throws -> [RecordingServer.Message] {
        let folder = try TemporaryDirectory()
        let keys = keys
        let recorder = RecordingServer(RelaySyncServer(url: relay.url) { try await keys.token() })
        let store = try Store(schema: StrataModel.schema, path: folder.path("recorded.sqlite"))
        let sync = try StoreSync(store: store, server: recorder)
        try await store.write { db in
            let board = try db.insert(Board(name: name, position: 1))
            let card = try db.insert(Card(
                title: "Every type", stage: .doing, points: 3, estimate: 0.1, small: -7, done: true, due: Date(),
                token: UUID(), blob: Data([0, 1, 254, 255]), price: Decimal(string: "12.50"),
                link: URL(string: "https://example.com/a?b=c"), boardID: board.id))
            for title in cards { _ = try db.insert(Card(title: title, boardID: board.id)) }
            let label = try db.insert(Label(name: name.lowercased()))
            try db.link(card.id, Card.labels, label.id)
        }
        try await sync.sync()
        await sync.stop()
        try store.close()
        return recorder.messages
    }

    private static func stopAll() {
        for relay in lock.withLock({ started }) { relay.stop(grace: .seconds(5)) }
    }
}

/// A device's server that notes whether the sync read a snapshot (the relay offered it), and
/// forwards everything to the relay.
final class SnapshotWatcher: SyncServer, @unchecked Sendable {
    let relay: RelaySyncServer
    private let lock = NSLock()
    private var answers: [Bool] = []

    init(_ relay: RelaySyncServer) { self.relay = relay }

    /// What each snapshot asked for answered: true when the relay offered it.
    var offered: [Bool] { lock.withLock { answers } }

    func hello(_ hello: SyncHello) async throws -> SyncWelcome { try await relay.hello(hello) }
    func push(_ push: SyncPush) async throws -> SyncPushResult { try await relay.push(push) }
    func pull(_ request: SyncPullRequest) async throws -> SyncPullResult { try await relay.pull(request) }
    func pullBatch(_ request: SyncPullRequest) async throws -> SyncPullBatch { try await relay.pullBatch(request) }
    func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> { try await relay.changeSignals() }

    func readSnapshot(batchSize: Int, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        let offered = try await relay.readSnapshot(batchSize: batchSize, into: body)
        lock.withLock { answers.append(offered) }
        return offered
    }
}

/// A flag that tasks set and read.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
    func clear() { lock.withLock { value = false } }
}
