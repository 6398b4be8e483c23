/// A node of a YAML document, with the position where it starts in its file.
///
/// Built by `YAMLLoader`; aliases are already resolved to (copies of) their anchored node.
public struct YAMLNode: Hashable, Sendable {
    /// What a node holds.
    public enum Content: Hashable, Sendable {
        /// A scalar: text with its style and tag.
        case scalar(YAMLScalar)
        /// A sequence: the items in file order.
        case sequence([YAMLNode])
        /// Key/value pairs in file order.
        case mapping([YAMLMappingEntry])
    }

    /// The scalar, sequence or mapping.
    public var content: Content
    /// Where the node starts (for quoted scalars: the opening quote).
    public var location: SourceLocation
    /// Where the node ends (exclusive), as reported by libyaml.
    public var endLocation: SourceLocation

    /// The scalar's text as written in the file (quotes, escapes, block indicators and
    /// indentation included), kept by `YAMLLoader` for scalars that are not single-line plain
    /// ones, so that `location(ofValueOffset:)` can map back into the file.
    var sourceText: String?

    /// A node; `endLocation` defaults to `location`.
    public init(_ content: Content, location: SourceLocation, endLocation: SourceLocation? = nil) {
        self.content = content
        self.location = location
        self.endLocation = endLocation ?? location
    }

    /// The scalar, when the node is one.
    public var scalar: YAMLScalar? {
        if case .scalar(let s) = content { return s }
        return nil
    }

    /// The items, when the node is a sequence.
    public var sequence: [YAMLNode]? {
        if case .sequence(let s) = content { return s }
        return nil
    }

    /// The entries in file order, when the node is a mapping.
    public var mapping: [YAMLMappingEntry]? {
        if case .mapping(let m) = content { return m }
        return nil
    }

    /// `scalar`, `sequence` or `mapping`, for messages.
    public var kindName: String {
        switch content {
        case .scalar: "a scalar"
        case .sequence: "a sequence"
        case .mapping: "a mapping"
        }
    }
}

// MARK: - Value offsets → file locations

extension YAMLNode {
    /// The file location of the scalar value's character at `offset` (in Unicode scalars):
    /// exact for plain, quoted (escapes and `''` included) and block scalars (`|`, `>`),
    /// across lines; nil when the node is not a scalar or the offset cannot be mapped.
    public func location(ofValueOffset offset: Int) -> SourceLocation? {
        guard let scalar, offset >= 0 else { return nil }
        guard let sourceText else {
            // A single-line plain scalar: its value is its source.
            guard scalar.style == .plain, location.line == endLocation.line else { return nil }
            return SourceLocation(file: location.file, line: location.line, column: location.column + offset)
        }
        let mapped = ScalarSourceMapper.map(sourceText, style: scalar.style)
        let value = Array(scalar.value.unicodeScalars)
        // Trust the map only if it reproduces the value (up to a block scalar's chomping).
        guard offset < value.count, mapped.count >= value.count,
            zip(mapped, value).allSatisfy({ $0.0.scalar == $0.1 })
        else { return nil }
        let (line, column) = (mapped[offset].line, mapped[offset].column)
        return SourceLocation(
            file: location.file, line: location.line + line,
            column: line == 0 ? location.column + column : column + 1)
    }
}

/// Replays how YAML turns a scalar's source into its value, recording for each value
/// character the (line, column) offset of the source character it comes from.
enum ScalarSourceMapper {
    /// One value character and where it comes from: `line` counts from the scalar's first
    /// line, `column` is 0-based within its source line.
    struct Mapped {
        var scalar: Unicode.Scalar
        var line: Int
        var column: Int
    }

    static func map(_ source: String, style: YAMLScalar.Style) -> [Mapped] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.unicodeScalars) }
        switch style {
        case .literal, .folded: return block(lines, folded: style == .folded)
        case .plain, .singleQuoted, .doubleQuoted: return flow(lines, style: style)
        }
    }

    /// Plain and quoted scalars: escapes, and line folding (trailing and leading spaces
    /// dropped, one break → a space, n breaks → n - 1 newlines).
    private static func flow(_ lines: [[Unicode.Scalar]], style: YAMLScalar.Style) -> [Mapped] {
        var result: [Mapped] = []
        let quote: Unicode.Scalar? = style == .doubleQuoted ? "\"" : style == .singleQuoted ? "'" : nil
        var pendingBreaks = 0
        var breakAt = (0, 0)
        var escapedBreak = false
        lineLoop: for (lineIndex, line) in lines.enumerated() {
            var index = 0
            if lineIndex == 0 {
                if quote != nil { index = 1 }
            } else {
                while index < line.count, line[index] == " " || line[index] == "\t" { index += 1 }
                if index == line.count, lineIndex < lines.count - 1 {
                    pendingBreaks += 1
                    continue
                }
                if !escapedBreak {
                    if pendingBreaks == 0 {
                        result.append(Mapped(scalar: " ", line: breakAt.0, column: breakAt.1))
                    } else {
                        for _ in 0..<pendingBreaks { result.append(Mapped(scalar: "\n", line: breakAt.0, column: breakAt.1)) }
                    }
                }
                pendingBreaks = 0
                escapedBreak = false
            }
            // The last non-blank character of the line: trailing spaces fold away.
            var end = line.count
            while end > index, line[end - 1] == " " || line[end - 1] == "\t" { end -= 1 }
            while index < line.count {
                let character = line[index]
                if character == quote {
                    if style == .singleQuoted, index + 1 < line.count, line[index + 1] == "'" {
                        result.append(Mapped(scalar: "'", line: lineIndex, column: index))
                        index += 2
                        continue
                    }
                    break lineLoop
                }
                if style == .doubleQuoted, character == "\\" {
                    guard index + 1 < line.count else {
                        escapedBreak = true
                        break
                    }
                    let code = line[index + 1]
                    let width: Int
                    let value: Unicode.Scalar?
                    switch code {
                    case "x", "u", "U":
                        width = code == "x" ? 2 : code == "u" ? 4 : 8
                        let digits = String(String.UnicodeScalarView(line[min(index + 2, line.count)..<min(index + 2 + width, line.count)]))
                        value = UInt32(digits, radix: 16).flatMap(Unicode.Scalar.init)
                    default:
                        width = 0
                        value = escapes[code]
                    }
                    guard let value else { return [] }
                    result.append(Mapped(scalar: value, line: lineIndex, column: index))
                    index += 2 + width
                    continue
                }
                if index >= end { break }
                result.append(Mapped(scalar: character, line: lineIndex, column: index))
                index += 1
            }
            breakAt = (lineIndex, end)
        }
        return result
    }

    /// The values of YAML's one-character escapes.
    private static let escapes: [Unicode.Scalar: Unicode.Scalar] = [
        "0": "\0", "a": "\u{07}", "b": "\u{08}", "t": "\t", "\t": "\t", "n": "\n", "v": "\u{0B}",
        "f": "\u{0C}", "r": "\r", "e": "\u{1B}", " ": " ", "\"": "\"", "/": "/", "\\": "\\",
        "N": "\u{85}", "_": "\u{A0}", "L": "\u{2028}", "P": "\u{2029}",
    ]

    /// Block scalars: the header line, then content lines without their indentation; a
    /// literal keeps its breaks, a folded one turns a break between two normal lines into a
    /// space and keeps the breaks of blank and more-indented lines.
    private static func block(_ lines: [[Unicode.Scalar]], folded: Bool) -> [Mapped] {
        guard lines.count > 1 else { return [] }
        let header = lines[0]
        var indent: Int?
        if let digit = header.first(where: { ("1"..."9").contains($0) }) { indent = Int(digit.value - 48) }
        func leading(_ line: [Unicode.Scalar]) -> Int { line.prefix { $0 == " " }.count }
        func isBlank(_ line: [Unicode.Scalar]) -> Bool { line.allSatisfy { $0 == " " } }
        let content = Array(lines.dropFirst())
        if indent == nil, let first = content.first(where: { !isBlank($0) }) { indent = leading(first) }
        guard let indent else { return [] }
        var result: [Mapped] = []
        var previous: [Unicode.Scalar]?
        var blanks: [Int] = []
        for (offset, line) in content.enumerated() {
            let lineIndex = offset + 1
            if isBlank(line) {
                blanks.append(lineIndex)
                continue
            }
            if let before = previous {
                let beforeIndex = lineIndex - blanks.count - 1
                let normal = leading(before) == indent && leading(line) == indent
                if folded && normal {
                    if blanks.isEmpty {
                        result.append(Mapped(scalar: " ", line: beforeIndex, column: before.count))
                    }
                } else {
                    result.append(Mapped(scalar: "\n", line: beforeIndex, column: before.count))
                }
                for blank in blanks { result.append(Mapped(scalar: "\n", line: blank, column: 0)) }
            }
            blanks = []
            for column in indent..<line.count {
                result.append(Mapped(scalar: line[column], line: lineIndex, column: column))
            }
            previous = line
        }
        if let last = previous {
            result.append(Mapped(scalar: "\n", line: content.count - blanks.count, column: last.count))
        }
        return result
    }
}

/// One `key: value` pair of a mapping.
public struct YAMLMappingEntry: Hashable, Sendable {
    /// The key; the schema language only uses scalar keys.
    public var key: YAMLNode
    /// The value.
    public var value: YAMLNode

    /// A pair.
    public init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }
}

/// A scalar's text as libyaml decoded it, with how it was written.
public struct YAMLScalar: Hashable, Sendable {
    /// Plain, quoted, or a block scalar (`|` literal, `>` folded).
    public enum Style: String, Hashable, Sendable {
        /// Plain, single-quoted, double-quoted, literal (`|`) or folded (`>`).
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    /// The text, escapes and folding already applied.
    public var value: String
    /// How the scalar was written.
    public var style: Style
    /// The explicit tag (`!!str` → `tag:yaml.org,2002:str`), if any.
    public var tag: String?

    /// A scalar; plain and untagged unless said otherwise.
    public init(_ value: String, style: Style = .plain, tag: String? = nil) {
        self.value = value
        self.style = style
        self.tag = tag
    }

    /// A plain `~`, `null`, `Null`, `NULL` or empty scalar: YAML's null.
    public var isNull: Bool {
        style == .plain && tag == nil && ["", "~", "null", "Null", "NULL"].contains(value)
    }
}
