import Foundation

/// Where the demo writes its lines: standard output, or a buffer in tests.
public final class DemoOutput {
    private let sink: (String) -> Void

    /// Output that hands every line (without its newline) to `sink`.
    public init(sink: @escaping (String) -> Void) {
        self.sink = sink
    }

    /// Standard output.
    public static func standardOutput() -> DemoOutput {
        DemoOutput { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }

    func line(_ text: String = "") { sink(text) }
}

/// Where the interactive mode reads its commands: standard input, or a script in tests.
public struct LineSource {
    /// True when a person types the commands: a prompt is shown and commands are not echoed.
    public var isTerminal: Bool
    private let next: () -> String?

    /// A source that calls `next` for each line, nil at the end.
    public init(isTerminal: Bool, next: @escaping () -> String?) {
        self.isTerminal = isTerminal
        self.next = next
    }

    /// Standard input; prompts with `strata> ` when it is a terminal.
    public static func standardInput() -> LineSource {
        let terminal = isatty(STDIN_FILENO) != 0
        return LineSource(isTerminal: terminal) {
            if terminal { FileHandle.standardOutput.write(Data("strata> ".utf8)) }
            return Swift.readLine()
        }
    }

    /// The given lines, then the end of input.
    public static func lines(_ lines: [String]) -> LineSource {
        var remaining = lines[...]
        return LineSource(isTerminal: false) { remaining.popFirst() }
    }

    func readLine() -> String? { next() }
}
