/// A position in a model file: 1-based line and column.
public struct SourceLocation: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The file's path, as given to the pipeline.
    public var file: String
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, in Unicode scalars.
    public var column: Int

    /// A location.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`.
    public var description: String { "\(file):\(line):\(column)" }

    /// Orders by file, then line, then column.
    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.file, lhs.line, lhs.column) < (rhs.file, rhs.line, rhs.column)
    }
}

/// A message about a model, printed compiler-style: `file:line:column: error: message`.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible, Error {
    /// How serious a diagnostic is.
    public enum Severity: String, Hashable, Sendable {
        /// The model cannot be used: nothing is generated.
        case error
        /// Suspicious but usable: generation goes on.
        case warning
        /// Context for the error or warning before it (where something was first declared).
        case note
    }

    /// Error, warning or note.
    public var severity: Severity
    /// The message, without location or severity.
    public var message: String
    /// Where the problem is; nil for problems of no particular place (a missing file).
    public var location: SourceLocation?

    /// A diagnostic.
    public init(_ severity: Severity, _ message: String, at location: SourceLocation?) {
        self.severity = severity
        self.message = message
        self.location = location
    }

    /// An error at `location`.
    public static func error(_ message: String, at location: SourceLocation?) -> Diagnostic {
        Diagnostic(.error, message, at: location)
    }

    /// A warning at `location`.
    public static func warning(_ message: String, at location: SourceLocation?) -> Diagnostic {
        Diagnostic(.warning, message, at: location)
    }

    /// `file:line:column: severity: message`, or `severity: message` without a location.
    public var description: String {
        if let location {
            return "\(location): \(severity.rawValue): \(message)"
        }
        return "\(severity.rawValue): \(message)"
    }
}

/// Collects diagnostics across the stages of the pipeline.
public struct DiagnosticBag: Sendable {
    /// Every diagnostic appended so far, in order.
    public private(set) var diagnostics: [Diagnostic] = []

    /// An empty bag.
    public init() {}

    /// True when any diagnostic is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// Appends a diagnostic (a note belongs to the one appended before it).
    public mutating func append(_ diagnostic: Diagnostic) { diagnostics.append(diagnostic) }

    /// Appends an error at `location`.
    public mutating func error(_ message: String, at location: SourceLocation?) {
        diagnostics.append(.error(message, at: location))
    }

    /// Appends a warning at `location`.
    public mutating func warning(_ message: String, at location: SourceLocation?) {
        diagnostics.append(.warning(message, at: location))
    }

    /// Diagnostics in a stable order: by file, line, column, then insertion order.
    public var sorted: [Diagnostic] {
        diagnostics.enumerated().sorted { a, b in
            switch (a.element.location, b.element.location) {
            case let (l?, r?) where l != r: return l < r
            case (nil, _?): return true
            case (_?, nil): return false
            default: return a.offset < b.offset
            }
        }.map(\.element)
    }
}

/// Thrown by the pipeline when a model has errors; carries every diagnostic of the run.
public struct SchemaError: Error, Sendable, CustomStringConvertible {
    /// Every diagnostic of the run, sorted.
    public var diagnostics: [Diagnostic]
    /// An error carrying `diagnostics`.
    public init(diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }
    /// The diagnostics, one per line, compiler-style.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
