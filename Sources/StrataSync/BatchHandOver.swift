import Foundation

/// Hands the batches of one pull from the task that reads them from the server to the one
/// local transaction that applies them all, a few at a time: the transaction waits (blocking
/// the store's writer, not a task) for the next batch while the reader reads it, and the
/// reader waits (suspended, not blocking) while `capacity` batches are not applied yet.
/// Closing it (the transaction ended, or the reader failed) releases both sides. A taker on a
/// task (a relay streaming a snapshot) waits with ``next()``, suspended.
package final class BatchHandOver<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var end: Result<Void, any Error>?
    private var closed = false
    private var waitingReader: CheckedContinuation<Bool, Never>?
    /// The taker suspended in ``next()``, resumed by whatever gives it something to take.
    private var waitingTaker: CheckedContinuation<Void, Never>?
    private let capacity: Int

    package init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Whether ``take()`` would return at once (under the lock).
    private var isReady: Bool { !items.isEmpty || end != nil || closed }

    /// Resumes the taker suspended in ``next()`` (under the lock); the caller resumes it
    /// after unlocking.
    private func releaseTaker() -> CheckedContinuation<Void, Never>? {
        defer { waitingTaker = nil }
        return waitingTaker
    }

    /// Adds `element` once there is room; false when the other side has closed.
    package func put(_ element: Element) async -> Bool {
        let (room, taker): (Bool?, CheckedContinuation<Void, Never>?) = condition.withLock {
            if closed { return (false, nil) }
            if items.count < capacity {
                items.append(element)
                condition.broadcast()
                return (true, releaseTaker())
            }
            return (nil, nil)
        }
        taker?.resume()
        if let room { return room }
        let open = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            condition.withLock {
                if closed || items.count < capacity {
                    continuation.resume(returning: !closed)
                } else {
                    waitingReader = continuation
                }
            }
        }
        return open ? await put(element) : false
    }

    /// Marks the end of the batches (`.success`) or the reader's failure.
    package func finish(_ result: Result<Void, any Error>) {
        let taker = condition.withLock {
            if end == nil { end = result }
            condition.broadcast()
            return releaseTaker()
        }
        taker?.resume()
    }

    /// The next batch, waiting for it; nil after the last. Rethrows the reader's failure.
    package func take() throws -> Element? {
        condition.lock()
        while items.isEmpty && end == nil && !closed { condition.wait() }
        var element: Element?
        var reader: CheckedContinuation<Bool, Never>?
        var failure: (any Error)?
        if !items.isEmpty {
            element = items.removeFirst()
            reader = waitingReader
            waitingReader = nil
        } else if case .failure(let error) = end {
            failure = error
        }
        condition.unlock()
        reader?.resume(returning: true)
        if let failure { throw failure }
        return element
    }

    /// Ends the hand-over: a reader waiting for room, or one that puts later, is told so.
    package func close() {
        let (reader, taker) = condition.withLock {
            closed = true
            condition.broadcast()
            let reader = waitingReader
            waitingReader = nil
            return (reader, releaseTaker())
        }
        reader?.resume(returning: false)
        taker?.resume()
    }

    /// ``take()`` for a taker on a task (one at a time): it waits suspended, not blocking its
    /// thread.
    package func next() async throws -> Element? {
        while true {
            if condition.withLock({ isReady }) { return try take() }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = condition.withLock {
                    if isReady { return true }
                    waitingTaker = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
