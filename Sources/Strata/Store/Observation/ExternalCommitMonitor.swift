import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks for other connections' commits every interval, on the store's writer
/// (`PRAGMA data_version`, then the history: ``CommitObserver/deliverExternalCommits(_:force:)``),
/// but only when the file's `-wal` may have changed since the last check.
///
/// Every commit in WAL mode, of any connection, writes the `-wal` file, so a tick first looks
/// at the file (``WALStamp``: its identity, size and modification time, one `stat`, no
/// SQLite, no hop to the writer). The writer is asked only when the stamp differs from the
/// last one looked at, or when the file was modified so recently that a second change within
/// the file system's clock step could leave the stamp as it was (``WALStamp/settledAfter``),
/// and in any case once every ``fullCheckInterval`` (a commit is visible once the `-wal`'s
/// index in the `-shm` names it, a moment after its frames are written: a writer stopped
/// in between would otherwise be seen only at the next write). A store whose file nobody
/// writes costs a `stat` a tick and one `PRAGMA` a second. Stores of one process that check
/// at the same interval share one timer (``ExternalCommitTicker``): a process with many
/// stores wakes once a tick, not once a store.
final class ExternalCommitMonitor: @unchecked Sendable {
    private weak var writer: DatabasePool?
    private weak var observer: CommitObserver?
    private let walPath: String
    private let ticker: ExternalCommitTicker
    /// Whether a check is under way on the writer, the stamp the last check started from
    /// (nil: none yet, or the file could not be looked at), and when it started (wall clock).
    private let state = LockedValue<(busy: Bool, stamp: WALStamp?, checked: timespec)>((false, nil, timespec()))

    /// How many checks on the writer the ticks asked for (for tests).
    let checks = LockedValue(0)

    /// The longest time between two checks on the writer, whatever the `-wal` says.
    static let fullCheckInterval = 1

    init(writer: DatabasePool, observer: CommitObserver, interval: Duration) {
        self.writer = writer
        self.observer = observer
        walPath = writer.path + "-wal"
        ticker = ExternalCommitTicker.shared(interval: interval)
        ticker.add(self)
    }

    /// One tick: a check on the writer when the `-wal` may have changed, unless one is under
    /// way (a long write delays the next check, it does not queue many). On the ticker's queue.
    func tick(now: timespec) {
        guard let writer, let observer else { return }
        let stamp = WALStamp(path: walPath)
        let check = state.withLock { state -> Bool in
            guard !state.busy else { return false }
            // (A wall clock set back makes the last check look later than now: checked again.)
            let sinceLast = WALStamp.seconds(from: state.checked, to: now)
            if let stamp, stamp == state.stamp, stamp.isSettled(at: now), (0..<Self.fullCheckInterval).contains(sinceLast) {
                return false
            }
            // Taken before the check reads `data_version`: a commit after this stamp is seen
            // by the check, or changes the stamp for a later tick.
            state = (true, stamp, now)
            return true
        }
        guard check else { return }
        checks.withLock { $0 += 1 }
        writer.asyncWriteWithoutTransaction { [state] db in
            // A failed check is retried on the next tick (the stamp is forgotten, and
            // data_version is kept only on success).
            do {
                try observer.deliverExternalCommits(db)
                state.withLock { $0.busy = false }
            } catch {
                state.withLock { $0 = (false, nil, timespec()) }
            }
        }
    }

    /// Stops checking.
    func stop() { ticker.remove(self) }

    deinit { ticker.remove(self) }
}

/// What a `stat` of a `-wal` file says of its last change: the file (device and inode), its
/// size and its modification time. Equal stamps, taken once the modification time is older
/// than ``settledAfter``, mean that no connection wrote the file in between.
struct WALStamp: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: timespec

    /// How long after a modification its stamp is trusted to change with the next one. File
    /// systems keep modification times in steps (a kernel tick on Linux, a second on some),
    /// and a write within the step of the one before it can leave the stamp as it was (when
    /// it does not change the size, as a `-wal` restarted from its beginning may not); two
    /// seconds covers every step in use.
    static let settledAfter: Int = 2

    /// The stamp of the file at `path`; nil when it cannot be looked at.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modified = info.st_mtimespec
        #else
        modified = info.st_mtim
        #endif
    }

    /// Whether the modification time is at least ``settledAfter`` before `now` (a time in the
    /// future, from a clock set back, is not).
    func isSettled(at now: timespec) -> Bool {
        Self.seconds(from: modified, to: now) >= Self.settledAfter
    }

    /// The whole seconds from `start` to `end` (negative when `end` is before `start`).
    static func seconds(from start: timespec, to end: timespec) -> Int {
        let seconds = Int(end.tv_sec) - Int(start.tv_sec)
        return end.tv_nsec >= start.tv_nsec ? seconds : seconds - 1
    }

    static func == (a: WALStamp, b: WALStamp) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
    }

    /// The wall clock now (the clock modification times are kept in).
    static func now() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}

/// One timer for every ``ExternalCommitMonitor`` of the process that checks at the same
/// interval; the timer runs while it has monitors.
final class ExternalCommitTicker: @unchecked Sendable {
    private static let all = LockedValue<[Int: ExternalCommitTicker]>([:])

    /// The ticker of `interval`, made when none runs.
    static func shared(interval: Duration) -> ExternalCommitTicker {
        let components = interval.components
        let nanoseconds = max(1_000_000, Int(components.seconds) * 1_000_000_000 + Int(components.attoseconds / 1_000_000_000))
        return all.withLock { all in
            if let ticker = all[nanoseconds] { return ticker }
            let ticker = ExternalCommitTicker(nanoseconds: nanoseconds)
            all[nanoseconds] = ticker
            return ticker
        }
    }

    /// The number of monitors the ticker serves (for tests).
    var monitorCount: Int { state.withLock { $0.monitors.count } }

    /// Whether the ticker's timer runs (for tests).
    var isRunning: Bool { state.withLock { $0.timer != nil } }

    private let nanoseconds: Int
    private let queue = DispatchQueue(label: "Strata.externalCommits", qos: .utility)
    private struct State {
        var monitors: [ObjectIdentifier: Weak] = [:]
        var timer: DispatchSourceTimer?
    }
    private struct Weak { weak var monitor: ExternalCommitMonitor? }
    private let state = LockedValue(State())

    private init(nanoseconds: Int) { self.nanoseconds = nanoseconds }

    func add(_ monitor: ExternalCommitMonitor) {
        state.withLock { state in
            state.monitors[ObjectIdentifier(monitor)] = Weak(monitor: monitor)
            guard state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(
                deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                leeway: .nanoseconds(nanoseconds / 10))
            timer.setEventHandler { [weak self] in self?.tick() }
            timer.resume()
            state.timer = timer
        }
    }

    func remove(_ monitor: ExternalCommitMonitor) {
        state.withLock { state in
            guard state.monitors.removeValue(forKey: ObjectIdentifier(monitor)) != nil else { return }
            if state.monitors.isEmpty {
                state.timer?.cancel()
                state.timer = nil
            }
        }
    }

    private func tick() {
        let monitors = state.withLock { $0.monitors.values.compactMap(\.monitor) }
        let now = WALStamp.now()
        for monitor in monitors { monitor.tick(now: now) }
    }
}
