/// What ``ResultsPipeline`` computed for one input: the next snapshot, numbered, and how it
/// reaches consumers.
struct ResultsStep<Item: StrataEntity, Section: Hashable & Sendable>: Sendable {
    enum Change: Sendable {
        /// Nothing the consumers see changed (it may still resolve a user edit).
        case unchanged
        /// An update; after a user edit it is rebased on the delivered snapshot. `touched`:
        /// the sections whose rows it changes (nil: any).
        case update(ResultsUpdate<Item, Section>, touched: Set<SectionID>?)
        /// A refetch of batched results, delivered as a reload of ``ResultsStep/snapshot``.
        case refetchedInPages
    }

    let snapshot: ResultsSnapshot<Item, Section>
    /// The pipeline's count of steps when this one was computed.
    let version: Int
    let change: Change
}
