import Foundation
import GRDB
import Strata

/// One way of applying a pulled batch inside the pull's transaction (see
/// ``PullApplier/apply(_:prepared:assumingNew:_:)-(PullBatch,_,_,_)``). Each gives the same
/// store as applying every change in a savepoint of its own, which a pull of thousands of
/// rows need not pay for; they differ in what they cost and in when they hand over.
protocol PullStrategy {
    /// Applies `batch` with `applier`; false when this strategy does not take the batch (the
    /// next one does), true when it was applied.
    func apply(_ batch: PullBatch, _ applier: PullApplier, _ db: Database) throws -> Bool
}

/// A batch of objects this store does not know yet (an initial sync, say), inserted in bulk
/// (``PullApplier/insertNew(_:_:)``) as the transaction's first change, without a savepoint:
/// in a savepoint, GRDB copies and holds every row's change event until its end, and
/// SQLite's statement journal grows with every statement. When a rule of this store refuses
/// any of it, ``PullApplier/BulkInsertRefused`` is thrown: the whole transaction is rolled
/// back, and the pull goes again without this strategy, as if it was never tried.
/// (Searching the store for every sync id of a batch of 20,000 took about a tenth of the
/// writer's time in an initial sync: with `assumingNew`, the insert of the sync ids is the
/// check.)
struct BulkInsertStrategy: PullStrategy {
    /// The batch's objects, prepared by ``PullApplier/prepare(_:)-(PullBatch)`` (nil: the
    /// strategy takes no batch).
    var newObjects: PullApplier.NewObjects?
    /// Whether the caller knows the store holds none of them (see
    /// ``PullApplier/apply(_:prepared:assumingNew:_:)-(PullBatch,_,_,_)``).
    var assumingNew: Bool

    func apply(_ batch: PullBatch, _ applier: PullApplier, _ db: Database) throws -> Bool {
        guard applier.options.insertsInBulk, let newObjects, try assumingNew || applier.isNew(newObjects, db) else { return false }
        var together = applier
        together.isolatesChanges = false
        do {
            try together.applyChanges(batch.changesOtherThanInserts, newObjects: newObjects, db)
            if applier.checksCounts, let broken = try applier.store.brokenCountRules(db).first { throw broken }
        } catch let error where PullApplier.isRefusal(error) || error is RuleViolationError {
            applier.options.logger.debug("a batch of \(newObjects.count) new objects refused in bulk, applied change by change: \(error)")
            throw PullApplier.BulkInsertRefused(error: error)
        }
        applier.options.logger.debug("\(newObjects.count) new objects inserted in bulk\(assumingNew ? " (the store not searched)" : "")")
        return true
    }
}

/// Every change of the batch at once, in one savepoint; when a rule of this store refuses
/// one, that try is rolled back and the batch goes to ``ChangeByChangeStrategy``.
struct AllAtOnceStrategy: PullStrategy {
    func apply(_ batch: PullBatch, _ applier: PullApplier, _ db: Database) throws -> Bool {
        var together = applier
        together.isolatesChanges = false
        let changes = batch.changes
        do {
            try db.inSavepoint {
                try together.applyChanges(changes, db)
                if applier.checksCounts, let broken = try applier.store.brokenCountRules(db).first { throw broken }
                return .commit
            }
        } catch let error where PullApplier.isRefusal(error) || error is RuleViolationError {
            return try ChangeByChangeStrategy().apply(batch, applier, db)
        }
        return true
    }
}

/// Each change in a savepoint of its own, a change that a rule of this store refuses recorded
/// and left out; then, while a count rule of this store is broken (checked at commit, so no
/// savepoint of one change can catch it), the changes that touch the owners out of range set
/// aside (recorded) and the others applied again (``PullApplier/applyKeepingCounts(_:_:)``).
struct ChangeByChangeStrategy: PullStrategy {
    func apply(_ batch: PullBatch, _ applier: PullApplier, _ db: Database) throws -> Bool {
        try applier.applyKeepingCounts(batch.changes, db)
        return true
    }
}
