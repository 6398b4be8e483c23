/// A validated model: every entity, enum and fetch of one `Models/` folder.
///
/// The schema is the hand-over point between the stages of the pipeline:
/// `YAMLLoader` → `SchemaDecoder` → `SchemaValidator` → (StrataCodegen) `Generator`.
public struct Schema: Hashable, Sendable {
    /// The model's name: the Swift namespace of its descriptor (`StrataModel` unless set).
    public var name: String
    public var enums: [EnumType]
    public var entities: [Entity]

    public init(name: String = "StrataModel", enums: [EnumType] = [], entities: [Entity] = []) {
        self.name = name
        self.enums = enums
        self.entities = entities
    }

    public func entity(named name: String) -> Entity? { entities.first { $0.name == name } }
    public func enumType(named name: String) -> EnumType? { enums.first { $0.name == name } }
}

/// `enums: { Priority: [low, normal, high] }`: a `String`-backed Swift enum.
public struct EnumType: Hashable, Sendable {
    public var name: String
    public var cases: [String]
    public var location: SourceLocation

    public init(name: String, cases: [String], location: SourceLocation) {
        self.name = name
        self.cases = cases
        self.location = location
    }
}

public struct Entity: Hashable, Sendable {
    public var name: String
    public var doc: String?
    public var attributes: [Attribute]
    public var relationships: [Relationship]
    /// Each element is one unique constraint over attribute or to-one relationship names.
    public var uniques: [[String]]
    /// Each element is one index over attribute or to-one relationship names.
    public var indexes: [[String]]
    public var fetches: [Fetch]
    public var renamedFrom: String?
    public var location: SourceLocation

    public init(
        name: String, doc: String? = nil, attributes: [Attribute] = [], relationships: [Relationship] = [],
        uniques: [[String]] = [], indexes: [[String]] = [], fetches: [Fetch] = [], renamedFrom: String? = nil,
        location: SourceLocation
    ) {
        self.name = name
        self.doc = doc
        self.attributes = attributes
        self.relationships = relationships
        self.uniques = uniques
        self.indexes = indexes
        self.fetches = fetches
        self.renamedFrom = renamedFrom
        self.location = location
    }

    public func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }
    public func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }
}

public enum AttributeType: Hashable, Sendable {
    case string, int, int32, int16, double, float, bool, date, uuid, data, decimal, url
    /// An enum of the model, by name.
    case enumeration(String)

    /// The spelling in the model language (`String`, `Int`, …, or the enum's name).
    public var name: String {
        switch self {
        case .string: "String"
        case .int: "Int"
        case .int32: "Int32"
        case .int16: "Int16"
        case .double: "Double"
        case .float: "Float"
        case .bool: "Bool"
        case .date: "Date"
        case .uuid: "UUID"
        case .data: "Data"
        case .decimal: "Decimal"
        case .url: "URL"
        case .enumeration(let name): name
        }
    }

    /// The built-in types by their model-language spelling.
    public static let builtins: [String: AttributeType] = [
        "String": .string, "Int": .int, "Int32": .int32, "Int16": .int16, "Double": .double,
        "Float": .float, "Bool": .bool, "Date": .date, "UUID": .uuid, "Data": .data,
        "Decimal": .decimal, "URL": .url,
    ]
}

/// A default value, as written in the model and checked against the attribute's type.
public enum DefaultValue: Hashable, Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    /// `now`, for `Date`.
    case now
    /// `uuid`, for `UUID`: a new random UUID.
    case uuid
    /// A case of an enum attribute's enum.
    case enumCase(String)
}

public struct Attribute: Hashable, Sendable {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    public var defaultValue: DefaultValue?
    public var isIndexed: Bool
    public var isUnique: Bool
    public var doc: String?
    public var renamedFrom: String?
    public var location: SourceLocation

    public init(
        name: String, type: AttributeType, isOptional: Bool = false, defaultValue: DefaultValue? = nil,
        isIndexed: Bool = false, isUnique: Bool = false, doc: String? = nil, renamedFrom: String? = nil,
        location: SourceLocation
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isIndexed = isIndexed
        self.isUnique = isUnique
        self.doc = doc
        self.renamedFrom = renamedFrom
        self.location = location
    }
}

/// Core Data's delete rules: the rule on relationship R of entity A says what happens to
/// R's destination objects when an A is deleted.
public enum DeleteRule: String, Hashable, Sendable, CaseIterable {
    case nullify, cascade, deny, noAction
}

public struct Relationship: Hashable, Sendable {
    public var name: String
    public var destination: String
    public var isToMany: Bool
    public var inverse: String
    /// Only for to-one relationships.
    public var isRequired: Bool
    public var deleteRule: DeleteRule
    public var doc: String?
    public var renamedFrom: String?
    public var location: SourceLocation

    public init(
        name: String, destination: String, isToMany: Bool = false, inverse: String, isRequired: Bool = false,
        deleteRule: DeleteRule = .nullify, doc: String? = nil, renamedFrom: String? = nil, location: SourceLocation
    ) {
        self.name = name
        self.destination = destination
        self.isToMany = isToMany
        self.inverse = inverse
        self.isRequired = isRequired
        self.deleteRule = deleteRule
        self.doc = doc
        self.renamedFrom = renamedFrom
        self.location = location
    }
}

/// One element of a `sort:` list: a key path (through to-one relationships) and a direction.
public struct SortKey: Hashable, Sendable {
    /// `["notebook", "name"]` for `notebook.name`.
    public var path: [String]
    public var descending: Bool
    public var location: SourceLocation

    public init(path: [String], descending: Bool, location: SourceLocation) {
        self.path = path
        self.descending = descending
        self.location = location
    }
}

/// A `where:` predicate: the source text, where it starts, and its parsed, type-checked tree.
public struct PredicateSource: Hashable, Sendable {
    public var text: String
    /// The location of the first character of `text` in the model file.
    public var location: SourceLocation
    public var expression: PredicateExpression
    /// The `$name` parameters in order of first appearance, with their inferred types.
    public var parameters: [PredicateParameter]

    public init(
        text: String, location: SourceLocation, expression: PredicateExpression,
        parameters: [PredicateParameter] = []
    ) {
        self.text = text
        self.location = location
        self.expression = expression
        self.parameters = parameters
    }
}

public enum Sections: Hashable, Sendable {
    /// `{ key: path, descending: false, by: firstLetter }`: one section per distinct value.
    case key(path: [String], descending: Bool, byFirstLetter: Bool, location: SourceLocation)
    /// `{ entity: relationship, sort: [...], where: ..., orphans: false }`: sections are the
    /// destination's objects, empty ones included.
    case entity(
        relationship: String, sort: [SortKey], predicate: PredicateSource?, orphans: Bool, location: SourceLocation)
}

public struct Fetch: Hashable, Sendable {
    public var name: String
    public var doc: String?
    public var predicate: PredicateSource?
    public var sort: [SortKey]
    public var sections: Sections?
    public var location: SourceLocation

    public init(
        name: String, doc: String? = nil, predicate: PredicateSource? = nil, sort: [SortKey] = [],
        sections: Sections? = nil, location: SourceLocation
    ) {
        self.name = name
        self.doc = doc
        self.predicate = predicate
        self.sort = sort
        self.sections = sections
        self.location = location
    }
}
