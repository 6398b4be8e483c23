import Foundation
import GRDB

/// A write that broke a rule of the model: a value outside `min`/`max`, a string outside
/// `minLength`/`maxLength` or not matching its `pattern`, or a to-many with fewer than
/// `minCount` or more than `maxCount` objects at commit. Nothing of the transaction is
/// committed: through ``Store/write(_:)`` the whole transaction is rolled back.
///
/// ```swift
/// do {
///     try store.write { db in try db.update(note.with(\.title, longTitle)) }
/// } catch let error as RuleViolationError {
///     print(error)   // "Note 42: title is longer than maxLength 80"
/// }
/// ```
///
/// Value rules are checked by each statement (the statement fails and is undone); count
/// rules, and required to-ones that the model lets be unset for a while (see
/// ``Rule/required``), when the transaction commits. Writes through ``Store/writer`` get the same checks;
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
        /// `required: true` of a to-one checked at commit (see ``Store/write(_:)``): its
        /// key was still unset (``EntityID/unsaved``) when the transaction ended.
        case required

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
            }
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
        default: return nil
        }
        self.init(entity: String(parts[0]), id: Int64(parts[1]), member: String(parts[2]), rule: rule)
    }

    /// `Note 42: title is longer than maxLength 80` (`Note: …` without an id).
    public var description: String {
        "\(entity)\(id.map { " \($0)" } ?? ""): \(member) \(rule.breach)"
    }

    /// The ``description``.
    public var errorDescription: String? { description }
}
