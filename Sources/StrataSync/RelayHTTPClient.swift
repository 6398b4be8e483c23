import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A ``RelaySyncServer``'s requests over AsyncHTTPClient (SwiftNIO): the default transport
/// where Foundation's `URLSession` is FoundationNetworking's (Linux), whose delivery of each
/// chunk of an answer through Dispatch costs a streamed snapshot about a third of its time.
///
/// Its failures are Foundation's `URLError`s, as `URLSession`'s are, so that a relay out of
/// reach is recognised the same way whichever transport carries the requests: a request
/// past its time `.timedOut`, a relay that cannot be connected to `.cannotConnectToHost`
/// (`.secureConnectionFailed` for TLS), a connection lost once the answer began
/// `.networkConnectionLost`.
final class RelayHTTPClient: Sendable {
    let client: HTTPClient

    /// How long a connection for requests stays open without one: a device that is idle
    /// holds only its signals stream open on the relay, not a second connection as well.
    static let idleConnectionTimeout = TimeAmount.seconds(10)

    init() {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(30)))
        configuration.decompression = .disabled
        configuration.connectionPool = .init(idleTimeout: Self.idleConnectionTimeout)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    deinit {
        // Nothing waits for it: a request still under way fails as cancelled.
        client.shutdown { _ in }
    }

    /// A request and its whole answer, within `timeout`.
    func exchange(
        _ url: URL, method: HTTPMethod, headers: [(String, String)], body: Data?, timeout: Duration
    ) async throws -> (status: Int, body: Data) {
        let request = Self.request(url, method: method, headers: headers, body: body)
        var answered = false
        do {
            let response = try await client.execute(request, deadline: .now() + TimeAmount(timeout))
            answered = true
            let bytes = try await response.body.collect(upTo: Int.max)
            return (Int(response.status.code), Data(buffer: bytes, byteTransferStrategy: .noCopy))
        } catch {
            throw Self.foundationError(error, answered: answered)
        }
    }

    /// How a streamed answer ended.
    enum StreamEnd {
        /// 200, every chunk handed over (or the handler asked for no more).
        case ended
        /// Another status, with its body.
        case refused(Int, Data)
    }

    /// A request whose answer is handed over a chunk at a time as it arrives, the next read
    /// only once `chunk` returned true (false ends the request). The request fails with
    /// `URLError(.timedOut)` when the relay sends nothing for `idleTimeout` while the reader
    /// waits for it; the time `chunk` takes does not count.
    func stream(
        _ url: URL, method: HTTPMethod, headers: [(String, String)], body: Data?, idleTimeout: Duration,
        chunk: @escaping @Sendable (ByteBuffer) async throws -> Bool
    ) async throws -> StreamEnd {
        let request = Self.request(url, method: method, headers: headers, body: body)
        let watch = StallWatch()
        let client = client
        return try await withThrowingTaskGroup(of: StreamEnd?.self) { group in
            group.addTask {
                var answered = false
                do {
                    watch.began()
                    let response = try await client.execute(request, deadline: .distantFuture)
                    answered = true
                    guard response.status == .ok else {
                        let bytes = try await response.body.collect(upTo: 1 << 20)
                        return .refused(Int(response.status.code), Data(buffer: bytes))
                    }
                    var parts = response.body.makeAsyncIterator()
                    while true {
                        watch.began()
                        guard let part = try await parts.next() else { break }
                        watch.ended()
                        guard try await chunk(part) else { break }
                    }
                    watch.ended()
                    return .ended
                } catch {
                    throw Self.foundationError(error, answered: answered)
                }
            }
            group.addTask {
                // The watchdog: nil when the reader ended first (the group cancels it).
                if await watch.stalled(longerThan: idleTimeout) { throw URLError(.timedOut) }
                return nil
            }
            defer { group.cancelAll() }
            while let end = try await group.next() {
                if let end { return end }
            }
            throw CancellationError()
        }
    }

    static func request(_ url: URL, method: HTTPMethod, headers: [(String, String)], body: Data?) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        return request
    }

    /// `error` as `URLSession` would have reported it: a `URLError` for the network's
    /// failures (cancellation stays itself).
    static func foundationError(_ error: any Error, answered: Bool) -> any Error {
        if error is URLError || error is CancellationError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return CancellationError()
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .getConnectionFromPoolTimeout:
                return URLError(.timedOut)
            case .tlsHandshakeTimeout: return URLError(.secureConnectionFailed)
            case .remoteConnectionClosed: return URLError(answered ? .networkConnectionLost : .cannotConnectToHost)
            case .invalidURL, .emptyHost, .emptyScheme: return URLError(.badURL)
            default: break
            }
        }
        if "\(type(of: error))".contains("SSL") { return URLError(.secureConnectionFailed) }
        return URLError(answered ? .networkConnectionLost : .cannotConnectToHost)
    }
}

/// Since when something has been waiting, if it waits now: a streamed answer's reader for
/// the relay, the relay's write of a snapshot for the device. Its watchdog ends what waited
/// too long.
package final class StallWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var since: ContinuousClock.Instant?

    package init() {}

    /// The wait begins.
    package func began() { lock.withLock { since = .now } }
    /// The wait ended.
    package func ended() { lock.withLock { since = nil } }
    /// Whether the wait under way began more than `limit` ago.
    func waitedLonger(than limit: Duration) -> Bool {
        lock.withLock { since.map { $0.duration(to: .now) > limit } ?? false }
    }
    /// How long before the wait under way has lasted `limit` (zero when it has; `limit` when
    /// nothing waits: a wait that begins later lasts `limit` no sooner).
    func timeLeft(before limit: Duration) -> Duration {
        lock.withLock { since.map { max(.zero, limit - $0.duration(to: .now)) } ?? limit }
    }

    /// The watchdog: returns true once a wait has lasted longer than `limit`, false when the
    /// task is cancelled first. It wakes when the wait under way would reach `limit`, not on
    /// a beat: a stream open for hours wakes it about once a `limit`.
    package func stalled(longerThan limit: Duration) async -> Bool {
        while !Task.isCancelled {
            try? await Task.sleep(for: timeLeft(before: limit) + .milliseconds(1))
            if !Task.isCancelled, waitedLonger(than: limit) { return true }
        }
        return false
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
