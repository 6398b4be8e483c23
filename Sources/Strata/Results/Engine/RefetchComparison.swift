import Dispatch

/// Which items of a commit's refetch have another value than in the last snapshot, computed on
/// another thread while the refetch goes on.
///
/// A commit answered by a refetch ends with the batch from the last snapshot, for which every
/// item in both is compared by value (``RefetchedRows``). Those comparisons need only the old
/// values and the new ones, which the refetch has once it read every row; the sort, the index
/// and the snapshot's rows come after. So the comparisons start then, on a thread of their own,
/// and the batch waits for them (``differs()``): on a machine with two cores or more they cost
/// the commit nothing but the wait, if any. (Each old value is looked up by id in the new ones,
/// in table order, read at random: cache misses, on the other thread.)
///
/// The work runs on a serial queue of its own (Dispatch gives such a queue a thread even when
/// every thread of the shared pool is busy, which a concurrent queue would wait for), and it
/// waits for nothing: ``differs()``, called on the engine's thread, cannot wait on itself.
final class RefetchComparison: @unchecked Sendable {
    private let done = DispatchGroup()
    /// Set once, on the comparing thread, before `done` is left; read after it was waited for.
    private var result: ChangedValues?

    /// Starts comparing `values` (the refetch's, by id) with the old values that `old` calls
    /// its argument with, each once.
    init<Item: StrataEntity>(
        comparing values: ItemPayload<Item>, old: @escaping @Sendable (_ compare: (Item) -> Void) -> Void
    ) {
        done.enter()
        DispatchQueue(label: "strata.results.refetch-comparison").async { [self] in
            var comparison = values.comparison()
            old { comparison.compare($0) }
            result = comparison.flags
            done.leave()
        }
    }

    /// The test of whether the item of an id has another value than in the last snapshot
    /// (true for an item the last snapshot did not hold); waits for the comparisons.
    func differs() -> (Int64) -> Bool {
        done.wait()
        return result!.differs
    }
}
