/// How a results controller loads its items' values.
///
/// ```swift
/// // A million notes: ids and keys up front, values a page at a time as rows are read.
/// let controller = try ResultsController(
///     store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 50))
/// let note = controller.snapshot[ItemPath(section: 0, item: 0)].item   // loads page 0
/// ```
///
/// **Eager** (the default) reads every value when the results are fetched and keeps them:
/// reading a snapshot never touches the database, and every stored value is checked when
/// the controller opens.
///
/// **Batched** reads only what orders and sections the results (ids, sort keys, section
/// keys) and loads the values of a page of rows the first time one of its rows is read
/// (`rows[i]`, `snapshot[path]`, iteration), like Core Data's `fetchBatchSize`. A snapshot
/// keeps at most `cachedPages` pages; a page it dropped is read again when needed.
///
/// What a value read from a batched snapshot is: **the value the item had when the snapshot
/// was made, whenever it is read.** Reads go through a read-only connection that keeps the
/// state of the last commit the controller applied (a WAL read transaction); before a
/// commit moves it forward, the controller keeps, for every snapshot still alive, the values
/// of the items that commit changes which that snapshot has not loaded. So a snapshot reads
/// like an eager one, however many commits came after it, and a row deleted since it was
/// made still reads. The one exception: after ``Store/close()`` the connection is released,
/// and values a snapshot had not loaded are read from the file as it is then.
///
/// Batched loading applies when the controller has no post-fetch filter or comparator, and
/// the store is a file: a filter or comparator reads every value, and an in-memory store has
/// no second connection, so then the controller loads eagerly. In batched mode a commit
/// reports each row it updated as an update (the old value is not loaded to compare), and
/// a refetch (``ResultsController/resume()``, a commit too large to patch, changes
/// announced without detail) is delivered as a reload.
///
/// A page that cannot be read (an I/O error, or a value another program stored in a form
/// Strata refuses, see ``ValueDecodingError``) stops the program when read through
/// `rows[i]` or `snapshot[path]`; ``ResultsRows/item(at:)`` throws it instead.
public enum ResultsLoading: Hashable, Sendable {
    /// Every value read with the results (the default).
    case eager
    /// Ids and keys read with the results, values in pages of `pageSize` rows when first
    /// read, at most `cachedPages` pages kept per snapshot. Both are at least 1: a smaller
    /// value is taken as 1.
    case batched(pageSize: Int = 64, cachedPages: Int = 32)
}
