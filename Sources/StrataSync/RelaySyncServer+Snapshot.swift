import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An empty store's first pull through a relay: the relay's snapshot of the user's data,
/// streamed as lines of JSON (`POST /v1/snapshot`).
extension RelaySyncServer {
    /// Reads the relay's snapshot of the user's data (see ``SyncServer/readSnapshot(batchSize:into:)``):
    /// one streamed answer, a line per batch, each handed to `body` as it arrives. Returns
    /// false, having called `body` never, when the relay has no snapshot route (an older one):
    /// the sync then reads the log. A stream that ends before its last batch throws (the sync
    /// applies none of it).
    public func readSnapshot(batchSize: Int, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        let relay = choice.current
        do {
            return try await readSnapshot(max(1, batchSize), relay: relay, body)
        } catch {
            if Self.isOutOfReach(error) { choice.moveOn(from: relay) }
            throw error
        }
    }

    private func readSnapshot(_ size: Int, relay: Int, _ body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        var request = try await request("snapshot", relay: relay)
        request.httpMethod = "POST"
        request.timeoutInterval = Self.seconds(requestTimeout)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Accept")
        request.httpBody = try JSONEncoder().encode(SyncSnapshotRequest(batchSize: size))
        let reader = LineStreamReader()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.seconds(requestTimeout)
        let session = URLSession(configuration: configuration, delegate: reader, delegateQueue: nil)
        let task = session.dataTask(with: request)
        reader.task = task
        defer {
            task.cancel()
            session.invalidateAndCancel()
        }
        task.resume()
        var last = false
        reading: while true {
            switch await reader.next() {
            case .line(let line):
                let batch: PullBatch
                if let read = PullBatch(columnarJSON: line) {
                    batch = read
                } else {
                    do {
                        batch = PullBatch(try JSONDecoder().decode(SyncPullResult.self, from: line))
                    } catch {
                        throw SyncRelayError(status: 200, error: nil, reason: "a line of the relay's snapshot is not a SyncPullResult in JSON")
                    }
                }
                last = !batch.hasMore
                guard await body(SyncPullBatch(batch: batch)) else { return true }
                if last { break reading }
            case .end:
                break reading
            case .failed(let error):
                throw error
            case .refused(404, _), .refused(405, _):
                return false  // a relay without the route: the log
            case .refused(let status, let answer):
                throw Self.error(status: status, body: answer, route: "snapshot")
            }
        }
        guard last else {
            throw SyncRelayError(status: 200, error: "incomplete_snapshot", reason: "the relay's snapshot ended before its last batch")
        }
        return true
    }
}

/// The lines of a streamed answer, taken one at a time as they arrive: the transfer is
/// suspended while more than ``highWater`` bytes wait to be taken, and resumed below half
/// (8 MiB: a few lines of a snapshot).
final class LineStreamReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    enum Event {
        case line(Data)
        /// The answer ended (its last line taken).
        case end
        case failed(any Error)
        /// An answer other than 200, with its body.
        case refused(Int, Data)
    }

    let highWater: Int

    init(highWater: Int = 8 << 20) { self.highWater = highWater }

    private let lock = NSLock()
    private var status = 0
    private var partial = Data()  // the line under way (or a refusal's body)
    private var lines: [Data] = []
    private var linesBytes = 0
    /// The bytes received and not taken yet.
    private var buffered: Int { linesBytes + partial.count }
    private var suspended = false
    /// Whether the transfer is suspended (too much waits to be taken).
    var isSuspended: Bool { lock.withLock { suspended } }
    private var ending: Event?
    private var waiting: CheckedContinuation<Void, Never>?
    /// The transfer (suspended and resumed as lines wait).
    weak var task: URLSessionDataTask?

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        lock.withLock { status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (taker, suspend) = lock.withLock { () -> (CheckedContinuation<Void, Never>?, Bool) in
            guard status == 200 else {
                partial.append(data)
                return (nil, false)
            }
            // The newlines of this chunk only (what came before holds none), found with memchr.
            var start = 0
            data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                guard let base = bytes.baseAddress else { return }
                while start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) {
                    let newline = base.distance(to: found)
                    var line = partial
                    partial = Data()
                    line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                    if !line.isEmpty {
                        lines.append(line)
                        linesBytes += line.count
                    }
                    start = newline + 1
                }
            }
            if start < data.count { partial.append(data[(data.startIndex + start)...]) }
            let suspend = !suspended && buffered > highWater
            if suspend { suspended = true }
            guard !lines.isEmpty else { return (nil, suspend) }  // the taker waits on
            defer { waiting = nil }
            return (waiting, suspend)
        }
        if suspend { dataTask.suspend() }
        taker?.resume()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let taker = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if let error {
                ending = .failed(error)
            } else if status != 200 {
                ending = .refused(status, partial)
            } else {
                if !partial.isEmpty {  // a last line without its newline
                    lines.append(partial)
                    linesBytes += partial.count
                }
                ending = .end
            }
            partial = Data()
            defer { waiting = nil }
            return waiting
        }
        taker?.resume()
    }

    /// The next line, or how the answer ended.
    func next() async -> Event {
        while true {
            let (event, resume): (Event?, Bool) = lock.withLock {
                if !lines.isEmpty {
                    let line = lines.removeFirst()
                    linesBytes -= line.count
                    let resume = suspended && buffered < highWater / 2
                    if resume { suspended = false }
                    return (.line(line), resume)
                }
                return (ending, false)
            }
            if resume { task?.resume() }
            if let event { return event }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = lock.withLock {
                    if !lines.isEmpty || ending != nil { return true }
                    waiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
