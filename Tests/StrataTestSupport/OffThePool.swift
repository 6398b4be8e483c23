import Foundation

/// Runs blocking work (a program started and waited for, a pipe read with `poll`) on a
/// thread of its own, and awaits it.
///
/// Never block a thread of Swift's cooperative pool in a test: the pool has as many threads
/// as the machine has cores (two on CI's machines), and every test of the run shares it. Two
/// tests waiting there at once (for `psql`, say, in a loop that polls the server) hold
/// every other test's tasks back: a request whose timeout is a deadline then times out
/// without having run, and a server's background work stops.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
