/// The section type of a request without sections: one unnamed section holds every item.
public struct NoSection: Hashable, Sendable, CustomStringConvertible {
    /// The only value.
    public init() {}
    /// The empty string: the single section has no name.
    public var description: String { "" }
}

/// What a request fetches: items of entity `Item` that match a predicate, in a sort order,
/// grouped into sections of type `Section`.
///
/// Generated code declares one request per `fetches:` entry of the model
/// (`Note.Fetches.byNotebook`); requests are values, so they can be refined:
///
/// ```swift
/// let request = Note.Fetches.all.filter(Note.pinned == true)
/// ```
public struct ResultsRequest<Item: StrataEntity, Section: Hashable & Sendable>: Sendable {
    /// The items to fetch; nil fetches every object of `Item`.
    public var predicate: EntityPredicate<Item>?
    /// The item order inside a section; the primary key always breaks ties.
    public var sortKeys: [SortKey<Item>]
    /// How items are grouped into sections, and the sections ordered.
    public var sectioning: Sectioning<Item, Section>
    /// At most this many rows are shown (nil: every row); see ``limit(_:offset:)``.
    public var limit: Int?
    /// The number of rows skipped before the first one shown (with ``limit``, or alone).
    public var offset: Int = 0

    /// A request for the items matching `predicate`, sorted by `sortKeys` (then id), in the
    /// sections `sectioning` describes.
    public init(
        where predicate: EntityPredicate<Item>? = nil, sortedBy sortKeys: [SortKey<Item>] = [],
        sections sectioning: Sectioning<Item, Section>
    ) {
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.sectioning = sectioning
    }

    /// This request with `predicate` added (AND) to its own.
    public func filter(_ predicate: EntityPredicate<Item>) -> ResultsRequest {
        var copy = self
        copy.predicate = self.predicate.map { $0 && predicate } ?? predicate
        return copy
    }

    /// This request with another item order.
    public func sorted(by keys: SortKey<Item>...) -> ResultsRequest {
        var copy = self
        copy.sortKeys = keys
        return copy
    }

    /// This request showing at most `limit` rows, after skipping `offset` rows: a live
    /// window, such as "the 50 most recent notes".
    ///
    /// ```swift
    /// let recent = Note.Fetches.all.sorted(by: Note.updatedAt.descending).limit(50)
    /// let controller = try ResultsController(store: store, request: recent)
    /// ```
    ///
    /// A results controller counts the rows it shows, in display order: sections in order,
    /// each section's rows in order (after the post-fetch filter and comparator, a group row
    /// counting as one row). Only sections with rows in the window are shown. It keeps the
    /// window as commits come: a row that enters it pushes the last one out, and both are in
    /// the same batch. ``Store/fetchAll(_:)-(ResultsRequest<Entity,Section>)`` and
    /// ``Store/fetchCount(_:)-(ResultsRequest<Entity,Section>)`` apply the window to their
    /// own flat order (the item sort, sections ignored), which is the controller's for a
    /// request without sections.
    ///
    /// - Precondition: `limit` and `offset` are not negative.
    public func limit(_ limit: Int?, offset: Int = 0) -> ResultsRequest {
        precondition(limit.map { $0 >= 0 } ?? true && offset >= 0, "a request's limit and offset are not negative")
        var copy = self
        copy.limit = limit
        copy.offset = offset
        return copy
    }

    /// Whether the request shows a window of its rows.
    var isWindowed: Bool { limit != nil || offset > 0 }
}

extension ResultsRequest where Section == NoSection {
    /// A request without sections.
    public init(where predicate: EntityPredicate<Item>? = nil, sortedBy sortKeys: [SortKey<Item>] = []) {
        self.init(where: predicate, sortedBy: sortKeys, sections: .none)
    }
}

/// How a request groups its items into sections.
public struct Sectioning<Item, Section>: Hashable, Sendable {
    /// The untyped description of a ``Sectioning``.
    public enum Kind: Hashable, Sendable {
        /// One section, ``NoSection``.
        case none
        /// One section per distinct value of the key path (or per uppercased first letter),
        /// sections in the key's order.
        case key(path: [String], descending: Bool, firstLetter: Bool)
        /// One section per object of the destination of a to-one relationship (matching
        /// `predicate`, ordered by `sort`), empty ones included; items whose relationship
        /// is nil go to a trailing section when `orphans` is true, and are left out otherwise.
        case entity(relationship: [String], sort: [SortNode], predicate: PredicateNode?, orphans: Bool)
    }

    /// The untyped description.
    public let kind: Kind

    /// A sectioning from its untyped description (used by generated code and the factories).
    public init(_ kind: Kind) { self.kind = kind }
}

extension Sectioning where Section == NoSection {
    /// No sections: one unnamed section holds every item.
    public static var none: Sectioning { Sectioning(.none) }
}

extension Sectioning {
    /// One section per distinct value of `column`.
    public static func key(_ column: TypedColumn<Item, Section>, descending: Bool = false) -> Sectioning {
        Sectioning(.key(path: column.path, descending: descending, firstLetter: false))
    }
}

extension Sectioning where Section == String {
    /// One section per uppercased first letter of `column` (`""` for an empty string).
    public static func firstLetter(of column: TypedColumn<Item, String>, descending: Bool = false) -> Sectioning {
        Sectioning(.key(path: column.path, descending: descending, firstLetter: true))
    }

    /// One section per uppercased first letter of `column` (`""` for nil or an empty string).
    public static func firstLetter(of column: TypedColumn<Item, String?>, descending: Bool = false) -> Sectioning {
        Sectioning(.key(path: column.path, descending: descending, firstLetter: true))
    }
}

extension Sectioning where Section: StrataEntity {
    /// One section per object of `relationship`'s destination, empty ones included.
    public static func entity(
        _ relationship: ToOne<Item, Section>, sortedBy sort: [SortKey<Section>] = [],
        where predicate: EntityPredicate<Section>? = nil, orphans: Bool = false
    ) -> Sectioning {
        Sectioning(.entity(relationship: relationship.path, sort: sort.map(\.node), predicate: predicate?.node, orphans: orphans))
    }
}
