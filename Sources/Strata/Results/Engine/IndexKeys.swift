import GRDB

/// The keys that place an item: its sort values and its raw section key.
struct IndexKeys {
    /// The values of the request's sort keys, as SQLite orders them.
    var sort: [DatabaseValue]
    /// The raw section key: the key value, or the section object's id (NULL when nil).
    var key: DatabaseValue
    /// The ordering value of the key (enum keys order by declaration).
    var keyOrder: DatabaseValue
}
