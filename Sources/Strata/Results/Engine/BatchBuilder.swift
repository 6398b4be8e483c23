/// Builds every ``ChangeBatch`` that results deliver, for a commit, a refetch, an options
/// change and a user edit alike: from the old snapshot, the new one, and what is known to
/// have changed between them, which says how much of the two the batch must compare.
///
/// The results engine says what changed (``ResultsEngine/snapshotAndChanges()``); a user edit
/// says what the user did (``UserEdit``). ``ResultsPipeline`` builds the batches of its
/// steps and of user edits; ``ResultsOutlet`` builds one more kind, the difference from a
/// snapshot a user edit made to the store's state (``Known/sinceUserEdit(touched:)``).
enum BatchBuilder {
    /// What is known to have changed from the old snapshot to the new one.
    enum Known {
        /// Every row that changed, with the places it left and took, as the engine journaled
        /// them (rows are items; see ``ChangeBatch/init(from:to:rowChanges:)``). Row work
        /// grows with the change, not with the results.
        case rows([RowChange])
        /// Only the rows of these sections may differ (derived again); any section's value
        /// and presence may differ.
        case sections(Set<SectionID>)
        /// Anything may differ (a refetch, a window of the results): the identity difference.
        case anything
        /// A refetch of eager results whose rows are items, with the ids of both states and
        /// a comparison of values (``RefetchedRows``): the identity difference, computed from
        /// the ids.
        case refetched(RefetchedRows)
        /// A refetch of batched results: values are not loaded to compare, so no batch is
        /// built and the new snapshot is delivered as a reload.
        case refetchedInPages
        /// The delivered snapshot, which a user edit made, to the store's state: only the rows
        /// of these sections (nil: any) may differ. The two are first compared (the usual
        /// answer is that the store agrees with the edit): rows compare without reading what
        /// their storage need not read (a batched section compares ids, and values only of
        /// items changed in between: no page), where the difference would read every row of
        /// the sections.
        case sinceUserEdit(touched: Set<SectionID>?)
    }

    /// The batch from `old` to `new`; nil when none is built (``Known/refetchedInPages``).
    static func batch<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>, known: Known
    ) -> ChangeBatch? {
        switch known {
        case .rows(let rows):
            return ChangeBatch(from: old, to: new, rowChanges: rows)
        case .sections(let sections):
            return ChangeBatch(from: old, to: new, changedSections: sections)
        case .anything:
            return ChangeBatch(from: old, to: new)
        case .refetched(let kept):
            let sections = SectionMatching(from: old, to: new)
            guard let rows = kept.rowMatching(from: old, to: new, sections: sections) else { return ChangeBatch(from: old, to: new) }
            return ChangeBatch(sections: sections, rows: rows)
        case .refetchedInPages:
            return nil
        case .sinceUserEdit(let touched):
            if new.agrees(with: old, in: touched) { return ChangeBatch() }
            return ChangeBatch(from: old, to: new, changedSections: touched)
        }
    }

    /// The batch of a user edit, from the snapshot the user edited (`old`) to the snapshot
    /// with the edit made (`new`), marked with ``ChangeBatch/userEdit``. Reads no row.
    static func batch<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>, edit: UserEdit<Item>
    ) -> ChangeBatch {
        var batch: ChangeBatch
        switch edit {
        case .move(let move, _, let valueChanged):
            batch = ChangeBatch(itemMoves: [move], movedAndUpdatedItems: valueChanged ? [move.to] : [])
            batch.userEdit = .move
        case .delete(let path):
            if new.numberOfSections < old.numberOfSections {
                batch = ChangeBatch(sectionDeletes: [path.section])
            } else {
                batch = ChangeBatch(itemDeletes: [path])
            }
            batch.userEdit = .delete
        }
        return batch
    }

    // MARK: - Checks

    /// Checks that `batch`, built for `known`, replays `old` into `new`, and that a
    /// difference restricted to some sections equals the whole one (debug builds only; for
    /// tests, which turn it on with the controller's `checksInvariants`). Traps otherwise.
    /// The difference after a user edit (``Known/sinceUserEdit(touched:)``) is not checked:
    /// replaying it would read every page of batched snapshots.
    static func _check<Item, Section>(
        _ batch: ChangeBatch, from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>,
        known: Known
    ) {
        #if DEBUG
        if case .sinceUserEdit = known { return }
        do {
            let replayed = try batch.apply(to: old, reading: new)
            precondition(replayed == new, "the batch does not replay")
        } catch {
            preconditionFailure("invalid batch \(batch): \(error)")
        }
        switch known {
        case .sections: precondition(batch == ChangeBatch(from: old, to: new), "restricted difference differs")
        case .refetched: precondition(batch == ChangeBatch(from: old, to: new), "difference by kept ids differs")
        default: break
        }
        #endif
    }

    /// Checks that a user edit's batch replays `old` into `new` (debug builds only). Traps
    /// otherwise.
    static func _checkUserEdit<Item, Section>(
        _ batch: ChangeBatch, from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>
    ) {
        #if DEBUG
        do {
            let replayed = try batch.apply(to: old, reading: new)
            precondition(replayed == new, "the user edit's batch does not replay")
        } catch {
            preconditionFailure("invalid user edit batch \(batch): \(error)")
        }
        #endif
    }
}

extension ResultsSnapshot {
    /// Whether `other` has the same sections (ids and values, in order) and, in `touched`
    /// (nil: every section), the same rows: equal, for a snapshot whose other sections'
    /// rows are known not to differ.
    func agrees(with other: ResultsSnapshot, in touched: Set<SectionID>?) -> Bool {
        guard sections.count == other.sections.count else { return false }
        for (mine, theirs) in zip(sections, other.sections) {
            guard mine.id == theirs.id, mine.value == theirs.value else { return false }
            if touched?.contains(mine.id) ?? true, mine.rows != theirs.rows { return false }
        }
        return true
    }
}
