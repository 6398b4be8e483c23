/// A node of a YAML document, with the position where it starts in its file.
///
/// Built by `YAMLLoader`; aliases are already resolved to (copies of) their anchored node.
public struct YAMLNode: Hashable, Sendable {
    /// What a node holds.
    public enum Content: Hashable, Sendable {
        case scalar(YAMLScalar)
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

    /// The location of the first character of a scalar's *value* when every character of
    /// the value maps one-to-one onto a column of the same line (single-line plain scalars,
    /// quoted scalars without escapes); nil otherwise.
    public var exactValueStart: SourceLocation? {
        guard let scalar, location.line == endLocation.line else { return nil }
        switch scalar.style {
        case .plain:
            return location
        case .singleQuoted:
            if scalar.value.contains("'") { return nil }
            return SourceLocation(file: location.file, line: location.line, column: location.column + 1)
        case .doubleQuoted:
            // A value with escapes is shorter than its source; compare lengths to detect them.
            let sourceLength = endLocation.column - location.column - 2
            guard sourceLength == scalar.value.unicodeScalars.count else { return nil }
            return SourceLocation(file: location.file, line: location.line, column: location.column + 1)
        case .literal, .folded:
            return nil
        }
    }
}

/// One `key: value` pair of a mapping.
public struct YAMLMappingEntry: Hashable, Sendable {
    /// The key; the schema language only uses scalar keys.
    public var key: YAMLNode
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
