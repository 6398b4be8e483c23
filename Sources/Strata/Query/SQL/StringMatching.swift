import Foundation
import GRDB

/// The string operators of predicates (`CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `LIKE`) with their
/// `[c]`/`[d]` options, implemented once in Swift and used both in memory and inside SQLite
/// (as the SQL function `strata_match`, registered on every connection of a ``Store``), so
/// both always give the same answer.
///
/// Semantics:
/// - `[c]` folds case and `[d]` folds diacritics with Foundation's
///   `String.folding(options:locale:)` (no locale); both strings are folded the same way.
/// - Matching compares Swift `Character`s (extended grapheme clusters, canonical equivalence):
///   `"é"` precomposed matches `"e\u{301}"`, and without `[d]` `"é"` does not contain `"e"`.
/// - `LIKE`: `*` matches any run of characters (possibly empty), `?` exactly one character;
///   there is no escape character, and `%`/`_` are ordinary characters.
/// - Either side nil (or not a string) never matches.
public enum StringMatching {
    /// The name of the SQL function: `strata_match(op, value, pattern, options)` → 0 or 1.
    public static let sqlFunctionName = "strata_match"

    /// Folds `string` as `options` say.
    public static func fold(_ string: String, _ options: StringOptions) -> String {
        var foldingOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldingOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldingOptions.insert(.diacriticInsensitive) }
        if foldingOptions.isEmpty { return string }
        return string.folding(options: foldingOptions, locale: nil)
    }

    /// Whether `value` matches `pattern` under `op` and `options`.
    public static func matches(_ value: String, _ op: StringOperator, _ pattern: String, _ options: StringOptions) -> Bool {
        let value = Array(fold(value, options))
        let pattern = Array(fold(pattern, options))
        switch op {
        case .beginsWith:
            return value.starts(with: pattern)
        case .endsWith:
            return value.count >= pattern.count && Array(value.suffix(pattern.count)) == pattern
        case .contains:
            if pattern.isEmpty { return true }
            if pattern.count > value.count { return false }
            for start in 0...(value.count - pattern.count) where value[start..<start + pattern.count].elementsEqual(pattern) {
                return true
            }
            return false
        case .like:
            return like(value, pattern)
        }
    }

    /// Whether database values match: false when either is not a string.
    public static func matches(_ value: DatabaseValue, _ op: StringOperator, _ pattern: DatabaseValue, _ options: StringOptions) -> Bool {
        guard case .string(let value) = value.storage, case .string(let pattern) = pattern.storage else { return false }
        return matches(value, op, pattern, options)
    }

    /// Wildcard matching without backtracking blow-up (greedy with the last `*` remembered).
    static func like(_ value: [Character], _ pattern: [Character]) -> Bool {
        var v = 0, p = 0
        var star = -1, mark = 0
        while v < value.count {
            if p < pattern.count && (pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == value[v])) {
                v += 1
                p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                star = p
                mark = v
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                v = mark
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    /// The SQL function behind string operators in SQL.
    static let sqlFunction = DatabaseFunction(sqlFunctionName, argumentCount: 4, pure: true) { values in
        guard case .string(let opName) = values[0].storage, let op = StringOperator(rawValue: opName),
              case .int64(let rawOptions) = values[3].storage
        else { return false }
        return matches(values[1], op, values[2], StringOptions(rawValue: Int(rawOptions)))
    }
}
