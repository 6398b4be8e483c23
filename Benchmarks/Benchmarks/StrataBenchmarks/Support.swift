import Benchmark
import Dispatch
import Foundation

/// Monotonic time in nanoseconds.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Runs `body` and returns how long it took, in nanoseconds.
func timed(_ body: () throws -> Void) rethrows -> UInt64 {
    let start = now()
    try body()
    return now() - start
}

/// A count for benchmark names: 10k, 100k, 1M.
func formatCount(_ count: Int) -> String {
    if count >= 1_000_000, count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
    if count >= 1_000, count % 1_000 == 0 { return "\(count / 1_000)k" }
    return "\(count)"
}

/// Progress on standard error (package-benchmark owns standard output).
func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// A latency that the benchmark times itself (from a commit handler to a delivery, for
/// example), recorded in microseconds as a custom metric of package-benchmark, which computes
/// its percentiles and stores it in baselines like any other metric.
func latency(_ name: String) -> BenchmarkMetric { .custom("\(name) (us)", useScalingFactor: false) }

/// A count recorded once per iteration (rows written, rows listed…).
func count(_ name: String) -> BenchmarkMetric { .custom(name, useScalingFactor: false) }

extension Benchmark {
    /// Records `nanoseconds` as microseconds for a ``latency(_:)`` metric.
    func record(_ metric: BenchmarkMetric, nanoseconds: UInt64) {
        measurement(metric, Int((nanoseconds + 500) / 1_000))
    }
}

/// What a benchmark's setup builds and its closure and teardown use, in one process (package-
/// benchmark runs each benchmark in a process of its own).
final class Fixture<Value>: @unchecked Sendable {
    private var stored: Value?
    var value: Value {
        guard let stored else { fatalError("the benchmark's setup did not run") }
        return stored
    }
    func set(_ value: Value?) { stored = value }
}

/// The iterations of one benchmark.
struct Runs {
    var warmUp: Int
    var measured: Int
    /// The longest a benchmark may run, whatever its iterations.
    var maxDuration: Duration = .seconds(600)
}

extension Benchmark.Configuration {
    static func with(
        _ metrics: [BenchmarkMetric], _ runs: Runs, setup: Benchmark.BenchmarkSetupHook? = nil,
        teardown: Benchmark.BenchmarkTeardownHook? = nil
    ) -> Benchmark.Configuration {
        .init(
            metrics: metrics, warmupIterations: runs.warmUp, maxDuration: runs.maxDuration, maxIterations: runs.measured,
            setup: setup, teardown: teardown)
    }
}
