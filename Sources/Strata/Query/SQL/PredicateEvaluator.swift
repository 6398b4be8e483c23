import GRDB

/// An object a predicate can be evaluated on in memory: its column values, and the objects
/// its relationships lead to.
public protocol PredicateSubject {
    /// The value of a column (an attribute, `id`, or a to-one's foreign key column).
    func value(ofColumn name: String) throws -> DatabaseValue
    /// The destination of a to-one relationship; nil when it is nil or dangling.
    func destination(ofToOne relationship: String) throws -> (any PredicateSubject)?
    /// The existing destinations of a to-many relationship.
    func destinations(ofToMany relationship: String) throws -> [any PredicateSubject]
}

/// Evaluates ``PredicateNode`` trees in memory with exactly the semantics of their SQL
/// (``SQLQueryBuilder``): values compare as SQLite compares them
/// (``DatabaseValueOrdering``), `==`/`!=` treat NULL like a value, ordering comparisons and
/// string operators are false on NULL (their `==` treats NULL like `==` does), string
/// operators use ``StringMatching``. A `Double.nan` — a predicate value, or a value a
/// subject reports — is NULL, as SQLite binds and stores it; text in a predicate value ends
/// at its first NUL character, as GRDB binds it. Subjects report text in full, past a NUL
/// character (``ObjectGraph`` does), since SQLite compares all of it.
///
/// ```swift
/// let graph = try ObjectGraph.load(db, schema: NotesModel.schema)
/// let matches = try PredicateEvaluator.evaluate(predicate.node, on: graph.subject("Note", id: 1)!)
/// ```
public enum PredicateEvaluator {
    /// Whether `subject` satisfies `node`, with the answer SQLite gives for the same predicate.
    /// Throws ``QueryError`` for a path the schema does not have.
    public static func evaluate(_ node: PredicateNode, on subject: any PredicateSubject) throws -> Bool {
        switch node {
        case .constant(let value):
            return value
        case .and(let nodes):
            for node in nodes where try !evaluate(node, on: subject) { return false }
            return true
        case .or(let nodes):
            for node in nodes where try evaluate(node, on: subject) { return true }
            return false
        case .not(let node):
            return try !evaluate(node, on: subject)
        case .compare(let lhs, let op, let rhs):
            let l = try value(lhs, on: subject), r = try value(rhs, on: subject)
            switch op {
            case .equal: return DatabaseValueOrdering.isSame(l, r)
            case .notEqual: return !DatabaseValueOrdering.isSame(l, r)
            default:
                if l.isNull || r.isNull { return false }
                let order = DatabaseValueOrdering.compare(l, r)
                switch op {
                case .less: return order < 0
                case .lessOrEqual: return order <= 0
                case .greater: return order > 0
                default: return order >= 0
                }
            }
        case .match(let lhs, let op, let rhs, let options):
            return StringMatching.matches(try value(lhs, on: subject), op, try value(rhs, on: subject), options)
        case .isIn(let lhs, let values):
            let l = try value(lhs, on: subject)
            return values.contains { DatabaseValueOrdering.isSame(l, $0.asBound) }
        case .between(let lhs, let low, let high):
            let l = try value(lhs, on: subject)
            let low = low.asBound, high = high.asBound
            if l.isNull || low.isNull || high.isNull { return false }
            return DatabaseValueOrdering.compare(l, low) >= 0 && DatabaseValueOrdering.compare(l, high) <= 0
        case .quantified(let quantifier, let relationship, let predicate):
            let objects = try destinations(relationship, on: subject)
            switch quantifier {
            case .any: return try objects.contains { try evaluate(predicate, on: $0) }
            case .none: return try !objects.contains { try evaluate(predicate, on: $0) }
            case .all: return try objects.allSatisfy { try evaluate(predicate, on: $0) }
            }
        }
    }

    /// The value of a value node: NULL when a to-one on the path is nil, or for a NaN.
    public static func value(_ node: ValueNode, on subject: any PredicateSubject) throws -> DatabaseValue {
        switch node {
        case .value(let value):
            return value.asBound
        case .count(let relationship):
            return Int64(try destinations(relationship, on: subject).count).databaseValue
        case .path(let path):
            guard let last = path.last else { return .null }
            var current: any PredicateSubject = subject
            for name in path.dropLast() {
                guard let next = try current.destination(ofToOne: name) else { return .null }
                current = next
            }
            return try current.value(ofColumn: last).nanAsNull
        }
    }

    private static func destinations(_ path: [String], on subject: any PredicateSubject) throws -> [any PredicateSubject] {
        guard let last = path.last else { return [] }
        var current: any PredicateSubject = subject
        for name in path.dropLast() {
            guard let next = try current.destination(ofToOne: name) else { return [] }
            current = next
        }
        return try current.destinations(ofToMany: last)
    }

    /// The values a list of sort keys orders by, for ``DatabaseValueOrdering/compare(_:id:_:id:descending:)``:
    /// the value, or for enum attributes the case's position (unknown values after the
    /// known ones), as ``SQLQueryBuilder/orderingExpression(_:)`` selects them.
    public static func sortValues(
        _ sort: [SortNode], on subject: any PredicateSubject, schema: SchemaDescriptor, entity: String
    ) throws -> [DatabaseValue] {
        let builder = try SQLQueryBuilder(schema: schema, rootEntity: entity)
        return try sort.map { key in
            let value = try value(.path(key.path), on: subject)
            guard case .enumeration(_, let cases) = try builder.valueType(of: key.path), !value.isNull else { return value }
            for (index, name) in cases.enumerated() where DatabaseValueOrdering.isSame(value, name.databaseValue) {
                return Int64(index).databaseValue
            }
            return Int64(cases.count).databaseValue
        }
    }
}
