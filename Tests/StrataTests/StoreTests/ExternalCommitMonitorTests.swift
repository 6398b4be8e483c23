import Foundation
import GRDB
import Testing
@testable import Strata

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The timer that finds other connections' commits: one timer for every store of the
/// process at one interval, a `stat` of the `-wal` a tick, and a check on the writer only when
/// the file may have changed (or once a second); what another connection commits is still
/// delivered.
@Suite("Checks for other connections' commits")
struct ExternalCommitMonitorTests {
    /// An interval no other test uses, so that its ticker serves this test's stores only.
    static func options(milliseconds: Int) -> Store.Options {
        Store.Options(externalCommitInterval: .milliseconds(milliseconds))
    }

    /// Waits until `condition` holds, for at most `seconds`.
    static func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return try condition()
    }

    @Test("stores at one interval share one timer, which stops with the last of them")
    func storesShareOneTimer() throws {
        let directory = try TemporaryDirectory()
        let ticker = ExternalCommitTicker.shared(interval: .milliseconds(41))
        #expect(ticker.monitorCount == 0 && !ticker.isRunning)
        var stores: [Store] = try (0..<12).map { index in
            try Store(schema: NotesModel.schema, path: directory.path("s\(index).sqlite"), options: Self.options(milliseconds: 41))
        }
        #expect(ticker.monitorCount == 12 && ticker.isRunning)
        #expect(ExternalCommitTicker.shared(interval: .milliseconds(41)) === ticker)
        try stores.removeLast().close()
        #expect(ticker.monitorCount == 11)
        stores.removeLast(5)  // released, not closed
        #expect(ticker.monitorCount == 6 && ticker.isRunning)
        for store in stores { try store.close() }
        #expect(ticker.monitorCount == 0 && !ticker.isRunning)
        // A store opened again starts the timer again.
        let again = try Store(schema: NotesModel.schema, path: directory.path("s0.sqlite"), options: Self.options(milliseconds: 41))
        #expect(ticker.monitorCount == 1 && ticker.isRunning)
        try again.close()
    }

    @Test("a store whose file nobody writes checks on its writer about once a second; another store's commit is delivered, and while the -wal is fresh every tick checks")
    func idleStoreChecksRarelyAndStillSeesCommits() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path, options: Self.options(milliseconds: 43))
        let other = try Store(schema: NotesModel.schema, path: path, options: Store.Options(externalCommitInterval: nil))
        let recorder = CommitRecorder(store)
        // The files as they were written when the stores opened settle (2 s), then 2 s idle:
        // about 46 ticks, of which at most 3 may check (once a second, and a tick's rounding).
        Thread.sleep(forTimeInterval: 2.2)
        let settled = try #require(store.externalCommitChecks)
        Thread.sleep(forTimeInterval: 2.0)
        let idle = try #require(store.externalCommitChecks) - settled
        #expect(idle >= 1 && idle <= 3, "\(idle) checks on the writer in 2 s of an idle file")
        // Another store's commit writes the -wal: the next tick checks, and delivers it.
        let notebook = try other.write { db in try db.notebook("Shared") }
        #expect(Self.eventually(5) {
            recorder.commits.contains { $0.origin == .otherConnections && $0["Notebook"].inserted.contains(notebook.id.rawValue) }
        })
        // While the -wal is fresh (2 s), every tick checks.
        let fresh = try #require(store.externalCommitChecks)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try #require(store.externalCommitChecks) - fresh >= 5)
        try other.close()
        try store.close()
    }

    @Test("a -wal's stamp: equal stamps are trusted only two seconds after the file's last change")
    func walStampSettles() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("x-wal")
        #expect(WALStamp(path: path) == nil)  // no file: every tick checks
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
        let first = try #require(WALStamp(path: path))
        #expect(first.size == 3)
        #expect(WALStamp(path: path) == first)
        // The same size and modification time: still the same stamp.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data([9]))  // (overwrites the first byte)
        try handle.close()
        var times = [timespec(tv_sec: first.modified.tv_sec, tv_nsec: first.modified.tv_nsec), first.modified]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(WALStamp(path: path) == first)  // what the recency rule is for
        // Recent: not settled; two seconds after, settled.
        let changed = first.modified
        #expect(!first.isSettled(at: changed))
        #expect(!first.isSettled(at: timespec(tv_sec: changed.tv_sec + 1, tv_nsec: changed.tv_nsec + 999_999_999 - changed.tv_nsec)))
        #expect(first.isSettled(at: timespec(tv_sec: changed.tv_sec + 2, tv_nsec: changed.tv_nsec)))
        #expect(!first.isSettled(at: timespec(tv_sec: changed.tv_sec - 100, tv_nsec: 0)))  // a clock set back
        // Seconds between two times, borrowing from the nanoseconds.
        #expect(WALStamp.seconds(from: timespec(tv_sec: 10, tv_nsec: 900_000_000), to: timespec(tv_sec: 12, tv_nsec: 100_000_000)) == 1)
        #expect(WALStamp.seconds(from: timespec(tv_sec: 10, tv_nsec: 100), to: timespec(tv_sec: 12, tv_nsec: 100)) == 2)
        #expect(WALStamp.seconds(from: timespec(tv_sec: 12, tv_nsec: 0), to: timespec(tv_sec: 10, tv_nsec: 0)) == -2)
        // Another size, or another file at the path: another stamp.
        try Data([1, 2, 3, 4]).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        let replaced = try #require(WALStamp(path: path))
        #expect(replaced != first && replaced.size == 4)
    }
}
