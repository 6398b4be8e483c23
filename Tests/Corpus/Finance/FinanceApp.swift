// The Finance app of the model corpus: its model is Models/Finance.yaml, generated into this
// module by the build plugin (`StrataModel`), as in a user's own target.
import Strata

/// A part of an entry's amount booked to a category, stored as JSON in `Entry.splits`.
public struct Split: Codable, Hashable, Sendable {
    public var categoryName: String
    public var cents: Int

    public init(categoryName: String, cents: Int) {
        self.categoryName = categoryName
        self.cents = cents
    }
}
