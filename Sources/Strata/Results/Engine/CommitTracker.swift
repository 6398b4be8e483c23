import GRDB

/// Takes every refetch decision of a ``ResultsEngine``, in one place and before anything is
/// changed: a commit is answered by a refetch when the last input failed (the state is no
/// longer known), when it cannot be traced row by row (``ResultsQueryPlan/effect(of:_:fetcher:)``
/// says so), or when its rows cost more to apply than a refetch of the results
/// (``RefetchPolicy``, with the loading's measured costs:
/// ``ItemLoading/refetches(_:of:policy:)``).
struct CommitTracker {
    /// What to do with one commit.
    enum Decision {
        /// The commit cannot have changed the results.
        case unaffected
        /// Read everything again. `written`, when known: the only rows of the item table the
        /// commit changed (inserted, updated, deleted), so every other item's value is the one
        /// already held (an entity's value is its row); nil when that is not known (a failed
        /// input, changes announced without detail).
        case refetch(written: CommittedChanges.TableChanges?)
        /// Re-read and place these rows.
        case items(ResultsQueryPlan.TrackedChanges)
    }

    /// The costs the size decision weighs, and the limits of the commit path.
    var policy = RefetchPolicy()
    /// True from a failed input to the next fetch: the state may differ from the store's.
    private(set) var needsRefetch = false

    /// What the engine does with `changes`, for results of `count` items held by `Loading`.
    func decide<Item, Section, Loading: ItemLoading<Item>>(
        _ changes: CommittedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>, results count: Int,
        loading: Loading.Type
    ) throws -> Decision {
        if needsRefetch { return .refetch(written: nil) }
        // The rows the commit wrote in the item table are affected whatever the tracing
        // finds (inserted and updated ones are re-read, deleted ones removed): when they
        // alone cost more than a refetch, tracing could not change the answer, and a large
        // commit does not pay for it (sets of every row it wrote).
        let own = changes[fetcher.plan.itemEntity]
        let writtenRows = changes.invalidatedTables.contains(fetcher.plan.itemEntity) ? nil : own
        let written = max(own.inserted.count, own.updated.count) + own.deleted.count
        if Loading.refetches(written: written, of: count, policy: policy) { return .refetch(written: writtenRows) }
        switch try fetcher.plan.effect(of: changes, db, fetcher: fetcher) {
        case .unaffected:
            return .unaffected
        case .refetch:
            return .refetch(written: writtenRows)
        case .items(let tracked):
            return Loading.refetches(tracked, of: count, policy: policy) ? .refetch(written: writtenRows) : .items(tracked)
        }
    }

    /// An input failed: the next commit refetches, whatever it changed.
    mutating func failed() { needsRefetch = true }

    /// The state was read afresh.
    mutating func fetched() { needsRefetch = false }
}
