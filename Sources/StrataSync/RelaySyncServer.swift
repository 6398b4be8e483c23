import Foundation
import Strata

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server of record reached through a relay (`strata-relay`, or the StrataRelay routes in
/// a Hummingbird app of yours) over HTTP: the device holds a sign-in token, never database
/// credentials. Moving an app from direct PostgreSQL to a relay changes one line:
///
/// ```swift
/// let server = RelaySyncServer(url: URL(string: "https://sync.example.com")!) {
///     try await session.accessToken()      // your sign-in: a JWT the relay accepts
/// }
/// let sync = try StoreSync(store: store, server: server)
/// ```
///
/// Each request asks `token` for the token to send (so that the app can refresh it), and
/// posts the message as JSON to `<url>/v1/hello`, `/v1/push` or `/v1/pull`; the change
/// signals are the server-sent events of `<url>/v1/signals`. A token the relay refuses fails
/// with ``SyncAuthenticationError`` (the relay's reason in words); any other refusal with
/// ``SyncRelayError``; a relay out of reach with Foundation's `URLError`. The background
/// sync (``StoreSync/start()``) retries each of them, asking for the token again each time.
///
/// **Several relays.** Given several URLs (``init(urls:requestTimeout:signalsTimeout:token:)``),
/// requests go to the first until it is out of reach — it cannot be connected to, the
/// connection is lost, it does not answer in time, or it answers 502, 503 or 504 — and then
/// to the next, in turn. The request that met the failure fails as before (the background
/// sync retries it, through the next relay); nothing else changes, since relays keep no
/// state a device depends on: a push whose answer was lost is answered again from the
/// database, and a pull goes on from the device's cursor.
public final class RelaySyncServer: SyncServer {
    /// The relays, in the order they are tried.
    public let urls: [URL]
    /// The relay requests go to now: the first of ``urls`` until one is out of reach.
    public var url: URL { urls[choice.current] }
    let choice: RelayChoice
    let token: @Sendable () async throws -> String
    let requestTimeout: Duration
    let signalsTimeout: Duration
    /// What carries the requests.
    public let transport: Transport
    let session: URLSession
    /// The requests' client when ``transport`` is ``Transport/asyncHTTPClient``.
    let nio: RelayHTTPClient?

    /// What carries a ``RelaySyncServer``'s requests. Both speak HTTP/1.1 (HTTPS with the
    /// system's trusted certificates) and report a relay out of reach as Foundation's
    /// `URLError`; they differ in cost.
    public enum Transport: Hashable, Sendable {
        /// Foundation's `URLSession`: the default where Foundation has its own (Apple's
        /// platforms), which also follows the system's proxy settings.
        case urlSession
        /// AsyncHTTPClient, on SwiftNIO (which `StrataSync` already links for PostgreSQL): the
        /// default where `URLSession` is FoundationNetworking's (Linux, Windows), whose
        /// delivery of each chunk of an answer through Dispatch made a first sync of 100,000
        /// objects about a third slower.
        case asyncHTTPClient

        /// ``urlSession`` where Foundation has its own, ``asyncHTTPClient`` elsewhere.
        public static var platformDefault: Transport {
            #if canImport(FoundationNetworking)
            .asyncHTTPClient
            #else
            .urlSession
            #endif
        }
    }

    /// A server behind the relay at `url`. A request that gets no answer within
    /// `requestTimeout` fails; a signals stream that receives nothing (not even the relay's
    /// heartbeat) for `signalsTimeout` ends, and the background sync opens another.
    /// `transport` carries the requests (see ``Transport``).
    public convenience init(
        url: URL, requestTimeout: Duration = .seconds(60), signalsTimeout: Duration = .seconds(60),
        transport: Transport = .platformDefault, token: @escaping @Sendable () async throws -> String
    ) {
        self.init(urls: [url], requestTimeout: requestTimeout, signalsTimeout: signalsTimeout, transport: transport, token: token)
    }

    /// A server behind any of the relays at `urls` (at least one), which serve one database:
    /// requests go to the first until it is out of reach, then to the next, in turn.
    public init(
        urls: [URL], requestTimeout: Duration = .seconds(60), signalsTimeout: Duration = .seconds(60),
        transport: Transport = .platformDefault, token: @escaping @Sendable () async throws -> String
    ) {
        precondition(!urls.isEmpty, "a RelaySyncServer needs the URL of at least one relay")
        self.urls = urls
        choice = RelayChoice(count: urls.count)
        self.token = token
        self.requestTimeout = requestTimeout
        self.signalsTimeout = signalsTimeout
        self.transport = transport
        nio = transport == .asyncHTTPClient ? RelayHTTPClient() : nil
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.seconds(requestTimeout)
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    public func hello(_ hello: SyncHello) async throws -> SyncWelcome { try await post("hello", hello) }

    public func push(_ push: SyncPush) async throws -> SyncPushResult { try await post("push", push) }

    public func pull(_ request: SyncPullRequest) async throws -> SyncPullResult { try await post("pull", request) }

    /// A pull whose objects come by table (``SyncPullRequest/columnar``): each table's columns
    /// once and each row's values in order, not a dictionary per object, which costs most of
    /// a large pull's time to encode and decode. A relay of an earlier version answers with
    /// changes, which the sync takes as well.
    public func pullBatch(_ request: SyncPullRequest) async throws -> SyncPullBatch {
        var request = request
        request.columnar = true
        // The relay's answer is read by hand (PullBatch+JSON.swift); JSONDecoder reads what
        // that reader does not take.
        return try await post("pull", request) { SyncPullBatch(batch: try PullBatch(relayJSON: $0)) }
    }

    func endpoint(_ route: String, relay: Int) -> URL {
        urls[relay].appendingPathComponent("v1").appendingPathComponent(route)
    }

    func request(_ route: String, relay: Int) async throws -> URLRequest {
        var request = URLRequest(url: endpoint(route, relay: relay))
        request.setValue("Bearer \(try await token())", forHTTPHeaderField: "Authorization")
        return request
    }

    /// The headers of a request to a relay: the token, and what the body and answer are.
    func headers(contentType: String?, accept: String) async throws -> [(String, String)] {
        var headers = [("Authorization", "Bearer \(try await token())"), ("Accept", accept)]
        if let contentType { headers.append(("Content-Type", contentType)) }
        return headers
    }

    /// Whether `error` says that the relay is out of reach (not that it refused): the next
    /// request goes to the next relay.
    static func isOutOfReach(_ error: any Error) -> Bool {
        if let error = error as? SyncRelayError { return [502, 503, 504].contains(error.status) }
        guard let error = error as? URLError else { return false }
        let codes: Set<URLError.Code> = [
            .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .networkConnectionLost, .notConnectedToInternet,
            .timedOut, .badServerResponse, .secureConnectionFailed, .zeroByteResource,
        ]
        return codes.contains(error.code)
    }

    func post<Body: Encodable, Answer: Decodable>(_ route: String, _ body: Body) async throws -> Answer {
        try await post(route, body) { try JSONDecoder().decode(Answer.self, from: $0) }
    }

    /// ``post(_:_:)``, the answer read by `decode`.
    func post<Body: Encodable, Answer>(_ route: String, _ body: Body, decode: (Data) throws -> Answer) async throws -> Answer {
        let relay = choice.current
        do {
            return try await post(route, body, relay: relay, decode: decode)
        } catch {
            if Self.isOutOfReach(error) { choice.moveOn(from: relay) }
            throw error
        }
    }

    private func post<Body: Encodable, Answer>(_ route: String, _ body: Body, relay: Int, decode: (Data) throws -> Answer) async throws -> Answer {
        let json = try JSONEncoder().encode(body)
        let data: Data, status: Int
        // Not cancelled with the caller: a sync under way finishes (as over PostgreSQL) when
        // the background sync stops.
        if let nio {
            let url = endpoint(route, relay: relay), timeout = requestTimeout
            let headers = try await headers(contentType: "application/json", accept: "application/json")
            (status, data) = try await Task { try await nio.exchange(url, method: .POST, headers: headers, body: json, timeout: timeout) }.value
        } else {
            var request = try await request(route, relay: relay)
            request.httpMethod = "POST"
            request.timeoutInterval = Self.seconds(requestTimeout)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            request.httpBody = json
            let session = session, sent = request
            let response: URLResponse
            (data, response) = try await Task { try await session.data(for: sent) }.value
            status = (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        guard status == 200 else { throw Self.error(status: status, body: data, route: route) }
        do {
            return try decode(data)
        } catch {
            throw SyncRelayError(status: status, error: nil, reason: "the relay's answer to \(route) is not a \(Answer.self) in JSON")
        }
    }

    /// A refusal's error: the relay's body is `{"error": "...", "reason": "..."}`.
    static func error(status: Int, body: Data, route: String) -> any Error {
        struct Refusal: Decodable {
            var error: String
            var reason: String
        }
        let refusal = try? JSONDecoder().decode(Refusal.self, from: body)
        if status == 401 {
            return SyncAuthenticationError(
                error: refusal?.error ?? "unauthorized", reason: refusal?.reason ?? "the relay refused the token (HTTP 401)")
        }
        return SyncRelayError(
            status: status, error: refusal?.error,
            reason: refusal?.reason ?? "the relay answered \(route) with HTTP \(status)")
    }

    /// The relay's server-sent events: one signal when the stream starts (the relay
    /// listens), then one whenever data this device's user may read changed.
    public func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> {
        let relay = choice.current
        if let nio { return try await changeSignals(relay: relay, nio) }
        var request = try await request("signals", relay: relay)
        request.httpMethod = "GET"
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.timeoutInterval = Self.seconds(signalsTimeout)
        let (stream, continuation) = AsyncThrowingStream<Void, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let choice = choice
        let reader = EventStreamReader(continuation: continuation) { error in
            if Self.isOutOfReach(error) { choice.moveOn(from: relay) }
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.seconds(signalsTimeout)
        let session = URLSession(configuration: configuration, delegate: reader, delegateQueue: nil)
        let task = session.dataTask(with: request)
        continuation.onTermination = { _ in
            task.cancel()
            session.invalidateAndCancel()
        }
        task.resume()
        return stream
    }
}

extension RelaySyncServer {
    /// ``changeSignals()`` over AsyncHTTPClient: a task reads the events and ends with the
    /// stream.
    private func changeSignals(relay: Int, _ nio: RelayHTTPClient) async throws -> AsyncThrowingStream<Void, any Error> {
        let url = endpoint("signals", relay: relay), timeout = signalsTimeout, choice = choice
        let headers = try await headers(contentType: nil, accept: "text/event-stream")
        let (stream, continuation) = AsyncThrowingStream<Void, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            let parser = Locked(EventStreamParser())
            do {
                let end = try await nio.stream(url, method: .GET, headers: headers, body: nil, idleTimeout: timeout) { part in
                    let signals = parser.withLock { $0.append(part.readableBytesView) }
                    for _ in 0..<signals { continuation.yield() }
                    return true
                }
                switch end {
                case .ended:
                    continuation.finish()
                case .refused(let status, let body):
                    let error = Self.error(status: status, body: body, route: "signals")
                    if Self.isOutOfReach(error) { choice.moveOn(from: relay) }
                    continuation.finish(throwing: error)
                }
            } catch {
                if Self.isOutOfReach(error) { choice.moveOn(from: relay) }
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// A value behind a lock, for the state of a streamed answer's handler.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}

/// Reads a `text/event-stream` answer: each `ready` or `change` event is a signal; comments
/// (the heartbeat) are not. An answer other than 200 ends the stream with its error.
final class EventStreamReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private let continuation: AsyncThrowingStream<Void, any Error>.Continuation
    private var status = 0
    private var buffer = Data()  // a refusal's body
    private var parser = EventStreamParser()
    /// Told the error that ends the stream.
    private let failed: @Sendable (any Error) -> Void

    init(continuation: AsyncThrowingStream<Void, any Error>.Continuation, failed: @escaping @Sendable (any Error) -> Void = { _ in }) {
        self.continuation = continuation
        self.failed = failed
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        lock.withLock { status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events: Int = lock.withLock {
            guard status == 200 else {
                buffer.append(data)
                return 0
            }
            return parser.append(data)
        }
        for _ in 0..<events { continuation.yield() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (status, body) = lock.withLock { (self.status, buffer) }
        if status != 200, status != 0 {
            let error = RelaySyncServer.error(status: status, body: body, route: "signals")
            failed(error)
            continuation.finish(throwing: error)
        } else if let error {
            failed(error)
            continuation.finish(throwing: error)
        } else {
            continuation.finish()
        }
    }
}

/// The signals of a `text/event-stream` answer, whatever the size of its chunks: each
/// `ready` or `change` event is one; comments (the heartbeat) are not.
struct EventStreamParser {
    private var buffer = Data()

    /// Takes a chunk of the answer: the number of signals among the events it completes.
    mutating func append(_ data: some DataProtocol) -> Int {
        buffer.append(contentsOf: data)
        var count = 0
        // Events end with a blank line (LF LF, or CR LF CR LF).
        while let end = Self.eventEnd(in: buffer) {
            let event = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer = Data(buffer[end.upperBound...])
            if Self.isSignal(event) { count += 1 }
        }
        return count
    }

    static func eventEnd(in data: Data) -> Range<Data.Index>? {
        let lf = data.range(of: Data("\n\n".utf8)), crlf = data.range(of: Data("\r\n\r\n".utf8))
        switch (lf, crlf) {
        case (let a?, let b?): return a.lowerBound <= b.lowerBound ? a : b
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }

    /// An event whose type (`event:`, `message` when absent) is `ready` or `change`, or a
    /// bare `data:` event; comment lines (`:`) alone are not events.
    static func isSignal(_ event: String) -> Bool {
        var type: String?
        var hasData = false
        for line in event.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if line.hasPrefix(":") { continue }
            if line.hasPrefix("event:") { type = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("data") { hasData = true }
        }
        switch type {
        case "ready", "change": return true
        case nil: return hasData
        default: return false
        }
    }
}

/// The relay refused the device's token (HTTP 401): missing, malformed, forged, expired, not
/// yet valid, or for another audience or issuer. `reason` is the relay's, in words. Nothing
/// is lost: the changes stay in the store and are pushed once a token is accepted (the
/// background sync retries, asking the token provider again each time).
public struct SyncAuthenticationError: StrataError {
    /// The relay's code: `missing_token`, `malformed_token`, `invalid_signature`,
    /// `expired_token`, `token_not_yet_valid`, `wrong_audience`, `wrong_issuer`, `invalid_token`.
    public var error: String
    /// What was wrong, in words.
    public var reason: String

    public init(error: String, reason: String) {
        self.error = error
        self.reason = reason
    }

    public var description: String { "sync: the relay refused the sign-in (\(error)): \(reason)" }
}

/// The relay answered with an HTTP status other than 200 and 401: `status`, and the relay's
/// `error` code and `reason` when it gave them (413 `body_too_large`, 400 `malformed_body`,
/// 409 `model_mismatch`, 503 `database_unavailable`, …). The background sync retries.
public struct SyncRelayError: StrataError {
    public var status: Int
    public var error: String?
    public var reason: String

    public init(status: Int, error: String?, reason: String) {
        self.status = status
        self.error = error
        self.reason = reason
    }

    public var description: String {
        "sync: the relay answered HTTP \(status)\(error.map { " (\($0))" } ?? ""): \(reason)"
    }
}

/// Which of a ``RelaySyncServer``'s relays its requests go to: the first, until one is out of
/// reach, then the next, in turn.
final class RelayChoice: @unchecked Sendable {
    private let lock = NSLock()
    private var index = 0
    let count: Int

    init(count: Int) { self.count = count }

    /// The relay requests go to now.
    var current: Int { lock.withLock { index } }

    /// The relay `failed` was out of reach: requests go to the next one, unless another
    /// request that failed there moved them on already.
    func moveOn(from failed: Int) {
        lock.withLock { if index == failed { index = (index + 1) % count } }
    }
}
