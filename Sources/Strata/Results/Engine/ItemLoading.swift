import GRDB

/// How a ``ResultsEngine`` holds its items' values, and with them what its index keeps:
/// every value in memory with every key (``EagerLoading``), or values read in pages by the
/// snapshots and keys left in the database (``BatchedLoading``). Chosen once, with the
/// engine's type. Each is a whole strategy: its index keys, its fetch, its refetch costs, its
/// commit path (what it reads again, what it keeps for older snapshots, whether it merges
/// many rows in one pass) and its reader; the engine's steps around them are the same for
/// both.
protocol ItemLoading<Item> {
    associatedtype Item: StrataEntity
    /// What the index keeps of each item.
    associatedtype Keys: IndexKeyStore

    /// Replaces the whole state with a fresh fetch: `index`, the values, and the snapshot's
    /// rows where the journal keeps them.
    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>
    ) throws

    /// The same, for a commit's refetch: `written` are the only rows of the item table that
    /// changed since the state held, so that a loading that holds the last state may compute
    /// its batch by id and give its sort the other rows in their last order. By default, a
    /// plain fetch.
    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, afterWriting written: CommittedChanges.TableChanges
    ) throws

    /// Whether a commit that affects `tracked` items of results holding `count` is answered
    /// by a refetch.
    static func refetches(_ tracked: ResultsQueryPlan.TrackedChanges, of count: Int, policy: RefetchPolicy) -> Bool

    /// Whether a commit that wrote at least `written` rows of the item table (at most the
    /// rows its tracing would affect) is answered by a refetch before it is traced: true
    /// only when ``refetches(_:of:policy:)`` would answer true for any tracing of it.
    static func refetches(written: Int, of count: Int, policy: RefetchPolicy) -> Bool

    /// Applies a commit's traced changes, the whole way this loading takes it: the section
    /// objects read again (``CommitRows/updateSections(_:_:fetcher:index:journal:)``), then
    /// every affected or deleted item removed and the affected ones re-read (in rowid order:
    /// each statement's ids are then a range of the table, which SQLite reads from fewer
    /// pages) and placed, their places before and after journaled when the journal keeps
    /// rows. What the loading keeps of the values follows.
    mutating func apply<Section>(
        _ tracked: ResultsQueryPlan.TrackedChanges, _ db: Database, fetcher: ResultsFetcher<Item, Section>,
        index: inout SectionedIndex<Section, Keys>, journal: inout SnapshotJournal<Item, Section>, policy: RefetchPolicy
    ) throws

    /// The snapshot of `index` with these values, and what changed since the last one.
    func snapshotAndChanges<Section>(
        _ journal: inout SnapshotJournal<Item, Section>, _ index: SectionedIndex<Section, Keys>
    ) -> (snapshot: ResultsSnapshot<Item, Section>, changes: SnapshotJournal<Item, Section>.Changes)

    /// What a refetch tells the batch builder.
    static var refetched: BatchBuilder.Known { get }

    /// An engine in the state of `engine` (whose loading this is) that loads eagerly, for
    /// results that must leave this loading (a filter was set): `engine` itself when this
    /// loading is eager; else one made by ``AnyResultsEngine/eagerCopy(readingWith:)``, its
    /// values read in the state of the last commit applied (batched loading's pinned reader).
    func loadingEagerly<Section>(_ engine: any AnyResultsEngine<Item, Section>) throws -> any AnyResultsEngine<Item, Section>

    /// Checks the values against `index` (debug builds only), where this loading keeps them.
    func _checkInvariants<Section>(against index: SectionedIndex<Section, Keys>, journal: SnapshotJournal<Item, Section>)
}

extension ItemLoading {
    mutating func fetchAll<Section>(
        _ db: Database, fetcher: ResultsFetcher<Item, Section>, index: inout SectionedIndex<Section, Keys>,
        journal: inout SnapshotJournal<Item, Section>, afterWriting written: CommittedChanges.TableChanges
    ) throws {
        try fetchAll(db, fetcher: fetcher, index: &index, journal: &journal)
    }
}
