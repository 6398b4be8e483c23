import Dispatch
import Foundation

extension ResultsOutlet {
    /// Runs `work` on the delivery queue; a delivery to the main queue is watched (see
    /// ``MainQueueDeliveryWatch``).
    func scheduleDelivery(_ work: @escaping @Sendable () -> Void) {
        guard let ticket = MainQueueDeliveryWatch.shared.scheduled(on: queue) else {
            return queue.async(execute: work)
        }
        queue.async {
            MainQueueDeliveryWatch.shared.delivered(ticket)
            work()
        }
    }
}

/// Notices a results delivery that has waited for the main queue for several seconds — a
/// main thread blocked on a semaphore while a controller delivers there hangs without a
/// word otherwise — and says once, on standard error, what blocks it and what to do.
///
/// The wait is `STRATA_MAIN_QUEUE_WAIT_WARNING` seconds (5 by default; 0 turns the watch off).
/// Deliveries to the main queue are numbered as they are scheduled; one check at a time waits
/// that long on a global queue for the oldest pending one, and then for the next.
final class MainQueueDeliveryWatch: Sendable {
    static let shared = MainQueueDeliveryWatch(
        seconds: ProcessInfo.processInfo.environment["STRATA_MAIN_QUEUE_WAIT_WARNING"].flatMap(Double.init) ?? 5)

    private struct State {
        var scheduled: UInt64 = 0
        var delivered: UInt64 = 0
        var checking = false
        var warned = false
    }

    /// How long a delivery may wait; nil: not watched.
    let seconds: Double?
    private let state = LockedValue(State())
    /// Where the warning goes (standard error; tests replace it).
    let report: @Sendable (String) -> Void

    init(seconds: Double, report: @escaping @Sendable (String) -> Void = MainQueueDeliveryWatch.printToStandardError) {
        self.seconds = seconds > 0 ? seconds : nil
        self.report = report
    }

    /// Numbers a delivery scheduled on `queue`: nil unless `queue` is the main queue and the
    /// watch is on.
    func scheduled(on queue: DispatchQueue) -> UInt64? {
        guard let seconds, queue === DispatchQueue.main || queue.label == DispatchQueue.main.label else { return nil }
        let (ticket, startCheck) = state.withLock { state -> (UInt64, Bool) in
            state.scheduled += 1
            if state.warned || state.checking { return (state.scheduled, false) }
            state.checking = true
            return (state.scheduled, true)
        }
        if startCheck { check(waitingFor: ticket, seconds: seconds) }
        return ticket
    }

    /// The delivery `ticket` ran.
    func delivered(_ ticket: UInt64) {
        state.withLock { $0.delivered = max($0.delivered, ticket) }
    }

    private func check(waitingFor ticket: UInt64, seconds: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            let (warn, next) = state.withLock { state -> (Bool, UInt64?) in
                if state.delivered >= ticket {
                    if state.scheduled > state.delivered { return (false, state.delivered + 1) }
                    state.checking = false
                    return (false, nil)
                }
                state.warned = true
                state.checking = false
                return (true, nil)
            }
            if warn { report(Self.message(seconds: seconds)) }
            if let next { check(waitingFor: next, seconds: seconds) }
        }
    }

    static func message(seconds: Double) -> String {
        let waited = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
        return "Strata: a ResultsController delivery has waited \(waited) s for the main queue, which has not run since. "
            + "The main thread is blocked (waiting on a semaphore, a lock or a group, sleeping, or in a long loop), or "
            + "this program never lets the main queue run: deliveries to the main queue (the default) run only when "
            + "the main thread is free, in an app's run loop, dispatchMain(), RunLoop.main.run(), or top-level code "
            + "or an async main that awaits. Await the results instead of blocking (for try await update in "
            + "controller.updates), or create the controller with a delivery queue of its own: "
            + "ResultsController(store:request:deliveryQueue: DispatchQueue(label: \"results\")). "
            + "(Said once; STRATA_MAIN_QUEUE_WAIT_WARNING=0 turns this off.)"
    }

    @Sendable static func printToStandardError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
