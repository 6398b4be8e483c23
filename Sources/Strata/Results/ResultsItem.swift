/// A value a ``ResultsSnapshot`` can hold: hashable, sendable, and identified by
/// ``objectID``, which change batches match items by.
///
/// Every generated entity is a results item through its primary key (``StrataEntity``). Any
/// `Identifiable` type becomes one with an empty conformance, its `id` being the identity:
///
/// ```swift
/// struct Row: Identifiable, Hashable, Sendable { let id: Int; var title: String }
/// extension Row: ResultsItem {}
/// let batch = ChangeBatch(from: oldSnapshot, to: newSnapshot)   // ResultsSnapshot<Row, String>
/// ```
public protocol ResultsItem: Hashable, Sendable {
    /// The type of the identity.
    associatedtype ID: Hashable & Sendable

    /// The item's identity, stable across snapshots.
    var objectID: ID { get }
}

extension ResultsItem where Self: Identifiable {
    /// An `Identifiable` item's identity is its `id`.
    public var objectID: ID { id }
}
