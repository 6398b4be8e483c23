/// When a commit is answered by a refetch rather than by re-reading its rows: whichever of
/// the two is measured to cost less.
///
/// A commit applied incrementally costs about ``Costs/changedRow`` per row it affects
/// (re-read by id, then placed); a refetch costs about ``Costs/resultRow`` per row of the
/// results (read, sorted, and for eager loading the difference of the two snapshots),
/// whatever the commit. A commit refetches when its rows cost more than the
/// results would, `affected × changedRow > results × resultRow`, and it affects more than
/// ``minimum`` items.
///
/// The costs are calibrated by the benchmarks (Benchmarks/README.md, "Calibrating the
/// refetch policy"): `StrataAims` prints both from the `KCommit` benchmarks of each loading
/// (100,000 notes in 50 sections): a changed row's cost is the slope between two commits
/// well under the break-even (eager: 1,000 and 10,000 rows; batched: 10 and 100), a result
/// row's is a commit of every row (always a refetch) divided by the results. Only their
/// ratio matters, the break-even share. Re-calibrate whenever either path changes (the
/// engine's commit path, the fetch, the difference).
struct RefetchPolicy: Hashable, Sendable {
    /// What each path costs per row, in nanoseconds on the machine that calibrated them (the
    /// means of the runs calibrated).
    struct Costs: Hashable, Sendable {
        /// A row the commit affects, applied incrementally.
        var changedRow: Double
        /// A row of the results, refetched.
        var resultRow: Double

        /// The share of the results above which a commit refetches.
        var breakEven: Double { resultRow / changedRow }
    }

    /// Eager loading (calibrated 2026-12-03, Benchmarks/README.md, after a commit's refetch
    /// computed its batch from the ids and values it kept, where it compared copies of every
    /// row): a changed row is re-read with its value, then placed in bulk in passes over the
    /// touched sections; a refetch reads every row (decoding again only the values of the rows
    /// the commit wrote, unless it wrote nearly all) and ends with the difference of the two
    /// snapshots by id. The break-even is about 21 % of the results (two runs: 22 % and 21 %;
    /// 35 % before, at 9.4 and 3.3 µs).
    static let eagerCosts = Costs(changedRow: 13_900, resultRow: 2_900)
    /// Batched loading (calibrated 2026-11-28, Benchmarks/README.md): a changed row is placed
    /// by binary searches that read keys from the database (about log₂ n point reads); a
    /// refetch reads ids and keys only, and is delivered as a reload (no difference). The
    /// break-even is under 1 % of the results (two runs: 0.8 % and 1.0 %).
    static let batchedCosts = Costs(changedRow: 152_700, resultRow: 1_310)

    /// A commit that affects at most this many items never refetches for its size.
    var minimum: Int
    var eager: Costs
    var batched: Costs
    /// A commit that changes at most `max(patchLimit, patchLimitPerSection × sections)` rows
    /// patches the snapshot's rows in place, one removal and one insertion per row; above,
    /// the changed sections are derived again. A patch moves on average half a section per
    /// row, a derivation reads every row of the changed sections, so the limit grows with
    /// the number of sections (smaller sections for the same results).
    var patchLimit: Int
    var patchLimitPerSection: Int
    /// A commit rebuilt in bulk merges its sections on several threads when they hold at
    /// least this many items in all (and the machine has more than one core).
    var parallelMergeMinimum: Int

    init(
        minimum: Int = 64, eager: Costs = Self.eagerCosts, batched: Costs = Self.batchedCosts, patchLimit: Int = 64,
        patchLimitPerSection: Int = 32, parallelMergeMinimum: Int = 20_000
    ) {
        self.minimum = minimum
        self.eager = eager
        self.batched = batched
        self.patchLimit = patchLimit
        self.patchLimitPerSection = patchLimitPerSection
        self.parallelMergeMinimum = parallelMergeMinimum
    }

    /// Whether a commit that changed `changed` rows of results in `sections` sections
    /// patches the snapshot's rows rather than deriving the changed sections again.
    func patches(changed: Int, sections: Int) -> Bool {
        changed <= max(patchLimit, patchLimitPerSection * sections)
    }

    /// Every commit refetches (tests).
    static var always: RefetchPolicy {
        RefetchPolicy(minimum: 0, eager: Costs(changedRow: 1, resultRow: 0), batched: Costs(changedRow: 1, resultRow: 0))
    }
    /// No commit refetches for its size (tests); other reasons still refetch.
    static var never: RefetchPolicy { RefetchPolicy(minimum: .max) }

    /// Whether `affected` items out of `count` are better answered by a refetch, at the
    /// `costs` of the loading that asks (its own: ``eager`` or ``batched``).
    func refetches(affected: Int, of count: Int, costs: Costs) -> Bool {
        affected > minimum && Double(affected) * costs.changedRow > Double(count) * costs.resultRow
    }
}
