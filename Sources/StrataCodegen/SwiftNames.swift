import StrataSchema

/// Spelling of names and literals in generated Swift.
enum SwiftNames {
    /// Words that need backticks to be used as a name (declaration or reference).
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate",
        "func", "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private",
        "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias",
        "var", "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for",
        "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "Any", "as", "await",
        "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "_", "package", "each", "some",
        "any",
    ]

    /// `name`, in backticks when it is a keyword.
    static func identifier(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// An argument label at a call (`f(default: 1)`): every keyword but three is a label
    /// without backticks there.
    static func label(_ name: String) -> String {
        ["inout", "var", "let"].contains(name) ? "`\(name)`" : name
    }

    /// A name after a dot (`.case`, `Type.member`): only a few words need backticks there.
    static func member(_ name: String) -> String {
        ["init", "self", "Self", "Type", "Protocol", "default"].contains(name) || keywords.contains(name)
            ? "`\(name)`" : name
    }

    /// A Swift type expression of the model (`Codable<T>`), with every name that is a keyword
    /// in backticks (`[class]` → ``[`class`]``, `Kit.default` → ``Kit.`default` ``).
    static func typeExpression(_ text: String) -> String {
        var result = ""
        var name = ""
        var afterDot = false
        func flush() {
            guard !name.isEmpty else { return }
            result += afterDot ? member(name) : identifier(name)
            name = ""
        }
        for character in text {
            if character == "_" || character.isLetter || (!name.isEmpty && character.isNumber) {
                name.append(character)
            } else {
                flush()
                afterDot = character == "."
                result.append(character)
            }
        }
        flush()
        return result
    }

    /// `name` with its first character lowercased: `Note` → `note`.
    static func lowerFirst(_ name: String) -> String {
        guard let first = name.first else { return name }
        return first.lowercased() + name.dropFirst()
    }

    /// A Swift string literal with exactly the characters of `text`: quotes, backslashes,
    /// `\(`, newlines, control and invisible format characters are escaped.
    static func stringLiteral(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            default:
                if needsEscape(scalar) {
                    result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        switch scalar.properties.generalCategory {
        case .lineSeparator, .paragraphSeparator, .control, .surrogate, .unassigned, .privateUse:
            return true
        case .format:
            // Keep the zero-width joiner of emoji sequences; escape the other invisible ones
            // (bidirectional overrides, BOM, ...), which would hide what the literal holds.
            return value != 0x200D
        default:
            return false
        }
    }

    /// The Swift type of an attribute, fully qualified.
    static func type(_ type: AttributeType) -> String {
        switch type {
        case .string: "Swift.String"
        case .int: "Swift.Int"
        case .int32: "Swift.Int32"
        case .int16: "Swift.Int16"
        case .double: "Swift.Double"
        case .float: "Swift.Float"
        case .bool: "Swift.Bool"
        case .date: "Foundation.Date"
        case .uuid: "Foundation.UUID"
        case .data: "Foundation.Data"
        case .decimal: "Foundation.Decimal"
        case .url: "Foundation.URL"
        case .enumeration(let name): identifier(name)
        // The app's own type, as written in the model (checked for its shape only).
        case .codable(let swiftType): typeExpression(swiftType)
        }
    }

    /// The descriptor's `ValueType` case for a built-in type (enums are handled by the caller).
    static func valueTypeCase(_ type: AttributeType) -> String {
        switch type {
        case .string: ".string"
        case .int: ".int"
        case .int32: ".int32"
        case .int16: ".int16"
        case .double: ".double"
        case .float: ".float"
        case .bool: ".bool"
        case .date: ".date"
        case .uuid: ".uuid"
        case .data: ".data"
        case .decimal: ".decimal"
        case .url: ".url"
        case .enumeration(let name): ".enumeration(name: \(stringLiteral(name)))"
        case .codable: ".json"
        }
    }

    /// A Double as a Swift float literal that round-trips.
    static func doubleLiteral(_ value: Double) -> String {
        if value.isNaN { return "Swift.Double.nan" }
        if value.isInfinite { return value < 0 ? "-Swift.Double.infinity" : "Swift.Double.infinity" }
        let text = "\(value)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }
}
