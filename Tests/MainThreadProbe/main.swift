// A command-line tool that calls `waitForDeliveries()` on its main thread, where a
// controller's default delivery queue (the main queue) cannot run: FirstUseTests checks that
// it stops with a message naming the cause and the remedy. With `--own-queue` it passes a
// queue of its own, as the message advises, and waits for a delivery. With `--semaphore` it
// blocks its main thread on a semaphore while the controller delivers on the main queue.
import Dispatch
import Strata

let store = try Store.inMemory(schema: StrataModel.schema)
if CommandLine.arguments.contains("--own-queue") {
    let controller = try ResultsController(
        store: store, request: Entry.Fetches.all, deliveryQueue: DispatchQueue(label: "probe.results"))
    try store.write { db in _ = try db.insert(Entry(title: "a")) }
    controller.waitForDeliveries()
    print("delivered \(controller.snapshot.items.map(\.title))")
} else if CommandLine.arguments.contains("--semaphore") {
    // A newcomer's program: blocks its main thread on a semaphore that a delivery to the main
    // queue would signal. The delivery cannot run; Strata says why on standard error.
    let controller = try ResultsController(store: store, request: Entry.Fetches.all)
    let delivered = DispatchSemaphore(value: 0)
    final class Signal: Coordinatable {
        let semaphore: DispatchSemaphore
        init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
        func reload(_ snapshot: ResultsSnapshot<Entry, NoSection>) {}
        func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Entry, NoSection>) { semaphore.signal() }
    }
    let signal = Signal(delivered)
    controller.coordinate(signal)
    try store.write { db in _ = try db.insert(Entry(title: "a")) }
    let seconds = Double(CommandLine.arguments.last ?? "") ?? 3
    print(delivered.wait(timeout: .now() + seconds) == .timedOut ? "timed out" : "delivered")
    withExtendedLifetime((controller, signal)) {}
} else {
    let controller = try ResultsController(store: store, request: Entry.Fetches.all)
    controller.waitForDeliveries()
    print("returned")
}
