import Dispatch
import Foundation

/// Monotonic time in nanoseconds.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// CPU time of the calling thread in nanoseconds: less sensitive than `now()` to other
/// processes on a busy machine. Work the measured code hands to other threads is not in it.
func threadCPUTime() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Durations (nanoseconds) of the measured repetitions of one case.
struct Samples {
    var nanoseconds: [UInt64] = []

    var count: Int { nanoseconds.count }

    /// The median, in milliseconds (mean of the two middle values for an even count).
    var medianMilliseconds: Double { percentile(0.5) }

    /// A percentile by linear interpolation, in milliseconds.
    func percentile(_ p: Double) -> Double {
        precondition(!nanoseconds.isEmpty, "no samples")
        let sorted = nanoseconds.sorted()
        let position = p * Double(sorted.count - 1)
        let low = Int(position.rounded(.down)), high = Int(position.rounded(.up))
        let fraction = position - Double(low)
        let value = Double(sorted[low]) * (1 - fraction) + Double(sorted[high]) * fraction
        return value / 1_000_000
    }
}

/// Runs `body` `warmUp` times unmeasured, then `repetitions` times, each returning its own
/// measured duration in nanoseconds.
func measure(warmUp: Int, repetitions: Int, _ body: () throws -> UInt64) rethrows -> Samples {
    for _ in 0..<warmUp { _ = try body() }
    var samples = Samples()
    for _ in 0..<repetitions { samples.nanoseconds.append(try body()) }
    return samples
}

/// Runs `body` and returns how long it took.
func timed(_ body: () throws -> Void) rethrows -> UInt64 {
    let start = now()
    try body()
    return now() - start
}

/// A milliseconds figure for the table: three significant digits.
func formatMilliseconds(_ value: Double) -> String {
    if value >= 100 { return String(format: "%.0f ms", value) }
    if value >= 10 { return String(format: "%.1f ms", value) }
    if value >= 1 { return String(format: "%.2f ms", value) }
    return String(format: "%.3f ms", value)
}

/// A ratio for the table.
func formatRatio(_ value: Double) -> String {
    if value >= 100 { return String(format: "%.0f×", value) }
    if value >= 10 { return String(format: "%.1f×", value) }
    return String(format: "%.2f×", value)
}

/// A count for the table: 10k, 100k, 1M.
func formatCount(_ count: Int) -> String {
    if count >= 1_000_000, count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
    if count >= 1_000, count % 1_000 == 0 { return "\(count / 1_000)k" }
    return "\(count)"
}
