/// Errors of results controllers.
public enum ResultsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request's `Section` type does not fit its sectioning (for example a key section
    /// type that is not `DatabaseValueConvertible`).
    case sectionTypeMismatch(String)
    /// A section key value that the `Section` type cannot represent.
    case sectionValueUnreadable(String)
    /// A batched snapshot's page did not hold the item with this row id: its read state was
    /// lost (another process replaced the file, or the snapshot was read after
    /// ``Store/close()`` and another program deleted the row).
    case itemUnavailable(Int64)

    /// A readable message.
    public var description: String {
        switch self {
        case .sectionTypeMismatch(let type): "the section type \(type) does not fit the request's sectioning"
        case .sectionValueUnreadable(let value): "the section key value \(value) cannot be read as the section type"
        case .itemUnavailable(let id): "the item with row id \(id) is no longer in the database to load it into a batched snapshot"
        }
    }
}
