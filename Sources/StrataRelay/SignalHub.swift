import Foundation
import Logging
import StrataSync

/// The change signals of one relay: ONE `changeSignals()` stream of the server (one
/// `LISTEN` connection), fanned out to the connected devices of the users each change
/// concerns.
///
/// After a server's signal, the hub asks which of its subscribers' users the changes logged
/// since the last one concern (`usersConcerned`: those who may read a changed object, or
/// everyone when a change may have taken an object out of someone's data or cannot be
/// traced), and signals their streams only; when that question fails, it signals everyone.
/// Each subscriber holds at most one pending signal (a device pulls everything on each, so
/// two signals are worth one), and signals that arrive while the hub asks are answered by
/// one question. When the server's stream ends or fails, the hub listens again after a
/// backoff, and then signals every subscriber: something may have changed meanwhile.
final class SignalHub: Sendable {
    private let state = LockedState()
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    private final class LockedState: @unchecked Sendable {
        let lock = NSLock()
        var subscribers: [ObjectIdentifier: Subscription] = [:]
        var finished = false
        /// Whether the server's stream is listening now.
        var listening = false
    }

    /// A new subscriber, a device of `user` whose token expires at `expiresAt`: its stream
    /// ends when the hub finishes (the relay stops), when the token expires (see
    /// ``runClock(heartbeat:)``), or with ``unsubscribe(_:)``.
    func subscribe(user: String, expiresAt: ContinuousClock.Instant?) -> Subscription {
        let subscription = Subscription(user: user, expiresAt: expiresAt)
        let added = state.lock.withLock { () -> Bool in
            guard !state.finished else { return false }
            state.subscribers[ObjectIdentifier(subscription)] = subscription
            RelayMetrics.record(signalStreams: state.subscribers.count)  // (under the lock: in order)
            return true
        }
        if !added { subscription.finish() }
        return subscription
    }

    /// Forgets `subscription` (its device went away, or its stream ended).
    func unsubscribe(_ subscription: Subscription) {
        subscription.finish()
        state.lock.withLock {
            guard state.subscribers.removeValue(forKey: ObjectIdentifier(subscription)) != nil else { return }
            RelayMetrics.record(signalStreams: state.subscribers.count)
        }
    }

    /// Every stream's heartbeat and token expiry, from one task for all of them (a stream of
    /// its own holds no task): each `tick` (a second at most, the heartbeat if shorter), a
    /// stream whose heartbeat is due gets one, and one whose token expired ends. Runs until
    /// the task is cancelled.
    func runClock(heartbeat: Duration) async {
        let tick = min(heartbeat, .seconds(1))
        while !Task.isCancelled {
            do { try await Task.sleep(for: tick) } catch { return }
            let now = ContinuousClock.now
            let subscribers = state.lock.withLock { Array(state.subscribers.values) }
            for subscription in subscribers { subscription.tick(now: now, heartbeat: heartbeat) }
        }
    }

    /// The number of connected subscribers.
    var subscriberCount: Int { state.lock.withLock { state.subscribers.count } }

    /// Whether the server's stream is listening.
    var isListening: Bool { state.lock.withLock { state.listening } }

    /// Signals every subscriber.
    func broadcast() { signal(users: nil) }

    /// Signals the subscribers of `users` (nil: every subscriber).
    func signal(users: Set<String>?) {
        let subscribers = state.lock.withLock { Array(state.subscribers.values) }
        for subscriber in subscribers where users?.contains(subscriber.user) ?? true { subscriber.signal(change: true) }
    }

    /// The users of the subscribers now.
    var users: [String] { state.lock.withLock { Array(Set(state.subscribers.values.map(\.user))) } }

    /// Ends every subscriber's stream, and refuses new ones.
    func finish() {
        let subscribers = state.lock.withLock { () -> [Subscription] in
            state.finished = true
            RelayMetrics.record(signalStreams: 0)
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Which users the changes logged after a position concern, among some users, and the
    /// log's last position (see `PostgresSyncServer.usersConcerned(after:among:)`).
    typealias Concerned = @Sendable (_ after: Int64?, _ among: [String]) async throws -> (position: Int64, users: Set<String>?)

    /// Listens to `server` until the task is cancelled: the relay's one `LISTEN`. `concerned`
    /// says whom each signal concerns.
    func run(server: any SyncServer, retryDelays: ClosedRange<Duration>, concerned: Concerned) async {
        var delay = retryDelays.lowerBound
        while !Task.isCancelled {
            do {
                let signals = try await server.changeSignals()
                var first = true
                // The log's position the last signals covered; nil: not known (everyone is
                // signalled, and the position read again).
                var position: Int64?
                for try await _ in signals {
                    if first {
                        first = false
                        delay = retryDelays.lowerBound
                        state.lock.withLock { state.listening = true }
                        logger.info("listening for the server's changes")
                    }
                    // The first signal says "listening": whatever changed while the hub was
                    // not listening is pulled by the devices on this one (everyone).
                    do {
                        let answer = try await concerned(position, users)
                        position = answer.position
                        signal(users: answer.users)
                    } catch {
                        logger.warning("could not tell whom a change concerns; signalling every device", metadata: ["error": "\(error)"])
                        position = nil
                        broadcast()
                    }
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
