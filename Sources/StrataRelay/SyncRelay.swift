import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Strata
import StrataSync

/// How a ``SyncRelay`` runs.
public struct SyncRelayConfiguration: Sendable {
    /// The database: the relay is the only holder of its credentials.
    public var postgres: PostgresConnection.Configuration
    /// The model the relay serves (its tables and columns): a generated `<Model>.schema`, or
    /// one read from the model's YAML files with ``RelayModel/load(paths:modelName:)``.
    public var schema: SchemaDescriptor
    /// What the relay may do to the database's schema (``PostgresSyncServer/SchemaPolicy``):
    /// create and extend the model's tables at a device's hello (the default), or require them.
    public var policy: PostgresSyncServer.SchemaPolicy
    /// How many connections answer hellos, pushes and pulls, requests taking turns on them;
    /// each opens a second when requests overlap on it (as while a snapshot streams on its
    /// first), so the relay holds at most twice as many for requests. The change signals take
    /// one more.
    public var connections: Int
    /// Who may sync: the JWT keys and claims.
    public var tokens: RelayTokenRules
    /// The largest request body taken, in bytes (16 MiB by default): a larger one is refused
    /// with 413.
    public var maxBodySize: Int
    /// The most log entries one pull answers with (a device asking for more gets this many,
    /// and `hasMore`).
    public var maxPullLimit: Int
    /// How often a signals stream with nothing to say sends a comment, so that connections
    /// that went away are found and proxies keep the stream open.
    public var heartbeat: Duration
    /// How long a request to the database may take (``PostgresSyncServer``'s `requestTimeout`).
    public var requestTimeout: Duration
    /// The first and longest wait before listening again after the change signals failed.
    public var listenRetryDelays: ClosedRange<Duration>
    /// Where the relay logs: each request at `info` (method, path, status, milliseconds);
    /// refusals of sign-in at `notice`; the database's failures at `error`.
    public var logger: Logger

    public init(
        postgres: PostgresConnection.Configuration, schema: SchemaDescriptor, tokens: RelayTokenRules,
        policy: PostgresSyncServer.SchemaPolicy = .createAndExtend, connections: Int = 4, maxBodySize: Int = 16 << 20,
        maxPullLimit: Int = 100_000, heartbeat: Duration = .seconds(15), requestTimeout: Duration = .seconds(60),
        listenRetryDelays: ClosedRange<Duration> = .milliseconds(200) ... .seconds(10),
        logger: Logger = Logger(label: "strata.relay")
    ) {
        self.postgres = postgres
        self.schema = schema
        self.tokens = tokens
        self.policy = policy
        self.connections = connections
        self.maxBodySize = maxBodySize
        self.maxPullLimit = maxPullLimit
        self.heartbeat = heartbeat
        self.requestTimeout = requestTimeout
        self.listenRetryDelays = listenRetryDelays
        self.logger = logger
    }
}

/// The sync exchange over HTTP, for devices that must not hold database credentials: each
/// route checks the device's bearer token (a JWT), takes a `Codable` message of StrataSync
/// as JSON and answers it through the ``PostgresSyncServer``s the relay holds.
///
/// | route | body | answer |
/// | --- | --- | --- |
/// | `POST /v1/hello` | `SyncHello` | `SyncWelcome` |
/// | `POST /v1/push` | `SyncPush` | `SyncPushResult` |
/// | `POST /v1/pull` | `SyncPullRequest` | `SyncPullResult` |
/// | `POST /v1/snapshot` | `SyncSnapshotRequest` | lines of `SyncPullResult` (an empty store's first pull) |
/// | `GET /v1/signals` | | server-sent events: `ready` once, then `change` whenever data the user may read changed |
///
/// Every refusal is an HTTP status with the body `{"error": "...", "reason": "..."}`: 401
/// for a missing, malformed, forged, expired, not yet valid or wrong-audience token, 413 for
/// a body over ``SyncRelayConfiguration/maxBodySize``, 415 for a body whose `Content-Type`
/// is not JSON (a body without one is read as JSON), 400 for a body that is not the route's
/// message or that ended before its length, 403 for a device id bound to another user, 409
/// for a device whose model does not fit the server's, 503 when the database cannot be
/// reached.
///
/// Mount the routes in your own Hummingbird app, and run the relay as one of its services
/// (it listens for the server's changes, once for all the devices connected):
///
/// ```swift
/// let relay = try await SyncRelay(configuration: configuration)
/// let router = Router()
/// relay.addRoutes(to: router)                 // /v1/hello, /v1/push, /v1/pull, /v1/snapshot, /v1/signals
/// var app = Application(
///     router: router,
///     server: .http1(configuration: .init(idleTimeout: .seconds(60))),  // silent connections close
///     configuration: .init(address: .hostname("0.0.0.0", port: 8080)))
/// app.addServices(relay)
/// try await app.runService()
/// ```
///
/// The idle timeout is the server's, not the relay's: without one (Hummingbird's default), a
/// client that sends half a request and then nothing keeps its connection for ever.
///
/// The relay records metrics through swift-metrics, for whatever backend the app
/// bootstrapped (none: nothing is recorded): `strata_relay_requests_total` (by `route` and
/// `status`), `strata_relay_request_duration_seconds` (a timer, by `route`: hellos, pushes
/// and pulls), `strata_relay_refusals_total` (by `reason`, the refusal's `error` code) and
/// `strata_relay_signal_streams` (a gauge). `strata-relay` serves them at `GET /metrics`
/// in Prometheus's text format.
///
/// Each user is served the objects of their data, as the model's `access:` declares it, and a
/// push that reaches outside it has those changes refused (recorded in the device's conflict
/// log with the reason); a model that declares no `access:` shares everything with every
/// signed-in user. A device id is bound to the user who first synced with it: another user's
/// token with that id is refused with 403 `device_of_another_user`.
///
/// A relay keeps no state of its own, so any number of them can serve one database, behind a
/// load balancer with nothing sticky: each push is applied, and its answer recorded, in the
/// database (a push sent again, to this relay or another, gets the recorded answer and is not
/// applied again); a pull is answered from one snapshot of the database after the device's
/// cursor, which the device keeps; a device's user is bound in the database. What a relay
/// holds in memory is the signals streams of the devices connected to it (a device that
/// moves opens one on its new relay, which starts with `ready`: the device pulls then),
/// which devices were bound to which users, read from the database and trusted for a minute
/// (it only lets through what the database bound), and whether the database's tables have
/// their triggers.
public final class SyncRelay: Service, Sendable {
    public let configuration: SyncRelayConfiguration
    let servers: [PostgresSyncServer]
    let signalServer: PostgresSyncServer
    let authenticator: RelayAuthenticator
    let hub: SignalHub
    private let turn = Turn()

    /// A relay; throws when the token rules cannot be used (no key, a key that does not
    /// parse) or the model has no synced table.
    public init(configuration: SyncRelayConfiguration) async throws {
        self.configuration = configuration
        authenticator = try await RelayAuthenticator(rules: configuration.tokens)
        var logger = configuration.logger
        logger[metadataKey: "component"] = "database"
        // Requests take turns on the servers; a server's second connection serves when
        // requests overlap on it (a snapshot streams on the first). So the relay holds at most
        // twice `connections` for requests, whatever the load.
        servers = try (0..<max(1, configuration.connections)).map { _ in
            try PostgresSyncServer(
                configuration: configuration.postgres, schema: configuration.schema, policy: configuration.policy,
                requestTimeout: configuration.requestTimeout, maximumConnections: 2, logger: logger)
        }
        signalServer = try PostgresSyncServer(
            configuration: configuration.postgres, schema: configuration.schema, policy: configuration.policy,
            requestTimeout: configuration.requestTimeout, maximumConnections: 1, logger: logger)
        hub = SignalHub(logger: configuration.logger)
    }

    /// The number of devices connected to the signals route now.
    public var connectedDevices: Int { hub.subscriberCount }

    /// Listens for the server's changes (one `LISTEN`) until the task is cancelled or a
    /// graceful shutdown, then ends every signals stream and closes the connections.
    public func run() async throws {
        let hub = hub
        let server = signalServer
        let delays = configuration.listenRetryDelays
        let heartbeat = configuration.heartbeat
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await hub.run(server: server, retryDelays: delays) { position, users in
                        try await self.server().usersConcerned(after: position, among: users)
                    }
                }
                // Every stream's heartbeats and token expiry.
                group.addTask { await hub.runClock(heartbeat: heartbeat) }
            }
        }
        hub.finish()
        await close()
    }

    /// Ends every signals stream and closes the database connections (a later request opens
    /// them again).
    public func close() async {
        hub.finish()
        for server in servers { await server.close() }
        await signalServer.close()
    }

    /// The next server, in turn.
    func server() -> PostgresSyncServer { servers[turn.next() % servers.count] }

    /// Adds the relay's routes under `path` (`v1` by default: `/v1/hello`, `/v1/push`,
    /// `/v1/pull`, `/v1/snapshot`, `/v1/signals`) to `router`, with a middleware that answers their errors
    /// with the relay's JSON body and logs each request.
    public func addRoutes<Context: RequestContext>(to router: some RouterMethods<Context>, path: RouterPath = "v1") {
        let group = router.group(path).add(middleware: RelayRequestMiddleware<Context>(logger: configuration.logger))
        group.post("hello") { request, context in
            try await self.exchange(request, context, SyncHello.self) { user, hello in
                let server = self.server()
                try await server.bind(device: hello.device, to: user.id)
                return try await server.hello(hello)
            }
        }
        group.post("push") { request, context in
            try await self.exchange(request, context, SyncPush.self) { user, push in
                let server = self.server()
                try await server.bind(device: push.device, to: user.id)
                return try await server.push(push, user: user.id)
            }
        }
        group.post("pull") { request, context in
            try await self.exchange(request, context, SyncPullRequest.self) { user, pull in
                guard pull.limit > 0 else {
                    throw RelayHTTPError(.badRequest, error: "malformed_body", reason: "the pull's limit must be at least 1")
                }
                var pull = pull
                pull.limit = min(pull.limit, self.configuration.maxPullLimit)
                let server = self.server()
                try await server.bind(device: pull.device, to: user.id)
                guard pull.columnar else { return .encoded(try await server.pull(pull, user: user.id)) }
                return .json(try await server.pullJSON(pull, user: user.id))
            }
        }
        group.post("snapshot") { request, context in
            try await self.snapshot(request, context)
        }
        group.get("signals") { request, context in
            try await self.signals(request, context)
        }
    }

    /// The user of a request, or the 401 that refuses it.
    func authenticate(_ request: Request) async throws -> RelayUser {
        switch await authenticator.authenticate(authorization: request.headers[.authorization]) {
        case .success(let user):
            RequestUser.current?.id = user.id
            return user
        case .failure(let failure):
            configuration.logger.notice(
                "sign-in refused", metadata: ["path": "\(request.uri.path)", "error": "\(failure.error)"])
            throw RelayHTTPError.unauthorized(failure)
        }
    }

    /// Signs in, reads the body (up to the limit), decodes `Input`, answers with `body`'s
    /// value as JSON.
    func exchange<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ request: Request, _ context: some RequestContext, _ type: Input.Type,
        _ body: @Sendable (RelayUser, Input) async throws -> Output
    ) async throws -> Response {
        try await exchange(request, context, type) { user, input in Answer.encoded(try await body(user, input)) }
    }

    /// An answer: a message `JSONEncoder` writes, or JSON written already.
    enum Answer: Sendable {
        case encoded(any Encodable & Sendable)
        case json([UInt8])
    }

    /// ``exchange(_:_:_:_:)-(_,_,_,(RelayUser,Input)->Output)``, where `body` answers with an ``Answer``.
    func exchange<Input: Decodable & Sendable>(
        _ request: Request, _ context: some RequestContext, _ type: Input.Type,
        _ body: @Sendable (RelayUser, Input) async throws -> Answer
    ) async throws -> Response {
        let (user, input) = try await signedIn(request, type)
        let output: Answer
        do {
            output = try await body(user, input)
        } catch {
            throw RelayHTTPError.from(serverError: error, logger: configuration.logger)
        }
        let answer: ByteBuffer
        switch output {
        case .encoded(let message): answer = ByteBuffer(bytes: try JSONEncoder().encode(message))
        case .json(let bytes): answer = ByteBuffer(bytes: bytes)
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: answer))
    }

    /// Signs in, and reads the body (up to the limit) as `Input` in JSON.
    func signedIn<Input: Decodable>(_ request: Request, _ type: Input.Type) async throws -> (RelayUser, Input) {
        let user = try await authenticate(request)
        if let contentType = request.headers[.contentType], !Self.isJSON(contentType: contentType) {
            throw RelayHTTPError.unsupportedMediaType(contentType)
        }
        let limit = configuration.maxBodySize
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { throw RelayHTTPError.tooLarge(limit: limit) }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw RelayHTTPError.tooLarge(limit: limit)
        } catch {
            // The connection ended (or failed) before the body did.
            throw RelayHTTPError.incompleteBody()
        }
        let input: Input
        do {
            input = try JSONDecoder().decode(Input.self, from: Data(buffer.readableBytesView))
        } catch {
            throw RelayHTTPError.malformed(String(describing: Input.self), error)
        }
        return (user, input)
    }

    /// `POST /v1/snapshot`: every object of the user's data and every link between two of
    /// them, read in one snapshot of the database (a `REPEATABLE READ` transaction held while
    /// the answer streams), as lines of JSON (`application/x-ndjson`): each line a columnar
    /// ``SyncPullResult`` of about the batch size asked (at most
    /// ``SyncRelayConfiguration/maxPullLimit``) with the log position the snapshot holds, the
    /// last with `hasMore` false. A device reads it for an empty store's first pull (no log to
    /// group by object). The database is read as fast as the device takes the lines, two ahead.
    /// A failure midway ends the stream without its last line: the device applies nothing of
    /// it, and pulls again. So does a device that takes nothing of the answer for
    /// ``SyncRelayConfiguration/requestTimeout``: the snapshot's transaction ends then.
    func snapshot(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (user, asked) = try await signedIn(request, SyncSnapshotRequest.self)
        guard asked.batchSize > 0 else {
            throw RelayHTTPError(.badRequest, error: "malformed_body", reason: "the snapshot's batch size must be at least 1")
        }
        let server = self.server()
        let size = min(asked.batchSize, configuration.maxPullLimit)
        let logger = configuration.logger
        let timeout = configuration.requestTimeout
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: ResponseBody { writer in
            let lines = BatchHandOver<[UInt8]>(capacity: 2)
            let reader = Task {
                do {
                    try await server.readSnapshotJSON(batchSize: size, user: user.id) { json in
                        var line = json
                        line.append(UInt8(ascii: "\n"))
                        return await lines.put(line)
                    }
                    lines.finish(.success(()))
                } catch {
                    lines.finish(.failure(error))
                }
            }
            // A device that takes nothing for the request timeout (it stopped reading, its
            // connection open) ends the snapshot, so that its transaction is not held for
            // ever: the lines go out in pieces of 64 KiB, and a piece the connection has not
            // taken within the timeout closes the hand-over (the reader stops) — however slow
            // the device's network, as long as it takes something.
            let writing = StallWatch()  // since when a write of the answer waits for the connection
            let watchdog = Task {
                guard await writing.stalled(longerThan: timeout) else { return }
                logger.notice("a snapshot's device took nothing for \(timeout): the snapshot ends", metadata: ["user": "\(user.id)"])
                lines.close()
                reader.cancel()
            }
            defer {
                lines.close()
                reader.cancel()
                watchdog.cancel()
            }
            do {
                while let line = try await lines.next() {
                    var start = 0
                    while start < line.count {
                        let end = min(line.count, start + Self.snapshotPiece)
                        writing.began()
                        try await writer.write(ByteBuffer(bytes: line[start..<end]))
                        writing.ended()
                        start = end
                    }
                }
            } catch {
                logger.error("a snapshot ended midway", metadata: ["user": "\(user.id)", "error": "\(error)"])
                throw error
            }
            try await writer.finish(nil)
        })
    }

    /// The most bytes of a snapshot's line written at once (see ``snapshot(_:_:)``).
    static let snapshotPiece = 64 << 10

    /// Whether a `Content-Type` names JSON: `application/json` or a `+json` type, with any
    /// parameters (`; charset=utf-8`).
    static func isJSON(contentType: String) -> Bool {
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }

    /// `GET /v1/signals`: server-sent events: `ready` when the stream starts (the device
    /// pulls then: whatever changed before it listened), `change` whenever the server's data
    /// changed (at most one pending per device), and a comment every heartbeat; the stream
    /// ends when the token expires, or when the relay stops.
    func signals(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let user = try await authenticate(request)
        let hub = hub
        // The token is checked once, at the start: the stream ends when it expires.
        let expiresAt = user.expiresAt.map { ContinuousClock.now + .milliseconds(Int64(max(0, $0.timeIntervalSinceNow) * 1000)) }
        var headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        if let name = HTTPField.Name("X-Accel-Buffering") { headers[name] = "no" }
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            // Subscribed before `ready` is written (nothing changed after it is missed), and
            // only once the answer is under way (nothing is left subscribed by an answer never
            // written). Its heartbeats and expiry are the hub's clock's: no task of its own.
            let subscription = hub.subscribe(user: user.id, expiresAt: expiresAt)
            defer { hub.unsubscribe(subscription) }
            // A graceful shutdown ends the stream, whatever the order the app's services stop
            // in. A handler, not `cancelOnGracefulShutdown()` on the stream: that merges two
            // sequences through tasks of their own, about 10 KiB a connected device.
            try await withGracefulShutdownHandler {
                try await writer.write(ByteBuffer(string: "retry: 1000\nevent: ready\ndata: ready\n\n"))
                for await _ in subscription.stream {
                    let (change, ping) = subscription.take()
                    if change {
                        try await writer.write(ByteBuffer(string: "event: change\ndata: change\n\n"))
                    } else if ping {
                        try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                    }
                }
            } onGracefulShutdown: {
                subscription.finish()
            }
            try await writer.finish(nil)
        })
    }
}

/// One device's signals stream: a pending change and a pending heartbeat, each at most once;
/// its heartbeats and the end at its token's expiry come from the hub's clock
/// (``SignalHub/runClock(heartbeat:)``).
final class Subscription: @unchecked Sendable {
    let user: String
    let expiresAt: ContinuousClock.Instant?
    private let lock = NSLock()
    private var change = false
    private var ping = false
    private var lastBeat = ContinuousClock.now
    let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init(user: String, expiresAt: ContinuousClock.Instant?) {
        self.user = user
        self.expiresAt = expiresAt
        (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func signal(change: Bool) {
        lock.withLock {
            if change { self.change = true } else { ping = true }
        }
        continuation.yield()
    }

    func take() -> (change: Bool, ping: Bool) {
        lock.withLock {
            defer { (change, ping) = (false, false) }
            return (change, ping)
        }
    }

    /// A tick of the hub's clock: the stream ends when its token expired, and gets a heartbeat
    /// when one is due.
    func tick(now: ContinuousClock.Instant, heartbeat: Duration) {
        if let expiresAt, now >= expiresAt {
            finish()
            return
        }
        let due = lock.withLock {
            guard lastBeat.duration(to: now) >= heartbeat else { return false }
            lastBeat = now
            return true
        }
        if due { signal(change: false) }
    }

    func finish() { continuation.finish() }
}

/// A counter that hands out turns.
final class Turn: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.withLock {
            value &+= 1
            return value & Int.max
        }
    }
}
