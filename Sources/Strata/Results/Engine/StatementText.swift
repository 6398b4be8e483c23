import GRDB

/// The text of a statement built from a request's plan, with the values its predicate binds.
struct StatementText: Sendable {
    var sql: String
    var arguments: StatementArguments
    /// The section key columns that follow the sort keys (0, 1 or 2).
    var keyColumns: Int
}
