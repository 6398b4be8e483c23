import Foundation

/// Runs `work` in a task of its own and returns what it returns, or nil once `limit` has
/// passed first: a wait that would hang fails its test instead of holding the run.
///
/// Unlike a task group racing a sleep (or `.timeLimit`, which cancels the test and then
/// awaits it), this returns at the limit even when `work` ignores cancellation, as a wait on
/// a continuation that nothing resumes does: `work` is cancelled and left to end or not.
public func within<T: Sendable>(_ limit: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
        let race = Race(continuation)
        race.add(Task {
            do {
                race.finish(.success(try await work()))
            } catch {
                race.finish(.failure(error))
            }
        })
        race.add(Task {
            try? await Task.sleep(for: limit)
            race.finish(.success(nil))
        })
    }
}

/// A caller waiting for the first of its racers to finish; the others are then cancelled.
private final class Race<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T?, any Error>?
    private var racers: [Task<Void, Never>] = []

    init(_ continuation: CheckedContinuation<T?, any Error>) { self.continuation = continuation }

    func add(_ racer: Task<Void, Never>) {
        let over = lock.withLock { () -> Bool in
            if continuation == nil { return true }
            racers.append(racer)
            return false
        }
        if over { racer.cancel() }
    }

    /// The first result goes to the caller; later ones are dropped.
    func finish(_ result: Result<T?, any Error>) {
        let (waiting, others) = lock.withLock { () -> (CheckedContinuation<T?, any Error>?, [Task<Void, Never>]) in
            defer {
                continuation = nil
                racers = []
            }
            return (continuation, racers)
        }
        waiting?.resume(with: result)
        for racer in others { racer.cancel() }
    }
}
