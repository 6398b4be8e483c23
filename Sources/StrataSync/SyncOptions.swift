import Foundation
import Logging
import Strata

/// How a ``StoreSync`` runs.
public struct SyncOptions: Sendable {
    /// The entities that sync (nil: all of them). Both ends of every relationship must sync.
    public var entities: Set<String>?
    /// The author of the sync's own transactions (see ``Store/write(author:_:)``): they are
    /// not pushed back.
    public var author: String
    /// How often ``StoreSync/start()`` syncs when no change signal arrives.
    public var pollInterval: Duration
    /// The first and the longest wait before retrying after a failure (doubled each time,
    /// with jitter).
    public var retryDelays: ClosedRange<Duration>
    /// The most server log entries read in one pull batch (each applied in one transaction).
    /// A pull from the beginning of the server's log (an initial sync) reads four times as
    /// many in each batch after its first. A store that has never known an object reads its
    /// first pull from a snapshot of the server's tables where the server offers one
    /// (``SyncServer/readSnapshot(batchSize:into:)``), four times as many objects a batch.
    public var pullBatchSize: Int
    /// The most new objects or deletions sent in one push (the rest follow in the next).
    public var pushBatchSize: Int
    /// Where the sync reports what it does: each push and pull at `debug`, each change
    /// sent or received at `trace`, failures of the background sync at `warning`. Nothing
    /// is logged above `debug` while the sync works.
    public var logger: Logger
    /// Whether a pull's batch of objects the store does not know yet is inserted in bulk
    /// (off: change by change, as any other batch; the tests compare both).
    var insertsInBulk = true
    /// Whether an empty store's first pull reads the server's snapshot where the server
    /// offers one (off: the log, as any other pull; the tests compare both).
    var readsSnapshots = true
    /// The most values one statement of that bulk insert binds.
    ///
    /// Inside the pull's transaction, SQLite copies every page that a statement changes, and
    /// that existed before it, into its statement journal (a temporary file), so that a
    /// statement that fails can be undone alone. The sync ids are random: each statement of a
    /// few hundred rows changed pages all over their index, which was copied there again and
    /// again (about 200,000 writes of the temporary file per 100,000 objects with statements
    /// of 900 values, 18,000 with these; the sync ids' statements now need no journal at all:
    /// see `PullApplier.insertNew`). Smaller in tests, to cross statements.
    var bulkStatementValues = 32_000

    public init(
        entities: Set<String>? = nil, author: String = "strata.sync", pollInterval: Duration = .seconds(30),
        retryDelays: ClosedRange<Duration> = .milliseconds(100) ... .seconds(30), pullBatchSize: Int = 5_000,
        pushBatchSize: Int = 5_000, logger: Logger = Logger(label: "strata.sync")
    ) {
        self.logger = logger
        self.entities = entities
        self.author = author
        self.pollInterval = pollInterval
        self.retryDelays = retryDelays
        self.pullBatchSize = pullBatchSize
        self.pushBatchSize = pushBatchSize
    }
}
