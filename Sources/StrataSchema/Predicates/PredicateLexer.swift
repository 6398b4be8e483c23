/// A token of the predicate language; `offset` counts Unicode scalars from the start.
struct PredicateToken: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        /// A name; `escaped` when written `#name` (never a keyword).
        case identifier(String, escaped: Bool)
        case string(String)
        case integer(Int64)
        case decimal(Double)
        case parameter(String)
        /// `@count`.
        case count
        /// `[c]`, `[d]`, `[cd]`: the letters.
        case options(String)
        case symbol(String)
        case end
    }

    var kind: Kind
    var offset: Int

    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "ANY", "ALL",
        "NONE", "SOME", "NIL", "NULL", "TRUE", "FALSE", "YES", "NO", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    func isKeyword(_ keyword: String) -> Bool {
        if case .identifier(let name, false) = kind { return name.uppercased() == keyword }
        return false
    }

    var isReserved: Bool {
        if case .identifier(let name, false) = kind { return Self.keywords.contains(name.uppercased()) }
        return false
    }

    /// True for tokens that can follow the left operand of a comparison.
    var startsComparison: Bool {
        switch kind {
        case .symbol(let s): ["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>"].contains(s)
        default:
            ["CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "IN", "BETWEEN"].contains { isKeyword($0) }
        }
    }

    var describe: String {
        switch kind {
        case .identifier(let name, _): "'\(name)'"
        case .string(let value): "\"\(value)\""
        case .integer(let value): "'\(value)'"
        case .decimal(let value): "'\(value)'"
        case .parameter(let name): "'$\(name)'"
        case .count: "'@count'"
        case .options(let text): "'[\(text)]'"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end of the predicate"
        }
    }
}

enum PredicateLexer {
    static func tokenize(_ text: String) throws(PredicateParser.Failure) -> [PredicateToken] {
        let scalars = Array(text.unicodeScalars)
        var tokens: [PredicateToken] = []
        var i = 0

        func isNameStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c.properties.isAlphabetic }
        func isNameContinue(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || ("0"..."9").contains(c) }
        func name(from start: Int) -> (String, Int) {
            var end = start
            while end < scalars.count, isNameContinue(scalars[end]) { end += 1 }
            var result = ""
            result.unicodeScalars.append(contentsOf: scalars[start..<end])
            return (result, end)
        }

        while i < scalars.count {
            let c = scalars[i]
            let start = i
            if c.properties.isWhitespace {
                i += 1
                continue
            }
            if isNameStart(c) {
                let (word, end) = name(from: i)
                tokens.append(PredicateToken(kind: .identifier(word, escaped: false), offset: start))
                i = end
                continue
            }
            if ("0"..."9").contains(c) {
                var end = i
                var isDecimal = false
                while end < scalars.count, ("0"..."9").contains(scalars[end]) { end += 1 }
                if end + 1 < scalars.count, scalars[end] == ".", ("0"..."9").contains(scalars[end + 1]) {
                    isDecimal = true
                    end += 1
                    while end < scalars.count, ("0"..."9").contains(scalars[end]) { end += 1 }
                }
                if end < scalars.count, scalars[end] == "e" || scalars[end] == "E" {
                    var exponentEnd = end + 1
                    if exponentEnd < scalars.count, scalars[exponentEnd] == "-" || scalars[exponentEnd] == "+" {
                        exponentEnd += 1
                    }
                    if exponentEnd < scalars.count, ("0"..."9").contains(scalars[exponentEnd]) {
                        isDecimal = true
                        end = exponentEnd
                        while end < scalars.count, ("0"..."9").contains(scalars[end]) { end += 1 }
                    }
                }
                if end < scalars.count, isNameStart(scalars[end]) {
                    throw .init("invalid number", offset: start)
                }
                var literal = ""
                literal.unicodeScalars.append(contentsOf: scalars[start..<end])
                if isDecimal {
                    guard let value = Double(literal), value.isFinite else {
                        throw .init("number '\(literal)' is out of range", offset: start)
                    }
                    tokens.append(PredicateToken(kind: .decimal(value), offset: start))
                } else {
                    guard let value = Int64(literal) else {
                        throw .init("integer '\(literal)' is out of range for a 64-bit integer", offset: start)
                    }
                    tokens.append(PredicateToken(kind: .integer(value), offset: start))
                }
                i = end
                continue
            }
            switch c {
            case "\"", "'":
                var value = ""
                var j = i + 1
                var closed = false
                while j < scalars.count {
                    let d = scalars[j]
                    if d == c {
                        closed = true
                        break
                    }
                    if d == "\\" {
                        guard j + 1 < scalars.count else { break }
                        let e = scalars[j + 1]
                        switch e {
                        case "n": value.unicodeScalars.append("\n")
                        case "t": value.unicodeScalars.append("\t")
                        case "r": value.unicodeScalars.append("\r")
                        case "0": value.unicodeScalars.append("\0")
                        case "\\", "\"", "'": value.unicodeScalars.append(e)
                        case "u":
                            var hex = ""
                            var k = j + 2
                            while k < scalars.count, hex.count < 4, scalars[k].properties.isASCIIHexDigit {
                                hex.unicodeScalars.append(scalars[k])
                                k += 1
                            }
                            guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code)
                            else { throw .init("invalid \\u escape; expected four hex digits", offset: j) }
                            value.unicodeScalars.append(scalar)
                            j = k
                            continue
                        default:
                            throw .init("unknown escape '\\\(e)' in string", offset: j)
                        }
                        j += 2
                        continue
                    }
                    value.unicodeScalars.append(d)
                    j += 1
                }
                guard closed else { throw .init("unterminated string", offset: start) }
                tokens.append(PredicateToken(kind: .string(value), offset: start))
                i = j + 1
            case "$":
                guard i + 1 < scalars.count, isNameStart(scalars[i + 1]) else {
                    throw .init("expected a parameter name after '$'", offset: start)
                }
                let (word, end) = name(from: i + 1)
                tokens.append(PredicateToken(kind: .parameter(word), offset: start))
                i = end
            case "#":
                guard i + 1 < scalars.count, isNameStart(scalars[i + 1]) else {
                    throw .init("expected a name after '#'", offset: start)
                }
                let (word, end) = name(from: i + 1)
                tokens.append(PredicateToken(kind: .identifier(word, escaped: true), offset: start))
                i = end
            case "@":
                let (word, end) = i + 1 < scalars.count && isNameStart(scalars[i + 1]) ? name(from: i + 1) : ("", i + 1)
                guard word == "count" else {
                    throw .init("unknown aggregate '@\(word)'; only '@count' is supported", offset: start)
                }
                tokens.append(PredicateToken(kind: .count, offset: start))
                i = end
            case "[":
                var j = i + 1
                var letters = ""
                while j < scalars.count, scalars[j] != "]", letters.count < 8 {
                    letters.unicodeScalars.append(scalars[j])
                    j += 1
                }
                guard j < scalars.count, scalars[j] == "]" else {
                    throw .init("expected [c], [d] or [cd]", offset: start)
                }
                tokens.append(PredicateToken(kind: .options(letters), offset: start))
                i = j + 1
            default:
                let two = i + 1 < scalars.count ? String(String.UnicodeScalarView([c, scalars[i + 1]])) : ""
                if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
                    tokens.append(PredicateToken(kind: .symbol(two), offset: start))
                    i += 2
                } else if "=<>!(){},.-".unicodeScalars.contains(c) {
                    tokens.append(PredicateToken(kind: .symbol(String(c)), offset: start))
                    i += 1
                } else {
                    throw .init("unexpected character '\(c)'", offset: start)
                }
            }
        }
        tokens.append(PredicateToken(kind: .end, offset: scalars.count))
        return tokens
    }
}
