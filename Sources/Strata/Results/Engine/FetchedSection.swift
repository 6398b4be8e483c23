import GRDB

/// A section object as read: its id, its value, and the values of the section sort.
struct FetchedSection<Section> {
    var id: Int64
    var value: Section
    var order: [DatabaseValue]
}
