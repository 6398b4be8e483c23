// A command-line tool that calls `waitForDeliveries()` on its main thread, where a
// controller's default delivery queue (the main queue) cannot run: FirstUseTests checks that
// it stops with a message naming the cause and the remedy. With `--own-queue` it passes a
// queue of its own, as the message advises, and waits for a delivery.
import Dispatch
import Strata

let store = try Store.inMemory(schema: StrataModel.schema)
if CommandLine.arguments.contains("--own-queue") {
    let controller = try ResultsController(
        store: store, request: Entry.Fetches.all, deliveryQueue: DispatchQueue(label: "probe.results"))
    try store.write { db in _ = try db.insert(Entry(title: "a")) }
    controller.waitForDeliveries()
    print("delivered \(controller.snapshot.items.map(\.title))")
} else {
    let controller = try ResultsController(store: store, request: Entry.Fetches.all)
    controller.waitForDeliveries()
    print("returned")
}
