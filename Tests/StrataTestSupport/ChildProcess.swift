import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Ending the processes a test started, without Foundation's `waitUntilExit()`.
///
/// Foundation learns that a child ended from a socket the child holds open: a child started
/// meanwhile (by another test of the same run) can inherit that socket, and then
/// `waitUntilExit()` never returns and `isRunning` stays true (seen: a run held for
/// fifteen minutes by a killed device process). These functions reap the child with
/// `waitpid` themselves; a caller keeps its own record that the child ended, and never
/// signals it again (process ids are reused within minutes in a run of the tests).
extension Process {
    /// Waits up to `limit` for the process to end and reaps it; its exit status (the signal's
    /// number when a signal ended it), -1 when Foundation reaped it first and has not yet
    /// recorded its status (it has ended all the same), or nil when it is still running at
    /// the limit.
    public func reap(within limit: Duration) -> Int32? {
        exit(within: limit).map(\.status)
    }

    /// Waits up to `limit` for the process to end and reaps it: how it ended (its exit status,
    /// or the number of the signal that ended it), or nil when it is still running at the
    /// limit. The status is -1 when Foundation reaped it first and has not yet recorded how
    /// it ended (it has ended all the same). Use it in place of `waitUntilExit()` and of
    /// `terminationStatus`/`terminationReason`, which may then never be set.
    public func exit(within limit: Duration) -> (reason: TerminationReason, status: Int32)? {
        let deadline = ContinuousClock.now + limit
        while true {
            var status: Int32 = 0
            let result = waitpid(processIdentifier, &status, WNOHANG)
            if result == processIdentifier {
                let signal = status & 0x7f
                return signal == 0 ? (.exit, (status >> 8) & 0xff) : (.uncaughtSignal, signal)
            }
            if result == -1 && errno == EINTR { continue }
            if result == -1 {
                // Reaped already, by Foundation, which records its status in the same step.
                let known = max(deadline, ContinuousClock.now + .seconds(1))
                while isRunning && ContinuousClock.now < known { usleep(1_000) }
                return isRunning ? (.exit, -1) : (terminationReason, terminationStatus)
            }
            if ContinuousClock.now >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Waits for a process that ends by itself (up to 15 minutes, then kills it): how it
    /// ended, as ``exit(within:)`` says.
    public func waitForExit() -> (reason: TerminationReason, status: Int32) {
        if let exit = exit(within: .seconds(900)) { return exit }
        kill(processIdentifier, SIGKILL)
        return exit(within: .seconds(30)) ?? (.uncaughtSignal, SIGKILL)
    }

    /// Kills the process (SIGKILL) and reaps it: it has ended when this returns.
    @discardableResult
    public func killAndReap() -> Int32? {
        kill(processIdentifier, SIGKILL)
        return reap(within: .seconds(30))
    }
}
