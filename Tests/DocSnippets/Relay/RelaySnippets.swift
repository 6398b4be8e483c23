// The snippets of the article "Sync for apps: the relay", each in a function that gives it
// its context (compiled with warnings as errors; DocSnippetTests finds each block here).
import Foundation
import Hummingbird
import PostgresNIO
import Strata
import StrataRelay
import StrataSync

/// The app's own sign-in, whatever it is: it hands out a JWT the relay accepts.
protocol SignInSession: Sendable {
    func accessToken() async throws -> String
}

func syncThroughARelay(store: Store, session: some SignInSession) throws -> StoreSync {
    let server = RelaySyncServer(url: URL(string: "https://sync.example.com")!) {
        try await session.accessToken()   // a JWT of your sign-in, refreshed as it needs
    }
    let sync = try StoreSync(store: store, server: server)
    return sync
}

func syncThroughTwoRelays(store: Store, session: some SignInSession) throws -> StoreSync {
    let relayA = URL(string: "https://sync-a.example.com")!, relayB = URL(string: "https://sync-b.example.com")!
    let server = RelaySyncServer(urls: [relayA, relayB]) { try await session.accessToken() }
    return try StoreSync(store: store, server: server)
}

func handleARefusedToken(sync: StoreSync) async {
    do {
        try await sync.sync()
    } catch let error as SyncAuthenticationError {
        print(error.error, error.reason)   // expired_token, "the token expired at … (exp)"
    } catch {
        print(error)                       // SyncRelayError, URLError: the background sync retries
    }
}

func mountTheRelay(secret: String, publicKeyPEM: String) async throws {
    let schema = try RelayModel.load(paths: ["Models"], modelName: "StrataModel")
    let relay = try await SyncRelay(configuration: SyncRelayConfiguration(
        postgres: .init(host: "db.internal", username: "notes_relay", password: secret, database: "notes",
                        tls: .require(try .init(configuration: .makeClientConfiguration()))),
        schema: schema,
        tokens: RelayTokenRules(keys: [.es256(publicKeyPEM: publicKeyPEM)],
                                issuer: "https://auth.example.com", audience: "notes-sync")))
    let router = Router()
    relay.addRoutes(to: router)   // POST /v1/hello, /v1/push, /v1/pull, /v1/snapshot; GET /v1/signals
    var app = Application(
        router: router,
        server: .http1(configuration: .init(idleTimeout: .seconds(60))),  // silent connections close
        configuration: .init(address: .hostname("0.0.0.0", port: 8080)))
    app.addServices(relay)        // the relay's one LISTEN, for every device
    try await app.runService()    // until SIGTERM or SIGINT
}
