import Foundation
import StrataSchema
import Testing

@testable import StrataCodegen

private let here = SourceLocation(file: "Test.yaml", line: 1, column: 1)

/// A small schema built by hand: Item → Box (to-one), Item ↔ Tag (many-to-many).
private func sampleSchema(fetches: [Fetch] = []) -> Schema {
    Schema(
        name: "SampleModel",
        enums: [EnumType(name: "Kind", cases: ["default", "plain"], location: here)],
        entities: [
            Entity(
                name: "Item",
                attributes: [
                    Attribute(name: "name", type: .string, location: here),
                    Attribute(name: "note", type: .string, isOptional: true, location: here),
                    Attribute(name: "count", type: .int, location: here),
                    Attribute(name: "ratio", type: .double, location: here),
                    Attribute(name: "kind", type: .enumeration("Kind"), location: here),
                    Attribute(name: "token", type: .uuid, location: here),
                ],
                relationships: [
                    Relationship(name: "box", destination: "Box", inverse: "items", location: here),
                    Relationship(name: "tags", destination: "Tag", isToMany: true, inverse: "items", location: here),
                ],
                fetches: fetches, location: here),
            Entity(
                name: "Box",
                attributes: [Attribute(name: "label", type: .string, location: here)],
                relationships: [
                    Relationship(name: "items", destination: "Item", isToMany: true, inverse: "box", location: here)
                ], location: here),
            Entity(
                name: "Tag",
                attributes: [Attribute(name: "name", type: .string, location: here)],
                relationships: [
                    Relationship(name: "items", destination: "Item", isToMany: true, inverse: "tags", location: here)
                ], location: here),
        ])
}

private func render(_ expression: StrataSchema.PredicateExpression, parameters: [PredicateParameter] = []) throws -> String {
    let schema = sampleSchema()
    let context = GenerationContext(schema: schema)
    let renderer = PredicateRenderer(context: context, parameters: parameters, location: here)
    return try renderer.render(expression, root: schema.entity(named: "Item")!)
}

@Suite struct PredicateRenderingTests {
    struct Row: Sendable {
        var expression: StrataSchema.PredicateExpression
        var parameters: [PredicateParameter]
        var expected: String
        init(_ e: StrataSchema.PredicateExpression, _ p: [PredicateParameter], _ x: String) {
            expression = e
            parameters = p
            expected = x
        }
    }

    static let rows: [Row] = [
        Row(.comparison(.keyPath(["count"]), .greater, .literal(.int(2)), []), [], "Item.count > 2"),
        Row(.comparison(.literal(.int(2)), .less, .keyPath(["count"]), []), [], "Item.count > 2"),
        Row(.comparison(.keyPath(["ratio"]), .less, .keyPath(["count"]), []), [],
            "Item.ratio < Strata.TypedColumn<Item, Swift.Double>(Item.count.path)"),
        Row(.comparison(.keyPath(["ratio"]), .lessOrEqual, .literal(.int(1)), []), [], "Item.ratio <= 1.0"),
        Row(.comparison(.keyPath(["kind"]), .equal, .literal(.string("default")), []), [], "Item.kind == .`default`"),
        Row(.comparison(.keyPath(["note"]), .equal, .literal(.null), []), [], "Item.note == nil"),
        Row(.comparison(.keyPath(["box"]), .equal, .literal(.null), []), [], "Item.box.isNil"),
        Row(.comparison(.keyPath(["box"]), .notEqual, .literal(.null), []), [], "!Item.box.isNil"),
        Row(.comparison(.keyPath(["box", "label"]), .equal, .parameter("label"), []),
         [PredicateParameter(name: "label", type: .string)], "Item.box.label == label"),
        Row(.comparison(.keyPath(["name"]), .equal, .keyPath(["box", "label"]), []), [],
         "Strata.TypedColumn<Item, Swift.String?>(Item.name.path) == Item.box.label"),
        Row(.comparison(.keyPath(["token"]), .equal, .literal(.string("00000000-0000-0000-0000-000000000001")), []), [],
         "Item.token == Foundation.UUID(uuidString: \"00000000-0000-0000-0000-000000000001\")!"),
        Row(.comparison(.keyPath(["name"]), .contains, .parameter("text"), [.caseInsensitive]),
         [PredicateParameter(name: "text", type: .string)], "Item.name.contains(text, .caseInsensitive)"),
        Row(.comparison(.keyPath(["name"]), .like, .literal(.string("a*")), [.caseInsensitive, .diacriticInsensitive]), [],
         "Item.name.like(\"a*\", [.caseInsensitive, .diacriticInsensitive])"),
        Row(.comparison(.keyPath(["name"]), .beginsWith, .literal(.string("x")), []), [], "Item.name.beginsWith(\"x\")"),
        // `==`/`!=` with [c]/[d]: Characters of folded strings, never a plain `==`.
        Row(.comparison(.keyPath(["name"]), .equal, .parameter("text"), [.caseInsensitive]),
         [PredicateParameter(name: "text", type: .string)], "Item.name.equals(text, .caseInsensitive)"),
        Row(.comparison(.keyPath(["note"]), .notEqual, .literal(.string("é")), [.caseInsensitive, .diacriticInsensitive]), [],
         "!Item.note.equals(\"é\", [.caseInsensitive, .diacriticInsensitive])"),
        Row(.comparison(.literal(.string("x")), .equal, .keyPath(["box", "label"]), [.diacriticInsensitive]), [],
         "Item.box.label.equals(\"x\", .diacriticInsensitive)"),
        Row(.comparison(.keyPath(["note"]), .equal, .literal(.null), [.caseInsensitive]), [], "Item.note == nil"),
        Row(.comparison(.keyPath(["name"]), .notEqual, .keyPath(["note"]), [.caseInsensitive]), [],
         "!Item.name.equals(Item.note, .caseInsensitive)"),
        Row(.comparison(.keyPath(["name"]), .endsWith, .keyPath(["box", "label"]), [.diacriticInsensitive]), [],
         "Item.name.endsWith(Item.box.label, .diacriticInsensitive)"),
        Row(.not(.comparison(.keyPath(["name"]), .equal, .literal(.string("a")), [.caseInsensitive])), [],
         "!Item.name.equals(\"a\", .caseInsensitive)"),
        Row(.quantified(.all, toMany: ["tags"], .comparison(.keyPath(["name"]), .notEqual, .parameter("t"), [.caseInsensitive])),
         [PredicateParameter(name: "t", type: .string)], "Item.tags.all(!Tag.name.equals(t, .caseInsensitive))"),
        Row(.inList(.keyPath(["kind"]), [.literal(.string("default")), .literal(.string("plain"))]), [],
         "Item.kind.in([.`default`, .plain])"),
        Row(.inParameter(.keyPath(["kind"]), "kinds"), [PredicateParameter(name: "kinds", type: .enumeration("Kind"), isList: true)],
         "Item.kind.in(kinds)"),
        Row(.inParameter(.keyPath(["box", "label"]), "in"), [PredicateParameter(name: "in", type: .string, isList: true)],
         "Item.box.label.in(`in`.map(Swift.Optional.some))"),
        Row(.between(.keyPath(["count"]), .literal(.int(1)), .parameter("high")),
         [PredicateParameter(name: "high", type: .int)], "Item.count.between(1, high)"),
        Row(.quantified(.any, toMany: ["tags"], .comparison(.keyPath(["name"]), .equal, .literal(.string("x")), [])), [],
         "Item.tags.any(Tag.name == \"x\")"),
        Row(.quantified(.none, toMany: ["tags"], .constant(true)), [], "Item.tags.none(Strata.EntityPredicate<Tag>.all)"),
        Row(.quantified(.all, toMany: ["box", "items"], .comparison(.keyPath(["count"]), .greater, .literal(.int(0)), [])), [],
         "Strata.ToMany<Item, Item>([\"box\", \"items\"]).all(Item.count > 0)"),
        Row(.comparison(.count(["tags"]), .greaterOrEqual, .parameter("minimum"), []),
         [PredicateParameter(name: "minimum", type: .int)], "Item.tags.count >= minimum"),
        // @count with IN, BETWEEN, columns and other counts.
        Row(.inList(.count(["tags"]), [.literal(.int(0)), .literal(.int(2))]), [], "Item.tags.count.in([0, 2])"),
        Row(.inParameter(.count(["tags"]), "counts"), [PredicateParameter(name: "counts", type: .int, isList: true)],
         "Item.tags.count.in(counts)"),
        Row(.between(.count(["box", "items"]), .literal(.int(1)), .parameter("high")), [PredicateParameter(name: "high", type: .int)],
         "Strata.ToMany<Item, Item>([\"box\", \"items\"]).count.between(1, high)"),
        Row(.comparison(.count(["tags"]), .greater, .keyPath(["count"]), []), [], "Item.tags.count > Item.count"),
        Row(.comparison(.keyPath(["ratio"]), .less, .count(["tags"]), []), [],
         "Item.tags.count > Strata.TypedColumn<Item, Swift.Int>(Item.ratio.path)"),
        Row(.comparison(.count(["tags"]), .equal, .count(["box", "items"]), []), [],
         "Item.tags.count == Strata.ToMany<Item, Item>([\"box\", \"items\"]).count"),
        Row(.constant(false), [], "!Strata.EntityPredicate<Item>.all"),
        Row(.not(.comparison(.keyPath(["count"]), .equal, .literal(.int(1)), [])), [], "!(Item.count == 1)"),
        Row(.and(
            .or(.comparison(.keyPath(["count"]), .equal, .literal(.int(1)), []), .constant(true)),
            .not(.comparison(.keyPath(["name"]), .contains, .literal(.string("a")), []))), [],
         "(Item.count == 1 || Strata.EntityPredicate<Item>.all) && !Item.name.contains(\"a\")"),
        Row(.or(.constant(true), .and(.constant(true), .constant(false))), [],
         "Strata.EntityPredicate<Item>.all || (Strata.EntityPredicate<Item>.all && !Strata.EntityPredicate<Item>.all)"),
    ]

    @Test(arguments: rows.indices)
    func rendersPredicate(row: Int) throws {
        let row = Self.rows[row]
        #expect(try render(row.expression, parameters: row.parameters) == row.expected)
    }

    @Test func unsupportedPredicateIsAnErrorAtItsLocation() {
        #expect(throws: SchemaError.self) {
            try render(.comparison(.literal(.int(1)), .equal, .literal(.int(2)), []))
        }
    }
}

@Suite struct NamingAndLayoutTests {
    @Test func stringLiteralsKeepExactValues() {
        #expect(SwiftNames.stringLiteral("say \"hi\"") == #""say \"hi\"""#)
        #expect(SwiftNames.stringLiteral(#"C:\x \(y)"#) == #""C:\\x \\(y)""#)
        #expect(SwiftNames.stringLiteral("a\nb\tc\r\u{0}") == #""a\nb\tc\r\0""#)
        #expect(SwiftNames.stringLiteral("\"\"\"") == #""\"\"\"""#)
        #expect(SwiftNames.stringLiteral("👩‍💻 ✓") == "\"👩‍💻 ✓\"")
        #expect(SwiftNames.stringLiteral("\u{202E}x\u{2028}") == #""\u{202E}x\u{2028}""#)
    }

    @Test func keywordsAreEscaped() {
        #expect(SwiftNames.identifier("default") == "`default`")
        #expect(SwiftNames.identifier("class") == "`class`")
        #expect(SwiftNames.identifier("title") == "title")
    }

    @Test func outputNamesDeriveFromInputNames() throws {
        #expect(OutputNaming.fileName(forModelFile: "Models/Notes.yaml") == "Notes.strata.swift")
        #expect(OutputNaming.fileName(forModelFile: "a.b.yml") == "a.b.strata.swift")
        #expect(try OutputNaming.outputFileNames(modelFiles: ["M/A.yaml", "M/B.yml"], modelName: "X").get()
            == ["A.strata.swift", "B.strata.swift", "X+Schema.strata.swift"])
        #expect(throws: OutputNaming.NamingError.self) {
            try OutputNaming.outputFileNames(modelFiles: ["M/A.yaml", "N/a.yml"], modelName: "X").get()
        }
        #expect(throws: OutputNaming.NamingError.self) {
            try OutputNaming.outputFileNames(modelFiles: ["M/X+Schema.yaml"], modelName: "X").get()
        }
    }

    @Test func storageRules() {
        let schema = sampleSchema()
        let layout = StorageLayout(schema: schema)
        let item = schema.entity(named: "Item")!
        let tag = schema.entity(named: "Tag")!
        let box = schema.entity(named: "Box")!
        #expect(layout.storage(of: item.relationship(named: "box")!, in: item) == .foreignKey(column: "boxID"))
        #expect(layout.storage(of: box.relationship(named: "items")!, in: box) == .inverseForeignKey)
        #expect(layout.storage(of: item.relationship(named: "tags")!, in: item)
            == .joinTable(name: "Item_tags", column: "itemID", inverseColumn: "tagID"))
        #expect(layout.storage(of: tag.relationship(named: "items")!, in: tag)
            == .joinTable(name: "Item_tags", column: "tagID", inverseColumn: "itemID"))
    }

    @Test func oneToOneAndSelfManyToMany() {
        let schema = Schema(entities: [
            Entity(name: "A", relationships: [
                Relationship(name: "b", destination: "B", inverse: "a", location: here),
                Relationship(name: "next", destination: "A", isToMany: true, inverse: "previous", location: here),
                Relationship(name: "previous", destination: "A", isToMany: true, inverse: "next", location: here),
            ], location: here),
            Entity(name: "B", relationships: [
                Relationship(name: "a", destination: "A", inverse: "b", isRequired: true, location: here)
            ], location: here),
        ])
        let layout = StorageLayout(schema: schema)
        let a = schema.entity(named: "A")!
        let b = schema.entity(named: "B")!
        // The required side owns the foreign key, although (A, b) < (B, a).
        #expect(layout.storage(of: b.relationship(named: "a")!, in: b) == .foreignKey(column: "aID"))
        #expect(layout.storage(of: a.relationship(named: "b")!, in: a) == .inverseForeignKey)
        #expect(layout.storage(of: a.relationship(named: "next")!, in: a)
            == .joinTable(name: "A_next", column: "previousID", inverseColumn: "nextID"))
        #expect(layout.storage(of: a.relationship(named: "previous")!, in: a)
            == .joinTable(name: "A_next", column: "nextID", inverseColumn: "previousID"))
    }

    @Test func clashingStorageNamesAreErrors() {
        var schema = sampleSchema()
        schema.entities[0].attributes.append(Attribute(name: "boxID", type: .int, location: here))
        do {
            _ = try Generator.generate(schema)
            Issue.record("expected errors")
        } catch let error as SchemaError {
            #expect(error.diagnostics.map(\.message) == [
                "the to-one relationship 'box' stores its id in 'boxID', which clashes with the attribute 'boxID' of 'Item'; keep both names by choosing the key's name with 'foreignKey:' on 'box' (e.g. foreignKey: boxKey)",
            ])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func mermaidDiagram() {
        let text = MermaidRenderer.render(sampleSchema())
        #expect(text.contains("    Box ||--o{ Item : \"items (nullify) / box (nullify)\"\n") || text.contains("    Box |o--o{ Item : \"items (nullify) / box (nullify)\"\n"), "\(text)")
        #expect(text.contains("    Item }o--o{ Tag : \"tags (nullify) / items (nullify)\"\n"), "\(text)")
        #expect(text.contains("        Kind kind\n"))
        #expect(text.contains("        Int boxID FK \"box to Box\"\n"))
    }

    @Test func jsonSchemaIsDeterministicJSON() throws {
        let text = JSONSchemaRenderer.render()
        #expect(text == JSONSchemaRenderer.render())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        let defs = try #require(object["$defs"] as? [String: Any])
        #expect(Set(defs.keys) == ["entity", "attribute", "relationship", "fetch", "sections", "sort", "predicate"])
    }
}

/// A large model's output has every entity, attribute, relationship and fetch. Its speed is
/// measured outside the test suite (`time strata generate` on such a model), not asserted.
@Suite struct LargeModelGenerationTests {
    /// 200 entities × 10 attributes, each with a to-one, a to-many and a fetch.
    @Test func everyEntityAndAttributeIsGenerated() throws {
        var entities: [Entity] = []
        for index in 0..<200 {
            let next = "E\((index + 1) % 200)"
            let previous = "E\((index + 199) % 200)"
            entities.append(Entity(
                name: "E\(index)",
                attributes: (0..<10).map { Attribute(name: "a\($0)", type: $0 % 2 == 0 ? .string : .int, location: here) },
                relationships: [
                    Relationship(name: "next", destination: next, inverse: "previous", location: here),
                    Relationship(name: "previous", destination: previous, isToMany: true, inverse: "next", location: here),
                ],
                fetches: [Fetch(name: "all", sort: [SortKey(path: ["a0"], descending: false, location: here)], location: here)],
                location: here))
        }
        let schema = Schema(name: "Big", entities: entities)
        let files = try Generator.generate(schema)
        #expect(files.count == 2)
        // Trimmed lines, to look each expected declaration up once.
        var lines: [Substring] = []
        for file in files {
            for line in file.contents.split(separator: "\n") { lines.append(line.drop(while: { $0 == " " })) }
        }
        let declared = Set(lines.map(String.init))
        for index in 0..<200 {
            let type = "E\(index)"
            #expect(declared.contains("public struct \(type): Strata.StrataEntity, Swift.Identifiable {"), "\(type)")
            for attribute in 0..<10 {
                let swiftType = attribute % 2 == 0 ? "Swift.String" : "Swift.Int"
                #expect(declared.contains("public var a\(attribute): \(swiftType)"), "\(type).a\(attribute)")
                #expect(
                    declared.contains("public static var a\(attribute): Strata.TypedColumn<\(type), \(swiftType)> { .init(\"a\(attribute)\") }"),
                    "\(type).a\(attribute) column")
            }
            #expect(declared.contains("public var nextID: E\((index + 1) % 200).ID?"), "\(type).nextID")
            #expect(
                declared.contains("public static let previous: GRDB.HasManyAssociation<\(type), E\((index + 199) % 200)> ="),
                "\(type).previous")
        }
        // Each entity's ten `public var a…` properties appear once in the struct.
        #expect(lines.filter { $0.hasPrefix("public var a") && !$0.contains("{") }.count == 2_000)
        #expect(lines.filter { $0 == "public enum Fetches {" }.count == 200)
    }
}
