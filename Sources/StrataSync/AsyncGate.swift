import Foundation

/// One at a time: an actor's reentrant methods that must not interleave across their
/// suspension points (a sync of ``StoreSync``: a push and its acknowledgement) pass through
/// a gate. Waiters go through in the order they arrived.
final class AsyncGate: @unchecked Sendable {
    private let lock = NSLock()
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let proceed = lock.withLock { () -> Bool in
                if busy {
                    waiters.append(continuation)
                    return false
                }
                busy = true
                return true
            }
            if proceed { continuation.resume() }
        }
    }

    func leave() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiters.isEmpty {
                busy = false
                return nil
            }
            return waiters.removeFirst()
        }
        next?.resume()
    }

    func run<T>(_ body: () async throws -> T) async throws -> T {
        await enter()
        defer { leave() }
        return try await body()
    }
}
