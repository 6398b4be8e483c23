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

    /// Whether the items at `lhs` and `rhs` are equal (`==`), compared where they are stored.
    ///
    /// Results compare many items in code that is not specialized for your type, where
    /// passing an item to `==` copies it first (a call through its value witnesses and a
    /// retain of every reference it holds). This requirement takes pointers instead; its
    /// default implementation is inlinable, so it is specialized for your type where the
    /// conformance is declared. You never need to implement it.
    static func _equalItems(_ lhs: UnsafePointer<Self>, _ rhs: UnsafePointer<Self>) -> Bool
}

extension ResultsItem {
    @inlinable
    public static func _equalItems(_ lhs: UnsafePointer<Self>, _ rhs: UnsafePointer<Self>) -> Bool {
        lhs.pointee == rhs.pointee
    }
}

extension ResultsItem where Self: Identifiable {
    /// An `Identifiable` item's identity is its `id`.
    public var objectID: ID { id }
}
