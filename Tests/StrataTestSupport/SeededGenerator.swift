import Foundation

/// A deterministic random number generator (SplitMix64): the same sequence for a seed on
/// every platform, so that a randomized test that fails can be replayed from the seed it
/// prints. Shared by every test target.
public struct SeededGenerator: RandomNumberGenerator {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }

    /// One of `values`.
    public mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
}

extension SeededGenerator {
    /// The seed of a seeded fuzzer: `STRATA_FUZZ_SEED` when it is set (to replay a run that
    /// failed), a random one otherwise. The test prints it with each of its failures.
    public static func fuzzSeed() -> UInt64 {
        ProcessInfo.processInfo.environment["STRATA_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
    }
}
