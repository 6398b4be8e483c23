import Foundation
@testable import StrataSync
import StrataTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The lines of a relay's snapshot as they arrive in chunks of any size (RelaySyncServer+Snapshot.swift):
/// each line whole, in order, taken while the rest arrives; the transfer suspended while more
/// than the high water waits with a whole line among it, and resumed below half or once no
/// whole line waits (a longer line still completes).
@Suite("A streamed answer's lines")
struct LineStreamReaderTests {
    /// Lines up to four times the high water. The transfer waits while it is suspended, as a
    /// real one does. (A taker never woken, or a suspension never resumed, would wait for
    /// ever: the limits make that a failure.)
    @Test(.timeLimit(.minutes(1)), arguments: 0..<30)
    func linesArriveWholeInOrderWhateverTheChunks(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let highWater = 256
        let lines: [String] = (0..<Int.random(in: 0...40, using: &random)).map { _ in
            let length = [0, 1, 5, 100, 300, 1_000].randomElement(using: &random)!
            return String((0..<length).map { _ in "abcdé😀{}\"\\ ".randomElement(using: &random)! })
        }
        var text = Data(lines.joined(separator: "\n").utf8)
        if Bool.random(using: &random) { text.append(UInt8(ascii: "\n")) }  // a last newline, or none
        let reader = LineStreamReader(highWater: highWater)
        let session = URLSession(configuration: .ephemeral)
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
        defer { session.invalidateAndCancel() }
        reader.urlSession(session, dataTask: task, didReceive: HTTPURLResponse(url: URL(string: "http://127.0.0.1:1/")!, statusCode: 200, httpVersion: nil, headerFields: nil)!) { _ in }
        let taken = Task {
            var taken: [String] = []
            while true {
                switch await reader.next() {
                case .line(let line): taken.append(String(decoding: line, as: UTF8.self))
                case .end: return taken
                case .failed(let error): throw error
                case .refused(let status, _): throw SyncRelayError(status: status, error: nil, reason: "refused")
                }
            }
        }
        var offset = 0
        while offset < text.count {
            let size = min(text.count - offset, Int.random(in: 1...700, using: &random))
            reader.urlSession(session, dataTask: task, didReceive: text.subdata(in: offset..<offset + size))
            offset += size
            if reader.isSuspended, try await within(.seconds(10), { await reader.waitWhileSuspended() }) == nil {
                Issue.record("seed \(seed): suspended at \(offset) of \(text.count) bytes, and never resumed")
                reader.close()
                break
            }
            if Int.random(in: 0..<3, using: &random) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        reader.urlSession(session, task: task, didCompleteWithError: nil)
        #expect(try await taken.value == lines.filter { !$0.isEmpty }, "seed \(seed)")
        #expect(!reader.isSuspended, "seed \(seed): suspended after every line was taken")
    }

    @Test func theTransferIsSuspendedAboveTheHighWaterAndResumedBelowHalf() async {
        let reader = LineStreamReader(highWater: 1_000)
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        // (`reader.task` stays nil: the test's task is never resumed, only its suspension counted.)
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
        reader.urlSession(session, dataTask: task, didReceive: HTTPURLResponse(url: URL(string: "http://127.0.0.1:1/")!, statusCode: 200, httpVersion: nil, headerFields: nil)!) { _ in }
        let line = Data(repeating: UInt8(ascii: "x"), count: 299) + Data("\n".utf8)
        for _ in 0..<3 { reader.urlSession(session, dataTask: task, didReceive: line) }
        #expect(!reader.isSuspended)  // 897 bytes wait
        reader.urlSession(session, dataTask: task, didReceive: line)
        #expect(reader.isSuspended)  // 1,196
        guard case .line = await reader.next() else {
            Issue.record("no line")
            return
        }
        #expect(reader.isSuspended)  // 897: not below half
        guard case .line = await reader.next() else {
            Issue.record("no line")
            return
        }
        #expect(reader.isSuspended)  // 598
        guard case .line = await reader.next() else {
            Issue.record("no line")
            return
        }
        #expect(!reader.isSuspended)  // 299: resumed
    }

    /// A line under way never suspends the transfer, however long: it could not complete,
    /// and nothing would resume the transfer. Once whole it does, over the high water, until
    /// it is taken, though the next line's start still waits.
    @Test(.timeLimit(.minutes(1)))
    func aLineLongerThanTheHighWaterIsNeverHeldBack() async throws {
        let reader = LineStreamReader(highWater: 1_000)
        reader.received(status: 200)
        let long = Data(repeating: UInt8(ascii: "x"), count: 2_500)
        let suspends = stride(from: 0, to: long.count, by: 100).map { start in
            long[start..<start + 100].withUnsafeBytes { reader.received($0) }
        }
        #expect(!suspends.contains(true), "suspended while a line under way alone waited")
        #expect(!reader.isSuspended)
        // Its newline and 600 bytes of the next line: a whole line waits, over the high water.
        let next = Data("\n".utf8) + Data(repeating: UInt8(ascii: "y"), count: 600)
        #expect(next.withUnsafeBytes { reader.received($0) })
        #expect(reader.isSuspended)
        guard case .line(let line) = await reader.next() else {
            Issue.record("no line")
            return
        }
        #expect(line == long)
        // 600 bytes wait, over half the high water, but no whole line: resumed, and a
        // producer (AsyncHTTPClient's chunks) goes on.
        #expect(!reader.isSuspended)
        #expect(try await within(.seconds(10)) { await reader.waitWhileSuspended() } != nil, "the producer waits on")
    }

    @Test func anAnswerOtherThan200IsARefusalWithItsBody() async {
        let reader = LineStreamReader()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
        reader.urlSession(session, dataTask: task, didReceive: HTTPURLResponse(url: URL(string: "http://127.0.0.1:1/")!, statusCode: 401, httpVersion: nil, headerFields: nil)!) { _ in }
        reader.urlSession(session, dataTask: task, didReceive: Data("{\"error\":\"expired_token\",\n".utf8))
        reader.urlSession(session, dataTask: task, didReceive: Data("\"reason\":\"old\"}".utf8))
        reader.urlSession(session, task: task, didCompleteWithError: nil)
        guard case .refused(401, let body) = await reader.next() else {
            Issue.record("not a refusal")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == "{\"error\":\"expired_token\",\n\"reason\":\"old\"}")
    }

    /// The other feeder, AsyncHTTPClient's chunks: its producer waits in
    /// `waitWhileSuspended()` until the taker has taken the buffer below half, or closed.
    @Test(.timeLimit(.minutes(1)))
    func aProducerWaitsWhileSuspendedUntilHalfIsTakenOrTheTakerCloses() async throws {
        let reader = LineStreamReader(highWater: 1_000)
        reader.received(status: 200)
        let line = Data(repeating: UInt8(ascii: "x"), count: 299) + Data("\n".utf8)
        let suspends = (0..<4).map { _ in line.withUnsafeBytes { reader.received($0) } }
        #expect(suspends == [false, false, false, true])  // 1,196 bytes wait after the fourth
        let resumed = Locked(false)
        let producer = Task {
            await reader.waitWhileSuspended()
            resumed.withLock { $0 = true }
        }
        for taken in 1...3 {
            try await Task.sleep(for: .milliseconds(50))
            #expect(!resumed.withLock { $0 }, "the producer went on with \(taken - 1) lines taken")
            guard case .line = await reader.next() else {
                Issue.record("no line")
                return
            }
        }
        await producer.value  // 299 bytes wait: below half
        #expect(!reader.isSuspended)

        // Suspended again, then the taker stops taking: the producer goes on, told to stop.
        for _ in 0..<4 { _ = line.withUnsafeBytes { reader.received($0) } }
        #expect(reader.isSuspended)
        let stopped = Task { await reader.waitWhileSuspended() }
        try await Task.sleep(for: .milliseconds(50))
        reader.close()
        await stopped.value
        #expect(reader.isClosed)
        #expect(!line.withUnsafeBytes { reader.received($0) }, "a closed reader asks for no suspension")
        reader.ended(nil)
        reader.ended(URLError(.timedOut))  // only the first ending counts
        var lines = 0
        while case .line = await reader.next() { lines += 1 }
        #expect(lines == 6)
    }
}
