/// The demo's command line: `StrataDemo [--store PATH | --in-memory] [--interactive] [--help]`.
///
/// Plain parsing, so that nothing here needs swift-argument-parser.
public struct DemoOptions: Hashable, Sendable {
    /// Where the store lives.
    public enum StoreLocation: Hashable, Sendable {
        /// The demo's own file in the platform's data folder, ``DemoSession/defaultStorePath``
        /// (`StrataDemo/demo.sqlite`), apart from the stores of apps built on the same model.
        case defaultLocation
        /// A file at this path.
        case path(String)
        /// An in-memory store.
        case inMemory
    }

    /// Where the store lives (`--store`, `--in-memory`).
    public var store: StoreLocation = .defaultLocation
    /// Read commands from standard input instead of running the script (`--interactive`).
    public var interactive = false
    /// Print the usage and stop (`--help`).
    public var help = false
    /// Forces colour off (`NO_COLOR` and a non-terminal output do too).
    public var noColor = false

    /// Options given in code.
    public init(store: StoreLocation = .defaultLocation, interactive: Bool = false) {
        self.store = store
        self.interactive = interactive
    }

    /// Parses the arguments (without the program name).
    public init(parsing arguments: [String]) throws(DemoUsageError) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": help = true
            case "--interactive", "-i": interactive = true
            case "--in-memory": store = .inMemory
            case "--no-color": noColor = true
            case "--store":
                guard let path = rest.popFirst(), !path.hasPrefix("-") else {
                    throw DemoUsageError("--store needs a file path")
                }
                store = .path(path)
            default:
                if argument.hasPrefix("--store=") {
                    store = .path(String(argument.dropFirst("--store=".count)))
                } else {
                    throw DemoUsageError("unknown argument '\(argument)'")
                }
            }
        }
    }

    /// The `--help` text.
    public static let usage = """
        OVERVIEW: Strata's demo: live sectioned results of the package's own model
        (Models/*.yaml, compiled into Swift by the StrataPlugin build plugin).

        USAGE: StrataDemo [--store <path> | --in-memory] [--interactive]

        By default a scripted scenario runs on a fresh SQLite store of its own,
        StrataDemo/demo.sqlite in the data folder (XDG_DATA_HOME, ~/.local/share, or
        Application Support); the previous demo store is deleted first, and a file
        the demo did not create never is. Every step prints
        the change batch, the delegate's callbacks, and the list rebuilt by applying
        the batch, with changed rows marked:
          +  inserted    ~  updated    >  moved    >~  moved and updated

        OPTIONS:
          --store <path>   Use a fresh SQLite file at <path>; a previous demo store
                           there is deleted first, any other file is refused.
          --in-memory      Use an in-memory store.
          -i, --interactive
                           Read commands from standard input (type `help`);
                           works with a pipe and ends at end of input.
          --no-color       No colours (also when NO_COLOR is set or the output
                           is not a terminal).
          -h, --help       Show this help.
        """
}

/// A command-line mistake, with a message for standard error.
public struct DemoUsageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    /// The message and a one-line usage.
    public var description: String { "error: \(message)\nUsage: StrataDemo [--store <path> | --in-memory] [--interactive] [--help]" }
}
