/// The Swift type named by `Codable<T>`: a type name (`Address`, `MyKit.Address`), with
/// generic arguments (`Set<Tag>`), an array (`[String]`) or a dictionary (`[String: Int]`);
/// inner types may be optional (`[String?]`). The generated code refers to it by name, so it
/// is checked here only for its shape; whether it exists and is `Codable` the Swift compiler
/// checks.
enum SwiftTypeSyntax {
    /// Whether `text` is such a type (the outermost type not optional).
    static func isValid(_ text: String) -> Bool {
        var parser = Parser(text)
        guard let type = parser.type(), parser.atEnd, !type.hasSuffix("?") else { return false }
        return true
    }

    /// `text` spelled canonically: no spaces but one after `:` and `,` (`[String: Int]`).
    static func normalized(_ text: String) -> String {
        var parser = Parser(text)
        return parser.type() ?? text
    }

    private struct Parser {
        var characters: [Character]
        var index = 0
        var depth = 0

        init(_ text: String) { characters = Array(text) }

        var atEnd: Bool {
            mutating get {
                skipSpaces()
                return index == characters.count
            }
        }

        mutating func skipSpaces() {
            while index < characters.count, characters[index] == " " { index += 1 }
        }

        mutating func take(_ character: Character) -> Bool {
            skipSpaces()
            guard index < characters.count, characters[index] == character else { return false }
            index += 1
            return true
        }

        mutating func type() -> String? {
            depth += 1
            defer { depth -= 1 }
            guard depth < 32 else { return nil }
            var result: String
            if take("[") {
                guard let element = type() else { return nil }
                if take(":") {
                    guard let value = type() else { return nil }
                    result = "[\(element): \(value)]"
                } else {
                    result = "[\(element)]"
                }
                guard take("]") else { return nil }
            } else {
                guard let name = qualifiedName() else { return nil }
                result = name
                if take("<") {
                    var arguments: [String] = []
                    repeat {
                        guard let argument = type() else { return nil }
                        arguments.append(argument)
                    } while take(",")
                    guard take(">") else { return nil }
                    result += "<" + arguments.joined(separator: ", ") + ">"
                }
            }
            while take("?") { result += "?" }
            return result
        }

        mutating func qualifiedName() -> String? {
            var parts: [String] = []
            repeat {
                guard let name = identifier() else { return nil }
                parts.append(name)
            } while take(".")
            return parts.joined(separator: ".")
        }

        mutating func identifier() -> String? {
            skipSpaces()
            let start = index
            while index < characters.count,
                  characters[index] == "_" || characters[index].isLetter || (index > start && characters[index].isNumber)
            {
                index += 1
            }
            let name = String(characters[start..<index])
            guard !name.isEmpty, name != "_" else { return nil }
            return name
        }
    }
}
