import Foundation

/// Resident-set figures of this process, from `/proc/self/status` (Linux only; nil elsewhere).
enum ProcessMemory {
    /// Peak resident set size (`VmHWM`), in bytes.
    static var peakResident: Int? { field("VmHWM") }
    /// Current resident set size (`VmRSS`), in bytes.
    static var resident: Int? { field("VmRSS") }

    /// Resets the peak to the current resident size (writes 5 to `/proc/self/clear_refs`,
    /// Linux 4.0 and later). Returns false when the kernel refused.
    @discardableResult
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }

    private static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, let kilobytes = Int(parts[1]) else { return nil }
            return kilobytes * 1024
        }
        return nil
    }

    /// Bytes as MiB for the table.
    static func format(_ bytes: Int?) -> String {
        guard let bytes else { return "n/a" }
        return String(format: "%.0f MiB", Double(bytes) / 1_048_576)
    }
}
