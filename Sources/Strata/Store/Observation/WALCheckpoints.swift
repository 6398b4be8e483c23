import Foundation
import GRDB
import GRDBSQLite

/// The checkpoints of a file store's write-ahead log, made when no reader of this store
/// keeps the log from starting over.
///
/// SQLite checkpoints by itself inside a commit once the log holds 1,000 pages, and a
/// writer starts the log over only when no reader still reads from it. A batched
/// controller keeps a read transaction open on the state of its last snapshot (its pinned
/// reader) and moves it forward in each commit's handler — after SQLite's own checkpoint,
/// which therefore could never copy the last commit: the log was never started over, it
/// grew with every commit, and past the threshold every commit ran a checkpoint with two
/// syncs of the disk. Instead, the writer's log hook only counts the log's pages; when the
/// log holds the threshold, the store checkpoints right after the commit (where SQLite
/// would) when no pinned reader follows the commits, else after the commit's handlers: the
/// pinned readers that follow the last commit end their transactions, the log is checkpointed, and they pin the
/// same state again — on the database file alone when the log was copied whole, so that the
/// next write starts the log over. Readers frozen for older snapshots (after a refetch), or
/// other processes' readers, can still hold the log until they move on.
///
/// The hook and the checkpoint run on the writer only (in its commits, then in the commit's
/// observer); the followed readers are kept under a lock.
final class WALCheckpoints: @unchecked Sendable {
    /// SQLite's own threshold (`SQLITE_DEFAULT_WAL_AUTOCHECKPOINT`), in pages.
    static let threshold: Int32 = 1_000

    /// The pages in the log after the last commit (a checkpoint does not change it: only a
    /// commit that started the log over makes it small again). Writer only.
    private var pages: Int32 = 0
    private let lock = NSLock()
    private var readers: [ObjectIdentifier: WeakReader] = [:]

    private struct WeakReader {
        weak var reader: PinnedReader?
    }

    init() {}

    /// Replaces SQLite's automatic checkpoint of the writer `db` with this count.
    func install(_ db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, { context, _, _, pages in
            Unmanaged<WALCheckpoints>.fromOpaque(context!).takeUnretainedValue().pages = pages
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether the log holds the threshold (a checkpoint is due). Writer only.
    var isDue: Bool { pages >= Self.threshold }

    /// Whether a pinned reader follows the commits (then the checkpoint waits until the
    /// commit's handlers moved it).
    var followsReaders: Bool {
        lock.withLock { readers.values.contains { $0.reader != nil } }
    }

    /// `reader` pins the state of the last commit and moves with the commits.
    func follow(_ reader: PinnedReader) {
        lock.withLock { readers[ObjectIdentifier(reader)] = WeakReader(reader: reader) }
    }

    /// `reader` stays where it is (older snapshots read through it).
    func unfollow(_ reader: PinnedReader) {
        _ = lock.withLock { readers.removeValue(forKey: ObjectIdentifier(reader)) }
    }

    /// After a commit and its handlers, on the writer `db`: when the log holds the
    /// threshold, checkpoints it (passively: it waits for no one and copies nothing a reader
    /// still needs) with the followed readers' transactions ended. Nothing inside a
    /// transaction. Cheap when the log was copied whole already.
    func checkpointIfNeeded(_ db: Database) {
        guard isDue, !db.isInsideTransaction else { return }
        let followed = lock.withLock {
            readers = readers.filter { $0.value.reader != nil }
            return readers.values.compactMap(\.reader)
        }
        for reader in followed { reader.suspendForCheckpoint() }
        // A failure (another connection checkpointing, a busy lock) leaves it to the next.
        _ = sqlite3_wal_checkpoint_v2(db.sqliteConnection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        for reader in followed { reader.resumeAfterCheckpoint() }
    }
}
