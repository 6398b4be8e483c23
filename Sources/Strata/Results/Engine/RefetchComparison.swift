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
    private let queue = DispatchQueue(label: "strata.results.refetch-comparison")
    private let done = DispatchGroup()
    /// Set once, on the comparing thread, before `done` is left; read after it was waited for.
    private var result: ChangedValues?
    private let matched = DispatchGroup()
    /// Whether rows are matched ahead (``matchRows(old:new:)``); set on the engine's thread.
    private var matching = false
    /// The rows matched ahead, and the sections (old, new) they were matched for. Set once,
    /// on the comparing thread, before `matched` is left.
    private var matchedRows: (old: [SectionID], new: [SectionID], rows: RowMatching)?

    /// Starts comparing `values` (the refetch's, by id) with the old values that `old` calls
    /// its argument with, each once.
    init<Item: StrataEntity>(
        comparing values: ItemPayload<Item>, old: @escaping @Sendable (_ compare: (Item) -> Void) -> Void
    ) {
        done.enter()
        queue.async { [self] in
            var comparison = values.comparison()
            old { comparison.compare($0) }
            result = comparison.flags
            done.leave()
        }
    }

    /// Once the refetch has placed every row: matches the rows of the last snapshot's
    /// sections `old` with those of the next snapshot's, `new` (each section's id and its
    /// items' ids, in the snapshots' order), after the comparison, on its thread, while the
    /// engine makes the snapshot's rows; ``rowMatching(old:new:)`` takes the result. Called
    /// at most once.
    func matchRows(old: [(id: SectionID, items: RowChunks<Int64>)], new: [(id: SectionID, items: RowChunks<Int64>)]) {
        precondition(!matching, "rows matched twice")
        matching = true
        matched.enter()
        queue.async { [self] in
            let oldSections = old.map(\.id), newSections = new.map(\.id)
            // Only whether a section stays is needed here; the batch compares section values.
            let sections = SectionMatching(oldIDs: oldSections, newIDs: newSections) { _, _ in false }
            let rows = RowMatching(
                oldIDs: old.indices.map { sections.oldToNew[$0] == nil ? nil : old[$0].items },
                newIDs: new.indices.map { sections.newIsInserted[$0] ? nil : new[$0].items },
                sections: sections, differs: result!.differs)
            matchedRows = (oldSections, newSections, rows)
            matched.leave()
        }
    }

    /// Whether rows are matched ahead (``matchRows(old:new:)`` was called).
    var matchesRows: Bool { matching }

    /// The rows matched ahead (``matchRows(old:new:)``) when they were matched for the
    /// sections `old` and `new` (ids, in the snapshots' order); waits for them. Nil when none
    /// were, or for other sections.
    func rowMatching(old: [SectionID], new: [SectionID]) -> RowMatching? {
        guard matching else { return nil }
        matched.wait()
        guard let matchedRows, matchedRows.old == old, matchedRows.new == new else { return nil }
        return matchedRows.rows
    }

    /// The test of whether the item of an id has another value than in the last snapshot
    /// (true for an item the last snapshot did not hold); waits for the comparisons.
    func differs() -> (Int64) -> Bool {
        done.wait()
        return result!.differs
    }
}
