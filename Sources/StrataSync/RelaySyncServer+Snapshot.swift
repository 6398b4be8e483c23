import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An empty store's first pull through a relay: the relay's snapshot of the user's data,
/// streamed as lines of JSON (`POST /v1/snapshot`).
extension RelaySyncServer {
    /// Reads the relay's snapshot of the user's data (see ``SyncServer/readSnapshot(batchSize:into:)``):
    /// one streamed answer, a line per batch of at most `batchSize` objects and at most
    /// 5,000, each handed to `body` as it arrives. Returns
    /// false, having called `body` never, when the relay has no snapshot route (an older one):
    /// the sync then reads the log. A stream that ends before its last batch throws (the sync
    /// applies none of it).
    public func readSnapshot(batchSize: Int, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        let relay = choice.current
        do {
            return try await readSnapshot(min(max(1, batchSize), Self.snapshotLineLimit), relay: relay, body)
        } catch {
            if Self.isOutOfReach(error) { choice.moveOn(from: relay) }
            throw error
        }
    }

    /// The most objects a line of the relay's snapshot holds, whatever the batch size asked:
    /// the relay writes a line while the device applies the one before, so shorter lines let
    /// the two overlap sooner (the first line) and longer (the last).
    static let snapshotLineLimit = 5_000

    private func readSnapshot(_ size: Int, relay: Int, _ body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        let json = try JSONEncoder().encode(SyncSnapshotRequest(batchSize: size))
        let reader = LineStreamReader()
        if let nio {
            // The transfer runs on its own, so that the next lines arrive while these apply.
            let url = endpoint("snapshot", relay: relay), timeout = requestTimeout
            let headers = try await headers(contentType: "application/json", accept: "application/x-ndjson")
            let transfer = Task {
                do {
                    let end = try await nio.stream(url, method: .POST, headers: headers, body: json, idleTimeout: timeout) { part in
                        reader.received(status: 200)
                        if part.withUnsafeReadableBytes({ reader.received($0) }) { await reader.waitWhileSuspended() }
                        return !reader.isClosed
                    }
                    if case .refused(let status, let answer) = end {
                        reader.received(status: status)
                        answer.withUnsafeBytes { _ = reader.received($0) }
                    }
                    reader.ended(nil)
                } catch {
                    reader.ended(error)
                }
            }
            defer {
                reader.close()
                transfer.cancel()
            }
            return try await readLines(reader, body)
        }
        var request = try await request("snapshot", relay: relay)
        request.httpMethod = "POST"
        request.timeoutInterval = Self.seconds(requestTimeout)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Accept")
        request.httpBody = json
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
        return try await readLines(reader, body)
    }

    /// Applies the snapshot's lines as `reader` takes them, whatever carries them.
    private func readLines(_ reader: LineStreamReader, _ body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        var last = false
        reading: while true {
            switch await reader.next() {
            case .line(let line):
                let batch: PullBatch
                do {
                    batch = try PullBatch(relayJSON: line)
                } catch {
                    throw SyncRelayError(status: 200, error: nil, reason: "a line of the relay's snapshot is not a SyncPullResult in JSON")
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
/// suspended while more than ``highWater`` bytes wait to be taken (8 MiB: a few lines of a
/// snapshot) with a whole line among them, and resumed below half or once no whole line
/// waits. A line under way alone never suspends it, however long: it could not complete, and
/// nothing would resume the transfer. So what waits is at most the high water (and a chunk),
/// or one line when a line is longer. Fed by `URLSession` as its delegate, or by
/// AsyncHTTPClient's chunks (``received(status:)``, ``received(_:)``, ``ended(_:)``, the
/// producer waiting in ``waitWhileSuspended()``).
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
    private var splitter = LineSplitter()  // the line under way
    private var refusal = Data()  // a refusal's body
    private var lines: [Data] = []
    private var linesBytes = 0
    /// The bytes received and not taken yet.
    private var buffered: Int { linesBytes + splitter.partial.count }
    private var suspended = false
    /// Whether the transfer is suspended (too much waits to be taken, a whole line among it).
    var isSuspended: Bool { lock.withLock { suspended } }
    /// Where `URLSession`'s task is suspended and resumed, one change at a time, so that its
    /// state follows the last of ``suspended``'s changes (see ``followSuspension(_:)``).
    private let transfer = DispatchQueue(label: "Strata.LineStreamReader.transfer")
    /// Whether `URLSession`'s task was last suspended (on ``transfer``).
    private var taskSuspended = false
    private var closed = false
    /// Whether the taker stopped taking lines (``close()``).
    var isClosed: Bool { lock.withLock { closed } }
    private var ending: Event?
    private var waiting: CheckedContinuation<Void, Never>?
    /// A producer waiting for the transfer to resume.
    private var producer: CheckedContinuation<Void, Never>?
    /// The transfer (suspended and resumed as lines wait).
    weak var task: URLSessionDataTask?

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        received(status: (response as? HTTPURLResponse)?.statusCode ?? 0)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if data.withUnsafeBytes({ received($0) }) { followSuspension(dataTask) }
    }

    /// Has `task` suspended or resumed as ``suspended`` says when the change is made, unless
    /// it already is. The delegate decides a suspension and the taker a resumption, each then
    /// calling this: the taker, woken by the chunk that completed a line, may take it and
    /// resume before the delegate has suspended, and a resume before its suspend would leave
    /// the task suspended for ever (the two nest). Read and applied one at a time on
    /// ``transfer``, the last call applies the last decision, whatever the order.
    ///
    /// The change is made on ``transfer``, not by the caller: `URLSession`'s `suspend()` and
    /// `resume()` wait for the session's own queue, and neither the delegate's queue nor the
    /// taker's thread (one of the few that run Swift's tasks) is to wait on it.
    private func followSuspension(_ task: URLSessionDataTask?) {
        guard let task else { return }
        transfer.async { [self] in
            let suspend = isSuspended
            guard suspend != taskSuspended else { return }
            taskSuspended = suspend
            if suspend { task.suspend() } else { task.resume() }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        ended(error)
    }

    /// The answer's status (before its first bytes).
    func received(status: Int) {
        lock.withLock { self.status = status }
    }

    /// Takes bytes of the answer: true when the transfer is to be suspended now.
    func received(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let (taker, suspend) = lock.withLock { () -> (CheckedContinuation<Void, Never>?, Bool) in
            guard status == 200 else {
                refusal.append(contentsOf: bytes)
                return (nil, false)
            }
            linesBytes += splitter.append(bytes, to: &lines)
            // Only while a whole line waits to be taken: its taking resumes the transfer.
            let suspend = !suspended && !closed && !lines.isEmpty && buffered > highWater
            if suspend { suspended = true }
            guard !lines.isEmpty else { return (nil, suspend) }  // the taker waits on
            defer { waiting = nil }
            return (waiting, suspend)
        }
        taker?.resume()
        return suspend
    }

    /// The answer ended, with `error` or whole.
    func ended(_ error: (any Error)?) {
        let taker = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard ending == nil else { return nil }
            if let error {
                ending = .failed(error)
            } else if status != 200 {
                ending = .refused(status, refusal)
            } else {
                if let last = splitter.finish() {  // a last line without its newline
                    lines.append(last)
                    linesBytes += last.count
                }
                ending = .end
            }
            defer { waiting = nil }
            return waiting
        }
        taker?.resume()
    }

    /// Returns once the transfer is no longer suspended (or the taker closed).
    func waitWhileSuspended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = lock.withLock {
                if !suspended || closed { return true }
                producer = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// The taker takes no more lines: a waiting producer goes on, to end.
    func close() {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            closed = true
            suspended = false
            defer { producer = nil }
            return producer
        }
        waiting?.resume()
    }

    /// The next line, or how the answer ended.
    func next() async -> Event {
        while true {
            let (event, resume, waitingProducer): (Event?, Bool, CheckedContinuation<Void, Never>?) = lock.withLock {
                if !lines.isEmpty {
                    let line = lines.removeFirst()
                    linesBytes -= line.count
                    // Below half, or nothing whole left to take: the line under way (a long
                    // one, maybe) is to come.
                    let resume = suspended && (lines.isEmpty || buffered < highWater / 2)
                    guard resume else { return (.line(line), false, nil) }
                    suspended = false
                    defer { producer = nil }
                    return (.line(line), true, producer)
                }
                return (ending, false, nil)
            }
            if resume {
                followSuspension(task)
                waitingProducer?.resume()
            }
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

/// Cuts a stream of bytes into lines (LF), whatever the size of its chunks: each chunk's
/// newlines found with memchr, the line under way kept until its newline comes. Empty lines
/// are left out.
struct LineSplitter {
    /// The line under way: what came after the last newline.
    private(set) var partial = Data()

    /// Takes a chunk: appends the lines it completes to `lines`, returns their bytes.
    mutating func append(_ bytes: UnsafeRawBufferPointer, to lines: inout [Data]) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var start = 0, taken = 0
        while start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) {
            let newline = base.distance(to: found)
            var line = partial
            partial = Data()
            line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
            if !line.isEmpty {
                lines.append(line)
                taken += line.count
            }
            start = newline + 1
        }
        if start < bytes.count { partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...])) }
        return taken
    }

    /// The stream ended: its last line, when it had no newline.
    mutating func finish() -> Data? {
        defer { partial = Data() }
        return partial.isEmpty ? nil : partial
    }
}
