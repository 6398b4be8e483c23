import Foundation

/// The seed of a randomized part test: `STRATA_SEED` when set (to replay a failure), else a
/// fresh one. It is printed before the test starts, so that a run stopped by a trapping
/// `_checkInvariants()` can be replayed too; expectations name it in their messages.
func partTestSeed(_ test: String) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1_000_000)
    print("\(test): seed \(seed) (replay with STRATA_SEED=\(seed))")
    return seed
}
