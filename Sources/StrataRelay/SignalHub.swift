import Foundation
import Logging
import StrataSync

/// The change signals of one relay: ONE `changeSignals()` stream of the server (one
/// `LISTEN` connection), fanned out to every connected device.
///
/// Each subscriber holds at most one pending signal (a device pulls everything on each, so
/// two signals are worth one). When the server's stream ends or fails, the hub listens again
/// after a backoff, and then signals every subscriber: something may have changed meanwhile.
final class SignalHub: Sendable {
    private let state = LockedState()
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    private final class LockedState: @unchecked Sendable {
        let lock = NSLock()
        var subscribers: [UUID: AsyncStream<Void>.Continuation] = [:]
        var finished = false
        /// Whether the server's stream is listening now.
        var listening = false
    }

    /// A new subscriber's stream: ends when the hub finishes (the relay stops) or when the
    /// caller stops iterating.
    func subscribe() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let added = state.lock.withLock { () -> Bool in
            guard !state.finished else { return false }
            state.subscribers[id] = continuation
            RelayMetrics.record(signalStreams: state.subscribers.count)  // (under the lock: in order)
            return true
        }
        guard added else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.state.lock.withLock {
                _ = self.state.subscribers.removeValue(forKey: id)
                RelayMetrics.record(signalStreams: self.state.subscribers.count)
            }
        }
        return stream
    }

    /// The number of connected subscribers.
    var subscriberCount: Int { state.lock.withLock { state.subscribers.count } }

    /// Whether the server's stream is listening.
    var isListening: Bool { state.lock.withLock { state.listening } }

    func broadcast() {
        let subscribers = state.lock.withLock { Array(state.subscribers.values) }
        for subscriber in subscribers { subscriber.yield() }
    }

    /// Ends every subscriber's stream, and refuses new ones.
    func finish() {
        let subscribers = state.lock.withLock { () -> [AsyncStream<Void>.Continuation] in
            state.finished = true
            RelayMetrics.record(signalStreams: 0)
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Listens to `server` until the task is cancelled: the relay's one `LISTEN`.
    func run(server: any SyncServer, retryDelays: ClosedRange<Duration>) async {
        var delay = retryDelays.lowerBound
        while !Task.isCancelled {
            do {
                let signals = try await server.changeSignals()
                var first = true
                for try await _ in signals {
                    if first {
                        first = false
                        delay = retryDelays.lowerBound
                        state.lock.withLock { state.listening = true }
                        logger.info("listening for the server's changes")
                    }
                    // The first signal says "listening": whatever changed while the hub was
                    // not listening is pulled by the devices on this one.
                    broadcast()
                }
                if !Task.isCancelled { logger.warning("the server's change signals ended; listening again") }
            } catch {
                if !Task.isCancelled {
                    logger.warning("the server's change signals failed, listening again in \(delay)", metadata: ["error": "\(error)"])
                }
            }
            state.lock.withLock { state.listening = false }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, retryDelays.upperBound)
        }
    }
}
