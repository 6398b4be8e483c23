import Foundation

/// Hands the batches of one pull from the task that reads them from the server to the one
/// local transaction that applies them all, a few at a time: the transaction waits (blocking
/// the store's writer, not a task) for the next batch while the reader reads it, and the
/// reader waits (suspended, not blocking) while `capacity` batches are not applied yet.
/// Closing it (the transaction ended, or the reader failed) releases both sides.
final class BatchHandOver<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var end: Result<Void, any Error>?
    private var closed = false
    private var waitingReader: CheckedContinuation<Bool, Never>?
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Adds `element` once there is room; false when the other side has closed.
    func put(_ element: Element) async -> Bool {
        let room: Bool? = condition.withLock {
            if closed { return false }
            if items.count < capacity {
                items.append(element)
                condition.broadcast()
                return true
            }
            return nil
        }
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
    func finish(_ result: Result<Void, any Error>) {
        condition.withLock {
            if end == nil { end = result }
            condition.broadcast()
        }
    }

    /// The next batch, waiting for it; nil after the last. Rethrows the reader's failure.
    func take() throws -> Element? {
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
    func close() {
        let reader: CheckedContinuation<Bool, Never>? = condition.withLock {
            closed = true
            condition.broadcast()
            let reader = waitingReader
            waitingReader = nil
            return reader
        }
        reader?.resume(returning: false)
    }
}
