/// Rows by section: in ``SnapshotJournal``, each section's item rows (its items with their
/// values, in order), and with post-fetch options, the rows the next snapshot shows, as last
/// derived from them (a section without them is derived again).
struct DerivedRows<Item: StrataEntity> {
    private var bySection: [SectionID: RowChunks<ResultsRow<Item>>] = [:]

    subscript(section: SectionID) -> RowChunks<ResultsRow<Item>>? {
        get { bySection[section] }
        set { bySection[section] = newValue }
        _modify { yield &bySection[section] }
    }

    var keys: Dictionary<SectionID, RowChunks<ResultsRow<Item>>>.Keys { bySection.keys }

    mutating func removeAll() { bySection = [:] }

    mutating func removeValue(forKey section: SectionID) -> RowChunks<ResultsRow<Item>>? {
        bySection.removeValue(forKey: section)
    }
}
