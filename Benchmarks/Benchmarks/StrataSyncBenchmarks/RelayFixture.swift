import Foundation
import Hummingbird
import JWTKit
import Logging
import Strata
import StrataRelay
import StrataSync

/// A relay (``SyncRelay``, mounted in a Hummingbird app on a loopback port) in front of a
/// fixture's database, in the benchmark's own process, and a token it takes (HS256).
final class RelayFixture: @unchecked Sendable {
    let url: URL
    let token: String
    private let running: Task<Void, any Error>

    struct Claims: JWTPayload {
        var sub: String
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    init(_ server: SyncServerFixture) async throws {
        let secret = "benchmarks-" + UUID().uuidString
        var logger = Logger(label: "strata.benchmarks.relay")
        logger.logLevel = .error
        let relay = try await SyncRelay(configuration: SyncRelayConfiguration(
            postgres: server.configuration, schema: StrataModel.schema,
            tokens: RelayTokenRules(keys: [.hs256(secret: secret)], requiresExpiry: false), logger: logger))
        let router = Router()
        relay.addRoutes(to: router)
        let (ports, port) = AsyncStream<Int>.makeStream()
        var app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        app.addServices(relay)
        running = Task { try await app.runService() }
        var bound = ports.makeAsyncIterator()
        guard let port = await bound.next(), let url = URL(string: "http://127.0.0.1:\(port)") else {
            throw SyncBenchmarkError.unexpected("the relay did not start")
        }
        self.url = url
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        token = try await keys.sign(Claims(sub: "benchmarks"))
    }

    /// A device of the relay: a new store file in the fixture's folder, its sync through a
    /// `RelaySyncServer`.
    func device(_ server: SyncServerFixture, name: String) throws -> (Store, StoreSync) {
        let path = server.folder.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).sqlite").path
        let store = try Store(schema: StrataModel.schema, path: path)
        let token = token
        return (store, try StoreSync(store: store, server: RelaySyncServer(url: url) { token }))
    }

    func stop() async {
        running.cancel()
        _ = try? await running.value
    }
}
