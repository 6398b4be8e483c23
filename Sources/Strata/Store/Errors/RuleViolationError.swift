import Foundation
import GRDB

/// A write that broke a rule of the model: a value outside `min`/`max`, a string outside
/// `minLength`/`maxLength` or not matching its `pattern`, a to-many with fewer than
/// `minCount` or more than `maxCount` objects at commit, a required to-one left unset, a
/// one-to-one whose destination another object already has, or a to-one (or a
/// many-to-many link) that points to an object that does not exist. Nothing of the
/// transaction is committed: through ``Store/write(_:)`` the whole transaction is rolled
/// back.
///
/// ```swift
/// do {
///     try store.write { db in try db.update(note.with(\.title, longTitle)) }
/// } catch let error as RuleViolationError {
///     print(error)   // "Note 42: title is longer than maxLength 80"
/// }
/// ```
///
/// Value rules, one-to-ones and keys checked per statement are checked by each statement
/// (the statement fails and is undone); count rules, and required to-ones that the model
/// lets be unset for a while (see ``Rule/required``), when the transaction commits. Writes through ``Store/writer`` get the same checks;
/// turn their GRDB error into this one with ``init(_:)``.
public struct RuleViolationError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// A rule of the model, with its limit.
    public enum Rule: Hashable, Sendable, CustomStringConvertible {
        /// `min:`; the bound as text (a number, or a date as `yyyy-MM-dd HH:mm:ss.SSS`, UTC).
        case min(String)
        /// `max:`; the bound as text.
        case max(String)
        /// `minLength:`, in Unicode code points.
        case minLength(Int)
        /// `maxLength:`, in Unicode code points.
        case maxLength(Int)
        /// `pattern:`, a regular expression the whole string must match.
        case pattern(String)
        /// `minCount:` of a to-many relationship.
        case minCount(Int)
        /// `maxCount:` of a to-many relationship.
        case maxCount(Int)
        /// `required: true` of a to-one: its key was unset (``EntityID/unsaved``, or nil)
        /// when a statement wrote it, or, for a to-one checked at commit (see
        /// ``Store/write(_:)``), when the transaction ended; or the side of a one-to-one that
        /// does not store the key had no destination when the transaction ended.
        case required
        /// A one-to-one relationship (both sides to-one): each destination has at most one
        /// object. The object's key points to a destination that another object of its
        /// entity already points to. The associated value is the inverse, as
        /// `Entity.relationship` (`Person.card` for `Card.owner`).
        case oneToOne(String)
        /// A to-one's key, or a many-to-many link, points to an object that does not exist.
        /// The associated value is the destination entity (empty when the store cannot tell,
        /// as for a refusal it maps from SQLite's `FOREIGN KEY constraint failed`).
        case missingDestination(String)

        /// The rule as the model writes it: `maxLength 80`.
        public var description: String {
            switch self {
            case .min(let bound): "min \(bound)"
            case .max(let bound): "max \(bound)"
            case .minLength(let count): "minLength \(count)"
            case .maxLength(let count): "maxLength \(count)"
            case .pattern(let pattern): "pattern '\(pattern)'"
            case .minCount(let count): "minCount \(count)"
            case .maxCount(let count): "maxCount \(count)"
            case .required: "required"
            case .oneToOne(let inverse): "one-to-one with \(inverse)"
            case .missingDestination(let destination): destination.isEmpty ? "existing destination" : "existing \(destination)"
            }
        }

        /// What the value or relationship did: `is longer than maxLength 80`.
        var breach: String {
            switch self {
            case .min: "is less than \(self)"
            case .max: "is greater than \(self)"
            case .minLength: "is shorter than \(self)"
            case .maxLength: "is longer than \(self)"
            case .pattern: "does not match \(self)"
            case .minCount(let count): "has fewer than \(count) objects (minCount \(count))"
            case .maxCount(let count): "has more than \(count) objects (maxCount \(count))"
            case .required: "is required but not set"
            case .oneToOne(let inverse):
                "points to \(Self.article(inverse.split(separator: ".").first.map(String.init) ?? inverse)) that another object already points to (one-to-one with \(inverse))"
            case .missingDestination(let destination):
                "points to \(destination.isEmpty ? "an object" : Self.article(destination)) that does not exist"
            }
        }

        /// `a Person`, `an Owner`.
        private static func article(_ name: String) -> String {
            ("AEIOU".contains(name.first ?? "x") ? "an " : "a ") + name
        }
    }

    /// The entity of the object that broke the rule.
    public var entity: String
    /// The object's id; nil when the rule was checked by a trigger stored in the file, as
    /// for a write made on another connection than the store's writer, which cannot say.
    public var id: Int64?
    /// The attribute or relationship the rule belongs to.
    public var member: String
    /// The rule that was broken.
    public var rule: Rule

    /// An error for `rule` of `member`, broken by object `id` of `entity`.
    public init(entity: String, id: Int64?, member: String, rule: Rule) {
        self.entity = entity
        self.id = id
        self.member = member
        self.rule = rule
    }

    /// The rule error behind a GRDB error raised by a rule trigger, if it is one. Use it when
    /// you write with GRDB directly rather than through ``Store/write(_:)``.
    public init?(_ error: any Error) {
        if let error = error as? RuleViolationError {
            self = error
            return
        }
        guard let error = error as? DatabaseError, let message = error.message else { return nil }
        self.init(message: message)
    }

    /// The rule error behind SQLite's own refusal of a relationship's write, which names no
    /// object: a one-to-one's unique index (`UNIQUE constraint failed: Card.ownerID`), a
    /// required key's `NOT NULL` (`NOT NULL constraint failed: Team.serverID`), or a foreign
    /// key (`FOREIGN KEY constraint failed`, which names nothing: the entity is the table the
    /// failed statement wrote, when the store can tell). The store's writer refuses these
    /// writes first with an error that names the object (see ``RelationshipChecks``); this
    /// maps what reaches SQLite anyway.
    init?(constraintError error: any Error, schema: SchemaDescriptor) {
        guard let error = error as? DatabaseError else { return nil }
        switch error.extendedResultCode {
        case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_NOTNULL:
            guard let message = error.message, let colon = message.range(of: "constraint failed: ") else { return nil }
            let item = message[colon.upperBound...].trimmingCharacters(in: .whitespaces)
            guard !item.contains(","), let dot = item.firstIndex(of: ".") else { return nil }
            let table = String(item[..<dot]), column = String(item[item.index(after: dot)...])
            guard let entity = schema.entity(named: table),
                  let relationship = entity.relationships.first(where: { $0.storage == .foreignKey(column: column) })
            else { return nil }
            if error.extendedResultCode == .SQLITE_CONSTRAINT_NOTNULL {
                self.init(entity: table, id: nil, member: relationship.name, rule: .required)
            } else {
                guard let oneToOne = RelationshipChecks(schema: schema).oneToOne(entity: table, column: column) else { return nil }
                self.init(entity: table, id: nil, member: relationship.name, rule: .oneToOne(oneToOne.inverse))
            }
        case .SQLITE_CONSTRAINT_FOREIGNKEY:
            let table = error.sql.flatMap { Self.writtenTable($0) }.flatMap { name in
                schema.entities.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.name
            }
            self.init(entity: table ?? "", id: nil, member: "", rule: .missingDestination(""))
        default:
            return nil
        }
    }

    /// The table an `INSERT`, `UPDATE`, `REPLACE` or `DELETE` statement writes, unquoted.
    static func writtenTable(_ sql: String) -> String? {
        let words = sql.split(whereSeparator: { $0.isWhitespace || $0 == "(" })
        guard let verb = words.first?.uppercased() else { return nil }
        var index = 1
        func skip(_ word: String) { if index < words.count, words[index].uppercased() == word { index += 1 } }
        switch verb {
        case "INSERT", "REPLACE":
            if index + 1 < words.count, words[index].uppercased() == "OR" { index += 2 }
            skip("INTO")
        case "UPDATE":
            if index + 1 < words.count, words[index].uppercased() == "OR" { index += 2 }
        case "DELETE":
            skip("FROM")
        default:
            return nil
        }
        guard index < words.count else { return nil }
        var name = String(words[index])
        if name.lowercased().hasPrefix("main.") { name = String(name.dropFirst(5)) }
        return name.trimmingCharacters(in: CharacterSet(charactersIn: "\"`[]"))
    }

    /// The prefix of the messages of rule triggers and of the rule function.
    static let messagePrefix = "strata: rule: "

    /// The message a trigger or the rule function raises: `strata: rule: Note|42|title|maxLength|80`
    /// (the id is empty when unknown; the limit comes last, so a pattern may hold `|`).
    static func message(entity: String, id: Int64?, member: String, rule: String, limit: String) -> String {
        messagePrefix + [entity, id.map(String.init) ?? "", member, rule, limit].joined(separator: "|")
    }

    /// The error named by a rule message.
    init?(message: String) {
        guard let range = message.range(of: Self.messagePrefix) else { return nil }
        let parts = message[range.upperBound...].split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5 else { return nil }
        let limit = String(parts[4])
        let rule: Rule
        switch parts[3] {
        case "min": rule = .min(limit)
        case "max": rule = .max(limit)
        case "minLength": rule = .minLength(Int(limit) ?? 0)
        case "maxLength": rule = .maxLength(Int(limit) ?? 0)
        case "pattern": rule = .pattern(limit)
        case "minCount": rule = .minCount(Int(limit) ?? 0)
        case "maxCount": rule = .maxCount(Int(limit) ?? 0)
        case "required": rule = .required
        case "oneToOne": rule = .oneToOne(limit)
        case "missingDestination": rule = .missingDestination(limit)
        default: return nil
        }
        self.init(entity: String(parts[0]), id: Int64(parts[1]), member: String(parts[2]), rule: rule)
    }

    /// `Note 42: title is longer than maxLength 80` (`Note: …` without an id).
    public var description: String {
        let object = entity + (id.map { " \($0)" } ?? "")
        let subject = member.isEmpty ? "a key" : member
        return object.isEmpty ? "\(subject) \(rule.breach)" : "\(object): \(subject) \(rule.breach)"
    }

    /// The ``description``.
    public var errorDescription: String? { description }
}
