import Foundation
import GRDB

/// The string operators of predicates (`==[c]`, `CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `LIKE`,
/// with or without their `[c]`/`[d]` options), implemented once in Swift and used both in
/// memory and inside SQLite (as the SQL function `strata_match`, registered on every
/// connection of a ``Store``), so both always give the same answer.
///
/// Semantics:
/// - `[c]` folds case and `[d]` folds diacritics with Foundation's
///   `String.folding(options:locale:)` (no locale); both strings are folded the same way.
///   `[c]` is full Unicode case folding: `"ß"`, `"ẞ"` and `"SS"` all fold to `"ss"`, `"ﬁ"` to
///   `"fi"`, `"ς"` and `"Σ"` to `"σ"`; there are no Turkish rules (`"ı"` stays `"ı"`, `"İ"`
///   folds to `"i\u{307}"`). `[d]` removes the marks a character decomposes into: `"é"` and
///   `"Å"` fold to `"e"` and `"A"`, while `"ø"`, `"ł"`, `"æ"` and `"ß"` have none and stay.
/// - Matching compares Swift `Character`s (extended grapheme clusters, canonical equivalence):
///   `"é"` precomposed matches `"e\u{301}"`, and without `[d]` `"é"` does not contain `"e"`.
/// - `==` (``StringOperator/equal``) is true when the folded strings have equal Characters;
///   nil equals nil and differs from every string, as with `==` without options.
/// - `LIKE`: `*` matches any run of characters (possibly empty), `?` exactly one character,
///   counted in the folded string (with `[c]`, `"ß"` is two characters, `"ss"`); there is no
///   escape character, and `%`, `_` and `\` are ordinary characters.
/// - Either side nil (or not a string) never matches, except for `==` as above.
/// - Database values are matched up to their first NUL character: GRDB reads the text
///   arguments of `strata_match` as C strings (and stores and binds text the same way).
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
        case .equal:
            return value == pattern
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

    /// Whether database values match, each string up to its first NUL character: false when
    /// either is not a string, except that ``StringOperator/equal`` holds for two NULLs.
    public static func matches(_ value: DatabaseValue, _ op: StringOperator, _ pattern: DatabaseValue, _ options: StringOptions) -> Bool {
        guard case .string(let value) = value.storage, case .string(let pattern) = pattern.storage else {
            return op == .equal && value.isNull && pattern.isNull
        }
        return matches(value.upToNUL, op, pattern.upToNUL, options)
    }

    /// A pattern character: a wildcard, or a character that matches itself.
    enum PatternToken: Equatable {
        case anyRun, anyOne
        case literal(Character)
    }

    /// The tokens of a LIKE pattern: `*` any run, `?` one character, `\` makes the next
    /// character literal (`\*`, `\?`, `\\`); a trailing `\` is itself.
    static func tokens(_ pattern: [Character]) -> [PatternToken] {
        var result: [PatternToken] = []
        result.reserveCapacity(pattern.count)
        var index = 0
        while index < pattern.count {
            let character = pattern[index]
            if character == "\\", index + 1 < pattern.count {
                result.append(.literal(pattern[index + 1]))
                index += 2
                continue
            }
            result.append(character == "*" ? .anyRun : character == "?" ? .anyOne : .literal(character))
            index += 1
        }
        return result
    }

    /// Wildcard matching without backtracking blow-up (greedy with the last `*` remembered).
    static func like(_ value: [Character], _ pattern: [Character]) -> Bool {
        let pattern = tokens(pattern)
        var v = 0, p = 0
        var star = -1, mark = 0
        while v < value.count {
            if p < pattern.count && (pattern[p] == .anyOne || pattern[p] == .literal(value[v])) {
                v += 1
                p += 1
            } else if p < pattern.count && pattern[p] == .anyRun {
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
        while p < pattern.count && pattern[p] == .anyRun { p += 1 }
        return p == pattern.count
    }

    /// `text` as a LIKE pattern that matches exactly `text`: `*`, `?` and `\` escaped.
    ///
    /// ```swift
    /// Note.title.like(StringMatching.likeEscaped("50% off *today*") + "*")   // starts with it
    /// ```
    public static func likeEscaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        for character in text {
            if character == "*" || character == "?" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }

    /// The SQL function behind string operators in SQL.
    static let sqlFunction = DatabaseFunction(sqlFunctionName, argumentCount: 4, pure: true) { values in
        guard case .string(let opName) = values[0].storage, let op = StringOperator(rawValue: opName),
              case .int64(let rawOptions) = values[3].storage
        else { return false }
        return matches(values[1], op, values[2], StringOptions(rawValue: Int(rawOptions)))
    }
}

extension String {
    /// The string up to its first NUL character: the text SQLite reads from a C string, as
    /// GRDB binds and reads text.
    var upToNUL: String {
        guard let nul = utf8.firstIndex(of: 0) else { return self }
        return String(self[..<nul])
    }
}
