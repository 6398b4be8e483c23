import Foundation

/// ANSI colours for the demo's output, or none.
///
/// Colour is on only when standard output is a terminal and `NO_COLOR` is unset (see
/// <https://no-color.org>), so piped output and tests get plain text.
public struct TextStyle: Sendable {
    /// Whether escape sequences are written.
    public var isEnabled: Bool

    /// A style that colours when `isEnabled` is true.
    public init(isEnabled: Bool) {
        self.isEnabled = isEnabled
    }

    /// Plain text.
    public static let plain = TextStyle(isEnabled: false)

    /// Colour when standard output is a terminal and `NO_COLOR` is unset.
    public static func forStandardOutput(environment: [String: String]) -> TextStyle {
        TextStyle(isEnabled: isatty(STDOUT_FILENO) != 0 && environment["NO_COLOR"] == nil)
    }

    func bold(_ text: String) -> String { wrap(text, "1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func red(_ text: String) -> String { wrap(text, "31") }
    func green(_ text: String) -> String { wrap(text, "32") }
    func yellow(_ text: String) -> String { wrap(text, "33") }
    func cyan(_ text: String) -> String { wrap(text, "36") }

    /// A change marker (`+`, `-`, `~`, `>`, `>~`) in its colour.
    func marker(_ mark: String) -> String {
        switch mark.trimmingCharacters(in: .whitespaces) {
        case "+": green(mark)
        case "-": red(mark)
        case "~": yellow(mark)
        case ">", ">~": cyan(mark)
        default: mark
        }
    }

    private func wrap(_ text: String, _ code: String) -> String {
        isEnabled && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
