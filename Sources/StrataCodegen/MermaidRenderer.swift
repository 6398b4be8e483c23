import StrataSchema

/// Renders a schema as a Mermaid `erDiagram`: entities with their typed attributes, and
/// each relationship pair once, with its cardinality on both ends and both delete rules.
///
/// ```
/// erDiagram
///     Notebook ||--o{ Note : "notes (cascade) / notebook (nullify)"
/// ```
public enum MermaidRenderer {
    /// The Mermaid `erDiagram` text of `schema`: entities with their columns, relationships with cardinality and delete rules.
    public static func render(_ schema: Schema) -> String {
        let layout = StorageLayout(schema: schema)
        var w = SwiftWriter()
        w.line("erDiagram")
        w.indent { w in
            // Abstract entities have no table: their attributes show in each entity extending them.
            for entity in schema.entities where !entity.isAbstract {
                w.block(entity.name) { w in
                    w.line("Int \(entity.primaryKey) PK")
                    for attribute in entity.attributes {
                        var notes: [String] = []
                        var type = attribute.type.name
                        if case .codable(let swiftType) = attribute.type {
                            type = "JSON"
                            notes.append("Codable " + swiftType.replacingOccurrences(of: "\"", with: "'"))
                        }
                        if let base = attribute.inheritedFrom { notes.append("from " + base) }
                        if attribute.isTransient { notes.append("transient") }
                        if attribute.isOptional { notes.append("optional") }
                        if let value = attribute.defaultValue { notes.append("default " + describe(value)) }
                        if attribute.isIndexed { notes.append("indexed") }
                        let key = attribute.isUnique ? " UK" : ""
                        let comment = notes.isEmpty ? "" : " \"" + notes.joined(separator: ", ") + "\""
                        w.line("\(type) \(attribute.name)\(key)\(comment)")
                    }
                    for relationship in entity.relationships {
                        if let column = layout.foreignKeyColumn(of: relationship, in: entity) {
                            w.line("Int \(column) FK \"\(relationship.name) to \(relationship.destination)\"")
                        }
                        if let column = layout.positionColumn(of: relationship, in: entity) {
                            w.line("Int \(column) \"place in \(relationship.destination).\(relationship.inverse), optional\"")
                        }
                    }
                }
            }
            for entity in schema.entities {
                for relationship in entity.relationships {
                    let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse)
                    let mine = (entity.name, relationship.name)
                    let theirs = (relationship.destination, relationship.inverse)
                    if inverse != nil, theirs.0 != mine.0 ? theirs.0 < mine.0 : theirs.1 < mine.1 { continue }
                    let left: String
                    if let inverse {
                        left = inverse.isToMany ? "}o" : inverse.isRequired ? "||" : "|o"
                    } else {
                        left = "}o"
                    }
                    let right = relationship.isToMany ? "o{" : relationship.isRequired ? "||" : "o|"
                    var label = "\(relationship.name) (\(relationship.deleteRule.rawValue)\(relationship.isOrdered ? ", ordered" : ""))"
                    if let inverse, inverse.name != relationship.name || relationship.destination != entity.name {
                        label += " / \(inverse.name) (\(inverse.deleteRule.rawValue)\(inverse.isOrdered ? ", ordered" : ""))"
                    }
                    w.line("\(entity.name) \(left)--\(right) \(relationship.destination) : \"\(label)\"")
                }
            }
        }
        return w.output
    }

    private static func describe(_ value: DefaultValue) -> String {
        let text: String
        switch value {
        case .string(let string): text = "'" + string + "'"
        case .int(let number): text = "\(number)"
        case .double(let number): text = "\(number)"
        case .bool(let flag): text = "\(flag)"
        case .now: text = "now"
        case .date(let milliseconds): text = DefaultValue.dateText(milliseconds: milliseconds, storage: false)
        case .uuid: text = "uuid"
        case .enumCase(let name): text = name
        }
        // Mermaid comments cannot hold double quotes or line breaks.
        return String(text.map { $0 == "\"" ? "'" : $0.isNewline ? " " : $0 })
    }
}
