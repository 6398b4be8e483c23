/// What changed since the last snapshot, as far as the engine knows.
enum ChangeJournal {
    /// Rows are items (no post-fetch filter or comparator), and every row changed since
    /// the last snapshot is journaled with its old and new places.
    case rows([Int64: RowChange])
    /// The sections derived again since the last snapshot are the ones that changed.
    case sections
    /// Anything may have changed (a refetch).
    case all

    /// New options: rows are derived again, so the sections derived again tell what changed.
    mutating func optionsChanged() {
        if case .rows = self { self = .sections }
    }

    /// At the start of a commit: a row journal describes one step from the last snapshot,
    /// so a journal the last snapshot did not take means anything may have changed.
    mutating func beginCommit() {
        if case .rows(let journal) = self, !journal.isEmpty { self = .all }
    }

    /// The row journal, taken out to be extended (nil when rows are not journaled). While it
    /// is out, anything may have changed.
    mutating func takeRows() -> [Int64: RowChange]? {
        guard case .rows(let journal) = self else { return nil }
        self = .all  // while the journal is out, so that it stays uniquely referenced
        return journal
    }
}
