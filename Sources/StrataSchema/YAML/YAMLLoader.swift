import CYAML

/// Reads one YAML file into a `YAMLNode` tree with libyaml's event API.
///
/// Every C call of the package lives in this type. The loader never crashes on bad input:
/// invalid UTF-8, empty files, several documents, syntax errors, duplicate keys, too deep
/// nesting and alias bombs all become diagnostics.
///
/// ```swift
/// let result = YAMLLoader.load(ModelFile(path: "Models/Notes.yaml", contents: bytes))
/// ```
public enum YAMLLoader {
    /// Nesting deeper than this is refused (the schema language needs fewer than 10 levels).
    public static let maximumDepth = 256
    /// The total number of nodes a file may expand to, aliases counted at their full size.
    public static let maximumNodeCount = 1_000_000

    /// The root node of the single document of `file`, or the diagnostics that prevent it.
    public static func load(_ file: ModelFile) -> (root: YAMLNode?, diagnostics: [Diagnostic]) {
        if let diagnostic = utf8Problem(in: file) {
            return (nil, [diagnostic])
        }
        var builder = TreeBuilder(file: file.path)
        file.contents.withUnsafeBufferPointer { buffer in
            builder.run(buffer)
        }
        if builder.diagnostics.contains(where: { $0.severity == .error }) {
            return (nil, builder.diagnostics)
        }
        guard let root = builder.root else {
            let location = SourceLocation(file: file.path, line: 1, column: 1)
            return (nil, [.error("the model file is empty; expected a mapping with 'entities'", at: location)])
        }
        return (root, builder.diagnostics)
    }

    /// Checks the bytes are UTF-8 before libyaml sees them, to report the first bad byte.
    static func utf8Problem(in file: ModelFile) -> Diagnostic? {
        var line = 1
        var column = 1
        var iterator = file.contents.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
                if scalar == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            case .emptyInput:
                return nil
            case .error:
                let byte = offset < file.contents.count ? file.contents[offset] : 0
                let hex = String(byte, radix: 16, uppercase: true)
                return .error(
                    "the model file is not valid UTF-8 (byte 0x\(hex.count == 1 ? "0" + hex : hex)); save it as UTF-8",
                    at: SourceLocation(file: file.path, line: line, column: column))
            }
        }
    }
}

// MARK: - Tree building from events

extension YAMLLoader {
    /// Drives libyaml's event parser and assembles the tree without recursion.
    fileprivate struct TreeBuilder {
        let file: String
        var diagnostics: [Diagnostic] = []
        var root: YAMLNode?

        /// A collection being built: its start, anchor, and children so far.
        private struct Frame {
            var isMapping: Bool
            var location: SourceLocation
            var anchor: String?
            var items: [YAMLNode] = []
            /// For mappings: the keys seen so far, for the duplicate check.
            var keys: [String: SourceLocation] = [:]
            var nodeCount = 1
        }

        private var stack: [Frame] = []
        private var anchors: [String: (node: YAMLNode, count: Int)] = [:]
        private var nodeCount = 0
        private var documentCount = 0

        init(file: String) { self.file = file }

        private func location(_ mark: yaml_mark_t) -> SourceLocation {
            SourceLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
        }

        private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            guard let pointer else { return nil }
            return String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
        }

        mutating func run(_ buffer: UnsafeBufferPointer<UInt8>) {
            let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
            defer { parser.deallocate() }
            guard yaml_parser_initialize(parser) == 1 else {
                diagnostics.append(.error("libyaml could not be initialised", at: nil))
                return
            }
            defer { yaml_parser_delete(parser) }
            yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
            // libyaml reads from the pointer; an empty buffer still needs a valid address.
            var empty: UInt8 = 0
            withUnsafePointer(to: &empty) { emptyPointer in
                yaml_parser_set_input_string(parser, buffer.baseAddress ?? emptyPointer, buffer.count)
                var event = yaml_event_t()
                while true {
                    guard yaml_parser_parse(parser, &event) == 1 else {
                        reportParserError(parser.pointee, buffer)
                        return
                    }
                    let keepGoing = handle(event, buffer)
                    let isEnd = event.type == YAML_STREAM_END_EVENT
                    yaml_event_delete(&event)
                    if !keepGoing || isEnd { return }
                }
            }
        }

        private mutating func reportParserError(_ parser: yaml_parser_t, _ buffer: UnsafeBufferPointer<UInt8>) {
            var message = parser.problem.map { String(cString: $0) } ?? "invalid YAML"
            if let context = parser.context {
                message = "\(String(cString: context)): \(message)"
            }
            // The reader reports a byte offset instead of a mark.
            let at = parser.error == YAML_READER_ERROR
                ? location(ofByte: Int(parser.problem_offset), in: buffer) : location(parser.problem_mark)
            // What the most common of libyaml's messages usually mean in a model file.
            if message.hasSuffix("did not find expected key") {
                message += " (check the indentation: keys of one mapping line up)"
            } else if message.hasSuffix("mapping values are not allowed in this context") {
                message += " (a value that contains ': ' must be quoted)"
            }
            diagnostics.append(.error("YAML syntax: \(message)", at: at))
            // libyaml's context mark: where the construct it was reading began (the opening
            // quote of an unterminated string, the `{` of an unclosed flow mapping).
            if let context = parser.context, parser.error != YAML_READER_ERROR {
                let start = location(parser.context_mark)
                if start != at {
                    var construct = String(cString: context)
                    for prefix in ["while scanning ", "while parsing "] where construct.hasPrefix(prefix) {
                        construct.removeFirst(prefix.count)
                    }
                    for article in ["a ", "an "] where construct.hasPrefix(article) {
                        construct = "the " + construct.dropFirst(article.count)
                    }
                    diagnostics.append(Diagnostic(.note, "\(construct) starts here", at: start))
                }
            }
        }

        /// Refuses explicit tags other than YAML's own (`!!str`, `!!int`, …): the schema
        /// language gives none of them a meaning, so silently ignoring one would mislead.
        private mutating func checkTag(_ tag: String?, at location: SourceLocation) {
            guard let tag, !tag.hasPrefix("tag:yaml.org,2002:") else { return }
            diagnostics.append(.error("unknown tag '\(tag)'; model files use no custom tags, remove it", at: location))
        }

        /// Line and column (in Unicode scalars) of a byte offset of the file.
        private func location(ofByte offset: Int, in buffer: UnsafeBufferPointer<UInt8>) -> SourceLocation {
            var line = 1
            var column = 1
            for byte in buffer.prefix(max(0, offset)) {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return SourceLocation(file: file, line: line, column: column)
        }

        /// Handles one event; false stops parsing.
        private mutating func handle(_ event: yaml_event_t, _ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
            let start = location(event.start_mark)
            let end = location(event.end_mark)
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                documentCount += 1
                if documentCount > 1 {
                    diagnostics.append(.error(
                        "a model file holds one YAML document; move the second document into its own file", at: start))
                    return false
                }
            case YAML_SCALAR_EVENT:
                let data = event.data.scalar
                let value: String
                if let pointer = data.value {
                    value = String(decoding: UnsafeBufferPointer(start: pointer, count: Int(data.length)), as: UTF8.self)
                } else {
                    value = ""
                }
                let style: YAMLScalar.Style =
                    switch data.style {
                    case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
                    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
                    case YAML_LITERAL_SCALAR_STYLE: .literal
                    case YAML_FOLDED_SCALAR_STYLE: .folded
                    default: .plain
                    }
                checkTag(Self.string(data.tag), at: start)
                var node = YAMLNode(
                    .scalar(YAMLScalar(value, style: style, tag: Self.string(data.tag))), location: start, endLocation: end)
                if style != .plain || start.line != end.line {
                    let from = Int(event.start_mark.index)
                    let to = Int(event.end_mark.index)
                    if from >= 0, from <= to, to <= buffer.count {
                        node.sourceText = String(decoding: UnsafeBufferPointer(rebasing: buffer[from..<to]), as: UTF8.self)
                    }
                }
                return add(node, budget: 1, subtreeCount: 1, anchor: Self.string(data.anchor))
            case YAML_ALIAS_EVENT:
                let name = Self.string(event.data.alias.anchor) ?? ""
                guard let anchored = anchors[name] else {
                    diagnostics.append(.error("unknown alias '*\(name)'", at: start))
                    return false
                }
                var node = anchored.node
                node.location = start
                node.endLocation = end
                return add(node, budget: anchored.count, subtreeCount: anchored.count, anchor: nil)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                if stack.count >= YAMLLoader.maximumDepth {
                    diagnostics.append(.error(
                        "nesting deeper than \(YAMLLoader.maximumDepth) levels is not supported", at: start))
                    return false
                }
                let isMapping = event.type == YAML_MAPPING_START_EVENT
                let anchor = isMapping
                    ? Self.string(event.data.mapping_start.anchor) : Self.string(event.data.sequence_start.anchor)
                checkTag(
                    isMapping ? Self.string(event.data.mapping_start.tag) : Self.string(event.data.sequence_start.tag),
                    at: start)
                stack.append(Frame(isMapping: isMapping, location: start, anchor: anchor))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let frame = stack.popLast() else { return false }
                let content: YAMLNode.Content
                if frame.isMapping {
                    var entries: [YAMLMappingEntry] = []
                    entries.reserveCapacity(frame.items.count / 2)
                    var index = 0
                    while index + 1 < frame.items.count {
                        entries.append(YAMLMappingEntry(key: frame.items[index], value: frame.items[index + 1]))
                        index += 2
                    }
                    content = .mapping(entries)
                } else {
                    content = .sequence(frame.items)
                }
                let node = YAMLNode(content, location: frame.location, endLocation: end)
                return add(node, budget: 1, subtreeCount: frame.nodeCount, anchor: frame.anchor)
            default:
                break
            }
            return true
        }

        /// Appends a finished node to its parent (or makes it the root); false stops parsing.
        private mutating func add(_ node: YAMLNode, budget: Int, subtreeCount: Int, anchor: String?) -> Bool {
            nodeCount += budget
            if nodeCount > YAMLLoader.maximumNodeCount {
                diagnostics.append(.error(
                    "the document expands to more than \(YAMLLoader.maximumNodeCount) nodes (aliases counted in full)",
                    at: node.location))
                return false
            }
            if let anchor {
                anchors[anchor] = (node, subtreeCount)
            }
            guard !stack.isEmpty else {
                root = node
                return true
            }
            let top = stack.count - 1
            if stack[top].isMapping && stack[top].items.count % 2 == 0 {
                if let scalar = node.scalar, scalar.value == "<<", scalar.style == .plain, scalar.tag == nil {
                    diagnostics.append(.error(
                        "merge keys ('<<') are not supported; repeat the keys, or share a whole node with an anchor and alias",
                        at: node.location))
                }
                if let key = node.scalar?.value {
                    if let first = stack[top].keys[key] {
                        diagnostics.append(.error("duplicate key '\(key)'", at: node.location))
                        diagnostics.append(Diagnostic(.note, "'\(key)' is first defined here", at: first))
                    } else {
                        stack[top].keys[key] = node.location
                    }
                }
            }
            stack[top].items.append(node)
            stack[top].nodeCount += subtreeCount
            return true
        }
    }
}
