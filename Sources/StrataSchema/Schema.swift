import StrataSQL

/// A validated model: every entity, enum and fetch of one `Models/` folder.
///
/// The schema is the hand-over point between the stages of the pipeline:
/// `YAMLLoader` → `SchemaDecoder` → `SchemaValidator` → (StrataCodegen) `Generator`.
public struct Schema: Hashable, Sendable {
    /// The model's name: the Swift namespace of its descriptor (`StrataModel` unless set).
    public var name: String
    /// The enums of every model file, in file order.
    public var enums: [EnumType]
    /// The entities of every model file, in file order.
    public var entities: [Entity]

    /// A schema; tests and tools build them in code, the pipeline from model files.
    public init(name: String = "StrataModel", enums: [EnumType] = [], entities: [Entity] = []) {
        self.name = name
        self.enums = enums
        self.entities = entities
    }

    /// The entity called `name`, if any.
    public func entity(named name: String) -> Entity? { entities.first { $0.name == name } }
    /// The enum called `name`, if any.
    public func enumType(named name: String) -> EnumType? { enums.first { $0.name == name } }
}

/// `enums: { Priority: [low, normal, high] }`: a `String`-backed Swift enum.
public struct EnumType: Hashable, Sendable {
    /// The enum's Swift name.
    public var name: String
    /// The case names, in declaration order; each is also the case's raw value.
    public var cases: [String]
    /// Where the enum is declared.
    public var location: SourceLocation

    /// An enum with its cases.
    public init(name: String, cases: [String], location: SourceLocation) {
        self.name = name
        self.cases = cases
        self.location = location
    }
}

/// An entity: one Swift struct and one SQLite table (`entities: { Note: { … } }`).
public struct Entity: Hashable, Sendable {
    /// The entity's name: its Swift type and its table.
    public var name: String
    /// The `doc:` text, written as the struct's doc comment.
    public var doc: String?
    /// The attributes, in declaration order: stored properties and columns.
    public var attributes: [Attribute]
    /// The relationships, in declaration order.
    public var relationships: [Relationship]
    /// Each element is one unique constraint over attribute or to-one relationship names.
    public var uniques: [[String]]
    /// The `indexes:` elements: each an index over attribute or to-one relationship names,
    /// possibly named and with descending columns.
    public var indexes: [Index]
    /// The `fetches:` entries, in declaration order: typed requests in `<Entity>.Fetches`.
    public var fetches: [Fetch]
    /// The entity's former name (`renamedFrom:`), so a migration renames its table.
    public var renamedFrom: String?
    /// True for `abstract: true`: no table and no struct, but a Swift protocol, and the
    /// attributes, unique constraints and indexes it declares are copied into every entity
    /// that extends it.
    public var isAbstract: Bool = false
    /// `extends:`, the abstract entity this one inherits from, if any.
    public var parent: String?
    /// The name of the primary key: the struct's property holding the object's
    /// `Strata.EntityID` and the table's `INTEGER PRIMARY KEY` column. `id` unless the entity
    /// or its file sets `primaryKey:`.
    public var primaryKey: String = "id"
    /// `access:`: which users may read and write the entity's objects when the model declares
    /// per-user data (nil: not declared).
    public var access: Access?
    /// Where the entity is declared.
    public var location: SourceLocation

    /// An entity; everything but its name and location is optional.
    public init(
        name: String, doc: String? = nil, attributes: [Attribute] = [], relationships: [Relationship] = [],
        uniques: [[String]] = [], indexes: [Index] = [], fetches: [Fetch] = [], renamedFrom: String? = nil,
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

    /// The attribute called `name`, if any.
    public func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }
    /// The relationship called `name`, if any.
    public func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }
}

/// `access:` of an entity: which signed-in users may read and write its objects (what a
/// relay serves each user, and what it lets each user push).
///
/// ```yaml
/// Board:
///   access: { owner: ownerID, members: members.userID }
/// Card:
///   access: { through: board }
/// Label:
///   access: everyone
/// ```
public enum Access: Hashable, Sendable {
    /// `access: everyone`: every signed-in user.
    case everyone
    /// `access: { owner: <attribute>, members: <to-many>.<attribute> }` (either or both): the
    /// user whose id the attribute holds, and the users whose ids the attribute of the objects
    /// of the to-many holds.
    case users(owner: String?, members: AccessMembers?)
    /// `access: { through: <to-one> }`: whoever may read and write the object the to-one
    /// relationship leads to.
    case through(String)
}

/// `members: <relationship>.<attribute>` of an `access:`: a to-many relationship whose
/// destination objects each hold a user id.
public struct AccessMembers: Hashable, Sendable {
    /// The to-many relationship (`members`).
    public var relationship: String
    /// The attribute of its destination that holds a user id (`userID`).
    public var attribute: String

    public init(relationship: String, attribute: String) {
        self.relationship = relationship
        self.attribute = attribute
    }
}

/// One element of `indexes:`: `[notebook, -updatedAt]`, or
/// `{ name: recentNotes, columns: [notebook, -updatedAt] }`.
public struct Index: Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The attribute or to-one relationship names, in order.
    public var columns: [String]
    /// One flag per column: true for a `-` prefix (the column is indexed descending).
    public var descending: [Bool]
    /// The SQLite index name chosen with `name:`; nil for a generated `strata_index_…` name.
    public var name: String?

    /// An index over `columns`, ascending unless `descending` says otherwise.
    public init(columns: [String], descending: [Bool]? = nil, name: String? = nil) {
        self.columns = columns
        self.descending = descending ?? Array(repeating: false, count: columns.count)
        self.name = name
    }

    /// An unnamed index over ascending columns: `["notebook", "updatedAt"]`.
    public init(arrayLiteral columns: String...) {
        self.init(columns: columns)
    }
}

/// The type of an attribute: a built-in type or an enum of the model.
public enum AttributeType: Hashable, Sendable {
    /// The built-in types: `String`, `Int`, `Int32`, `Int16`, `Double`, `Float`, `Bool`, `Date`, `UUID`, `Data`, `Decimal`, `URL`.
    case string, int, int32, int16, double, float, bool, date, uuid, data, decimal, url
    /// An enum of the model, by name.
    case enumeration(String)
    /// `Codable<T>`: a value of the app's own `Codable` Swift type `T` (written as in Swift:
    /// `Address`, `[String]`, `MyKit.Style`), stored as JSON text.
    case codable(String)

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
        case .codable(let swiftType): "Codable<\(swiftType)>"
        }
    }

    /// True for `Codable<T>`: stored as JSON, so it cannot be compared, sorted, sectioned or indexed.
    public var isCodable: Bool {
        if case .codable = self { return true }
        return false
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
    /// A string literal, for `String`, `URL`, `UUID`, `Decimal` or `Data` attributes.
    case string(String)
    /// An integer literal, for any numeric attribute.
    case int(Int64)
    /// A decimal literal, for `Double`, `Float` or `Decimal` attributes.
    case double(Double)
    /// `true` or `false`, for `Bool` attributes.
    case bool(Bool)
    /// `now`, for `Date`.
    case now
    /// A fixed date for `Date` (`2024-01-01T00:00:00Z`, `2024-01-01`): milliseconds since
    /// 1970-01-01 00:00:00 UTC.
    case date(milliseconds: Int64)
    /// `uuid`, for `UUID`: a new random UUID.
    case uuid
    /// A case of an enum attribute's enum.
    case enumCase(String)
}

/// An attribute: a stored property of the entity's struct and a column of its table.
public struct Attribute: Hashable, Sendable {
    /// The attribute's name: the property and the column.
    public var name: String
    /// The attribute's type.
    public var type: AttributeType
    /// True for `optional: true`: the property is optional and the column nullable.
    public var isOptional: Bool
    /// The `default:`, resolved against the type by the validator.
    public var defaultValue: DefaultValue?
    /// True for `indexed: true`: the column gets an index.
    public var isIndexed: Bool
    /// True for `unique: true`: the column gets a unique constraint.
    public var isUnique: Bool
    /// The `doc:` text, written as the property's doc comment.
    public var doc: String?
    /// The attribute's former name (`renamedFrom:`), so a migration renames its column.
    public var renamedFrom: String?
    /// True for `transient: true`: a stored property of the struct that has no column; it
    /// takes its default when an object is read from the store.
    public var isTransient: Bool = false
    /// The abstract entity that declares this attribute when it is inherited (`extends:`);
    /// nil for the entity's own attributes.
    public var inheritedFrom: String?
    /// The value rules (`min`, `max`, `minLength`, `maxLength`, `pattern`), resolved against
    /// the type by the validator.
    public var rules = ValueRules()
    /// Where the attribute is declared.
    public var location: SourceLocation

    /// An attribute; required, unindexed and without a default unless said otherwise.
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

/// The value rules of an attribute: bounds for numbers and dates, length limits and a
/// pattern for strings. Every rule lets nil (an optional attribute's NULL) pass.
public struct ValueRules: Hashable, Sendable {
    /// `min:`: the smallest value allowed.
    public var min: RuleBound?
    /// `max:`: the largest value allowed.
    public var max: RuleBound?
    /// `minLength:`: the fewest Unicode code points a string may have.
    public var minLength: Int?
    /// `maxLength:`: the most Unicode code points a string may have.
    public var maxLength: Int?
    /// `pattern:`: a regular expression the whole string must match.
    public var pattern: String?

    /// No rules.
    public init(
        min: RuleBound? = nil, max: RuleBound? = nil, minLength: Int? = nil, maxLength: Int? = nil,
        pattern: String? = nil
    ) {
        self.min = min
        self.max = max
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
    }

    /// True when the attribute has no rule.
    public var isEmpty: Bool { self == ValueRules() }
}

/// A bound of `min:` or `max:`, of the attribute's type.
public enum RuleBound: Hashable, Sendable, Comparable {
    /// For `Int`, `Int32` and `Int16` attributes.
    case int(Int64)
    /// For `Double` and `Float` attributes.
    case double(Double)
    /// For `Date` attributes: the instant as it is stored, `yyyy-MM-dd HH:mm:ss.SSS` in UTC,
    /// which orders chronologically.
    case date(String)

    /// The bound as the store's messages write it.
    public var text: String {
        switch self {
        case .int(let value): String(value)
        case .double(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
        case .date(let value): value
        }
    }

    /// Bounds of one type compare by value.
    public static func < (lhs: RuleBound, rhs: RuleBound) -> Bool {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)): a < b
        case (.double(let a), .double(let b)): a < b
        case (.date(let a), .date(let b)): a < b
        default: false
        }
    }
}

/// Core Data's delete rules: the rule on relationship R of entity A says what happens to
/// R's destination objects when an A is deleted.
public enum DeleteRule: String, Hashable, Sendable, CaseIterable {
    /// `nullify` (the default) sets the destinations' inverse to nil, `cascade` deletes them, `deny` refuses the delete while any exist, `noAction` does nothing.
    case nullify, cascade, deny, noAction
}

/// A relationship to another entity (or the same one), with its inverse.
public struct Relationship: Hashable, Sendable {
    /// The relationship's name.
    public var name: String
    /// The name of the destination entity (`to:`).
    public var destination: String
    /// True for `many: true`.
    public var isToMany: Bool
    /// The name of the destination's relationship that points back (`inverse:`).
    public var inverse: String
    /// Only for to-one relationships.
    public var isRequired: Bool
    /// What happens to the destinations when an object of this entity is deleted.
    public var deleteRule: DeleteRule
    /// The `doc:` text, written as a doc comment.
    public var doc: String?
    /// The relationship's former name (`renamedFrom:`), for migrations.
    public var renamedFrom: String?
    /// True for `ordered: true`: a to-many whose destinations keep an order of their own.
    public var isOrdered: Bool = false
    /// `foreignKey:`: the name of the to-one's key (its Swift property and its column),
    /// instead of `<relationship>ID`. Only for a to-one that stores its key.
    public var foreignKey: String?
    /// `initialOrder:`: sort keys of the destination that give the first order when a
    /// migration makes the relationship ordered (the id breaks ties).
    public var initialOrder: [SortKey] = []
    /// `minCount:`: a to-many holds at least this many objects when a transaction commits.
    public var minCount: Int?
    /// `maxCount:`: a to-many holds at most this many objects when a transaction commits.
    public var maxCount: Int?
    /// Where the relationship is declared.
    public var location: SourceLocation

    /// A relationship; to-one, optional and `nullify` unless said otherwise.
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
    /// True for a `-` prefix: largest first.
    public var descending: Bool
    /// Where the sort key is written.
    public var location: SourceLocation

    /// A sort key.
    public init(path: [String], descending: Bool, location: SourceLocation) {
        self.path = path
        self.descending = descending
        self.location = location
    }
}

/// A `where:` predicate: the source text, where it starts, and its parsed, type-checked tree.
public struct PredicateSource: Hashable, Sendable {
    /// The predicate as written (escapes and folding already applied by YAML).
    public var text: String
    /// The location of the first character of `text` in the model file.
    public var location: SourceLocation
    /// The parsed, type-checked tree; `.constant(true)` until the validator parses `text`.
    public var expression: PredicateExpression
    /// The `$name` parameters in order of first appearance, with their inferred types.
    public var parameters: [PredicateParameter]

    /// A predicate source; the validator fills `expression` and `parameters`.
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

/// How a fetch groups its results into sections (`sections:`).
public enum Sections: Hashable, Sendable {
    /// `{ key: path, descending: false, by: firstLetter }`: one section per distinct value.
    case key(path: [String], descending: Bool, byFirstLetter: Bool, location: SourceLocation)
    /// `{ entity: relationship, sort: [...], where: ..., orphans: false }`: sections are the
    /// destination's objects, empty ones included.
    case entity(
        relationship: String, sort: [SortKey], predicate: PredicateSource?, orphans: Bool, location: SourceLocation)
}

/// One `fetches:` entry: a typed fetch request of its entity.
public struct Fetch: Hashable, Sendable {
    /// The fetch's name: a member of `<Entity>.Fetches`.
    public var name: String
    /// The `doc:` text, written as a doc comment.
    public var doc: String?
    /// The `where:` predicate, if any.
    public var predicate: PredicateSource?
    /// The `sort:` keys; ties are always broken by the primary key.
    public var sort: [SortKey]
    /// The `sections:`, if any.
    public var sections: Sections?
    /// Where the fetch is declared.
    public var location: SourceLocation

    /// A fetch; with neither predicate nor sort nor sections it fetches every object by id.
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

extension DefaultValue {
    /// A date given in milliseconds since 1970 as `yyyy-MM-dd HH:mm:ss.SSS` in UTC: the text a
    /// `Date` column stores (`storage: true`), or as ISO 8601 `yyyy-MM-ddTHH:mm:ss.SSSZ`.
    public static func dateText(milliseconds: Int64, storage: Bool) -> String {
        let (days, dayMilliseconds) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        var day = days, rest = dayMilliseconds
        if rest < 0 {
            day -= 1
            rest += 86_400_000
        }
        let (year, month, dayOfMonth) = CivilDate.of(daysSince1970: day)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(dayOfMonth, 2))"
        let time = "\(pad(rest / 3_600_000, 2)):\(pad(rest / 60_000 % 60, 2)):\(pad(rest / 1000 % 60, 2)).\(pad(rest % 1000, 3))"
        return storage ? date + " " + time : date + "T" + time + "Z"
    }
}
