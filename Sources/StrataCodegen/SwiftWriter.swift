/// A small indentation-aware writer of Swift source text.
///
/// Lines are appended with the current indentation; `indent { ... }` and `block(_:) { ... }`
/// nest. The output always ends with exactly one newline.
///
/// ```swift
/// var w = SwiftWriter()
/// w.block("extension Note") { w in
///     w.line("public static let databaseTableName = \"Note\"")
/// }
/// ```
public struct SwiftWriter: Sendable {
    /// The widest line the writer aims for when it chooses between one line and several.
    public var lineWidth: Int
    /// The lines written so far, indentation included.
    public private(set) var lines: [String] = []
    private var level = 0
    private let indentUnit = "    "

    /// A writer that wraps calls longer than `lineWidth` columns.
    public init(lineWidth: Int = 120) { self.lineWidth = lineWidth }

    /// The current indentation as text.
    public var indentation: String { String(repeating: indentUnit, count: level) }

    /// Appends one line at the current indentation (an empty string gives an empty line).
    public mutating func line(_ text: String) {
        if text.isEmpty {
            lines.append("")
        } else {
            lines.append(indentation + text)
        }
    }

    /// Appends an empty line, unless the previous line is empty or opens a block.
    public mutating func blankLine() {
        guard let last = lines.last, !last.isEmpty, !last.hasSuffix("{") else { return }
        lines.append("")
    }

    /// Runs `body` one level deeper.
    public mutating func indent(_ body: (inout SwiftWriter) -> Void) {
        level += 1
        body(&self)
        level -= 1
    }

    /// `header {`, the indented body, `}`.
    public mutating func block(_ header: String, _ body: (inout SwiftWriter) -> Void) {
        line(header + " {")
        indent(body)
        line("}")
    }

    /// `///` lines for a documentation comment; nothing for nil or empty text.
    public mutating func docComment(_ text: String?) {
        guard let text, !text.isEmpty else { return }
        let docLines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var trimmed = docLines.map { String($0).replacingTrailingWhitespace() }
        while trimmed.last?.isEmpty == true { trimmed.removeLast() }
        for docLine in trimmed {
            line(docLine.isEmpty ? "///" : "/// " + docLine)
        }
    }

    /// A call or declaration `head(arg, arg)tail`: on one line when it fits, else one
    /// argument per line, each followed by a comma except the last.
    public mutating func call(_ head: String, _ arguments: [String], _ tail: String = "") {
        let single = head + "(" + arguments.joined(separator: ", ") + ")" + tail
        if arguments.isEmpty || indentation.count + single.count <= lineWidth {
            line(single)
            return
        }
        line(head + "(")
        indent { w in
            for (index, argument) in arguments.enumerated() {
                let text = argument + (index == arguments.count - 1 ? "" : ",")
                let pieces = Self.wrapAtLogicalOperators(text, width: w.lineWidth - w.indentation.count)
                w.line(pieces[0])
                w.indent { w in pieces.dropFirst().forEach { w.line($0) } }
            }
        }
        line(")" + tail)
    }

    /// Splits a too-long expression before its top-level `&&` and `||` operators (outside
    /// parentheses, brackets and string literals), filling each line up to `width`.
    static func wrapAtLogicalOperators(_ text: String, width: Int) -> [String] {
        guard text.count > width else { return [text] }
        var segments: [String] = []
        var current = ""
        var depth = 0
        var inString = false
        var escaped = false
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
            } else if character == "\"" {
                inString = true
            } else if "([{".contains(character) {
                depth += 1
            } else if ")]}".contains(character) {
                depth -= 1
            } else if depth == 0, character == " ", index + 3 < characters.count,
                characters[index + 3] == " ",
                String(characters[index + 1...index + 2]) == "&&" || String(characters[index + 1...index + 2]) == "||"
            {
                segments.append(current)
                current = ""
                index += 1
                continue
            }
            current.append(character)
            index += 1
        }
        segments.append(current)
        guard segments.count > 1 else { return [text] }
        var lines: [String] = [segments[0]]
        for segment in segments.dropFirst() {
            let available = lines.count == 1 ? width : width - 4
            if lines[lines.count - 1].count + 1 + segment.count <= available {
                lines[lines.count - 1] += " " + segment
            } else {
                lines.append(segment)
            }
        }
        return lines
    }

    /// The text written so far, ending with one newline.
    public var output: String {
        var result = lines
        while result.last?.isEmpty == true { result.removeLast() }
        return result.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func replacingTrailingWhitespace() -> String {
        var scalars = Substring(self)
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
