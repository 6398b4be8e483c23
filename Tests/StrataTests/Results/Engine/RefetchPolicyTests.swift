import Foundation
import Testing

@testable import Strata

/// The choice between applying a commit incrementally and refetching, on its own
/// (Decisions.md, "Incremental or refetch: whichever costs less, as measured"): a commit
/// refetches when the rows it affects cost more through the incremental path than the
/// results cost through a refetch, each at its calibrated cost per row, and never at or below
/// the minimum. A test of the decision, not of time: the costs are given.
@Suite("Refetch policy")
struct RefetchPolicyTests {
    typealias Costs = RefetchPolicy.Costs

    /// The first commit size out of `count` results that refetches.
    private static func firstRefetch(_ policy: RefetchPolicy, of count: Int, batched: Bool = false) -> Int? {
        (0...count).first { policy.refetches(affected: $0, of: count, costs: batched ? policy.batched : policy.eager) }
    }

    @Test("the break-even follows the costs per row, whatever they are")
    func followsCosts() {
        for (changedRow, resultRow) in [(2_000.0, 500.0), (1_000, 900), (400, 100), (3_000, 60)] {
            let costs = Costs(changedRow: changedRow, resultRow: resultRow)
            let policy = RefetchPolicy(minimum: 64, eager: costs, batched: costs)
            for count in [1_000, 100_000] {
                // Refetch from the first k where k × changedRow > count × resultRow.
                let breakEven = Double(count) * resultRow / changedRow
                let expected = max(65, Int(breakEven.rounded(.down)) + 1)
                #expect(
                    Self.firstRefetch(policy, of: count) == expected,
                    "costs \(changedRow) / \(resultRow) at \(count) results: refetch from \(expected) rows")
                #expect(!policy.refetches(affected: expected - 1, of: count, costs: policy.eager), "below the break-even: incremental")
                #expect(policy.refetches(affected: count, of: count, costs: policy.eager), "a full change: a refetch")
            }
        }
    }

    @Test("each loading decides with its own costs")
    func eachLoadingItsCosts() {
        let policy = RefetchPolicy(
            minimum: 64, eager: Costs(changedRow: 1_000, resultRow: 500), batched: Costs(changedRow: 1_000, resultRow: 100))
        // 30 % of 10,000: under eager loading's break-even (50 %), over batched loading's (10 %).
        let ids = Set(Int64(1)...3_000)
        let tracked = ResultsQueryPlan.TrackedChanges(affected: ids, deleted: [], own: ids, sectionObjects: nil)
        #expect(!EagerLoading<Note>.refetches(tracked, of: 10_000, policy: policy))
        #expect(BatchedLoading<Note>.refetches(tracked, of: 10_000, policy: policy))
        // Deleted rows count as affected ones.
        let deletions = ResultsQueryPlan.TrackedChanges(
            affected: Set(Int64(1)...2_000), deleted: Set(Int64(2_001)...6_000), own: [], sectionObjects: nil)
        #expect(EagerLoading<Note>.refetches(deletions, of: 10_000, policy: policy), "6,000 of 10,000 rows: over 50 %")
        // Rows the commit wrote itself count under batched loading even when they are not in
        // the results (their values are kept for older snapshots).
        let written = ResultsQueryPlan.TrackedChanges(affected: Set(Int64(1)...500), deleted: [], own: Set(Int64(1)...1_500), sectionObjects: nil)
        #expect(BatchedLoading<Note>.refetches(written, of: 10_000, policy: policy))
        #expect(!EagerLoading<Note>.refetches(written, of: 10_000, policy: policy))
    }

    @Test("a commit of at most the minimum never refetches for its size")
    func minimum() {
        let policy = RefetchPolicy(minimum: 64, eager: Costs(changedRow: 1_000, resultRow: 1), batched: Costs(changedRow: 1_000, resultRow: 1))
        for count in [1, 64, 65, 1_000] {
            #expect(!policy.refetches(affected: min(count, 64), of: count, costs: policy.eager))
            #expect(!policy.refetches(affected: min(count, 64), of: count, costs: policy.batched))
        }
        #expect(policy.refetches(affected: 65, of: 65, costs: policy.eager))
        #expect(RefetchPolicy.always.refetches(affected: 1, of: 1_000_000, costs: RefetchPolicy.always.eager))
        #expect(!RefetchPolicy.never.refetches(affected: 1_000_000, of: 1_000_000, costs: RefetchPolicy.never.eager))
    }

    /// The calibrations of 2026-11-28 and, for eager loading, 2026-12-03 (Benchmarks/README.md,
    /// "Calibrating the refetch policy"), at 100,000 results: eager loading applied 10,000
    /// changed rows incrementally in less time than a refetch, and 25,000 in more; batched
    /// loading applied 100 rows in less than its refetch, and 1,000 in more.
    @Test("the calibrated costs: eager refetches 25,000 changed rows of 100,000, not 10,000; batched 10,000, not 500")
    func calibrated() {
        let policy = RefetchPolicy()
        #expect(!policy.refetches(affected: 10_000, of: 100_000, costs: policy.eager))
        #expect(policy.refetches(affected: 25_000, of: 100_000, costs: policy.eager))
        #expect(!policy.refetches(affected: 500, of: 100_000, costs: policy.batched))
        #expect(policy.refetches(affected: 1_000, of: 100_000, costs: policy.batched))
        #expect(policy.refetches(affected: 10_000, of: 100_000, costs: policy.batched))
        #expect(policy.eager == RefetchPolicy.eagerCosts && policy.batched == RefetchPolicy.batchedCosts)
    }
}
