/// Each section's rows as the next snapshot shows them, as last derived from its items
/// (post-fetch options applied); a section without them is derived again.
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
