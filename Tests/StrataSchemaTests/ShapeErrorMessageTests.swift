import Testing

@testable import StrataSchema

/// The diagnostics of `Codable<T>` attributes and of abstract entities (`abstract:`,
/// `extends:`), one bad model each, with the exact messages.
@Suite("Error messages: Codable attributes and abstract entities")
struct ShapeErrorMessageTests {
    static let codableErrors: [BadModel] = [
        BadModel(
            "Codable without its type", "entities:\n  A:\n    attributes: { a: Codable, b: Codable<> }\n",
            "m.yaml:3:22: error: 'Codable' needs the Swift type it stores, e.g. Codable<Address>",
            "m.yaml:3:34: error: 'Codable' needs the Swift type it stores, e.g. Codable<Address>"),
        BadModel(
            "not a Swift type", "entities:\n  A:\n    attributes:\n      a: Codable<1x>\n      b: \"Codable<[String:]>\"\n      c: Codable<Address?>\n      d: Codable<Address>?\n",
            "m.yaml:4:10: error: '1x' in 'Codable<1x>' is not a Swift type name; write a type such as Address, MyKit.Address, [String] or [String: Int]",
            "m.yaml:5:10: error: '[String:]' in 'Codable<[String:]>' is not a Swift type name; write a type such as Address, MyKit.Address, [String] or [String: Int]",
            "m.yaml:6:10: error: 'Address?' in 'Codable<Address?>' is not a Swift type name; write a type such as Address, MyKit.Address, [String] or [String: Int]",
            "m.yaml:7:10: error: 'Codable<Address>?' is not a type; write { type: Codable<Address>, optional: true } for an optional attribute"),
        BadModel(
            "a default", "entities:\n  A:\n    attributes:\n      a: { type: Codable<Address>, default: x }\n",
            "m.yaml:4:45: error: a Codable attribute has no default literal ('A.a'); make it optional (nil until set), or give the value in Swift"),
        BadModel(
            "indexed, unique, unique constraint, index",
            "entities:\n  A:\n    attributes:\n      a: { type: Codable<Address>, indexed: true, unique: true }\n      b: String\n    unique: [[b, a]]\n    indexes: [[a]]\n",
            "m.yaml:4:7: error: 'indexed' on 'A.a': a Codable attribute is stored as JSON text, which has no useful order or equality; index or constrain an attribute of a plain type",
            "m.yaml:4:7: error: 'unique' on 'A.a': a Codable attribute is stored as JSON text, which has no useful order or equality; index or constrain an attribute of a plain type",
            "m.yaml:4:7: warning: 'indexed' on 'A.a' is redundant: a unique attribute is already indexed",
            "m.yaml:6:18: error: 'a' in 'unique' of 'A' is a Codable attribute, stored as JSON text; it cannot be part of a unique constraint or an index",
            "m.yaml:7:15: warning: index [a] of 'A' duplicates 'unique: true' on 'a', which is already indexed",
            "m.yaml:7:16: error: 'a' in 'indexes' of 'A' is a Codable attribute, stored as JSON text; it cannot be part of a unique constraint or an index"),
        BadModel(
            "sorts, sections and predicates",
            """
            entities:
              A:
                attributes: { a: "Codable<[String: Int]>", n: String }
                fetches:
                  s: { sort: [-a] }
                  k: { sections: { key: a } }
                  w: { where: "a == nil OR n == 'x'" }

            """,
            "m.yaml:5:20: error: sort key: 'a' is a Codable attribute, stored as JSON text; it cannot be sorted or sectioned",
            "m.yaml:6:29: error: section key: 'a' is a Codable attribute, stored as JSON text; it cannot be sorted or sectioned",
            "m.yaml:7:20: error: 'a' is a Codable attribute, stored as JSON text; predicates cannot compare it"),
        BadModel(
            "an enum named Codable", "enums:\n  Codable: [a]\n",
            "m.yaml:2:3: error: enum name 'Codable' is a built-in attribute type; rename the enum"),
    ]

    @Test(arguments: codableErrors)
    func codable(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    static let inheritanceErrors: [BadModel] = [
        BadModel(
            "unknown parent", "entities:\n  Base: { abstract: true }\n  A: { extends: Bas }\n",
            "m.yaml:3:17: error: unknown entity 'Bas' in 'extends' of 'A'; did you mean 'Base'?"),
        BadModel(
            "concrete parent", "entities:\n  Base: { attributes: { a: String } }\n  A: { extends: Base }\n",
            "m.yaml:3:17: error: 'A' extends 'Base', which is not abstract; only an abstract entity can be extended: add 'abstract: true' to 'Base' (it then has no table of its own)"),
        BadModel(
            "a cycle", "entities:\n  A: { abstract: true, extends: C }\n  B: { abstract: true, extends: A }\n  C: { abstract: true, extends: B }\n  D: { extends: A }\n",
            "m.yaml:2:33: error: entities extend each other in a cycle (A → C → B → A); remove 'extends' from one of them"),
        BadModel(
            "extends itself", "entities:\n  A: { abstract: true, extends: A }\n",
            "m.yaml:2:33: error: entities extend each other in a cycle (A → A); remove 'extends' from one of them"),
        BadModel(
            "an attribute redeclared with another type or optionality",
            """
            entities:
              Base:
                abstract: true
                attributes: { a: String, b: { type: Int, optional: true }, c: Int }
              A:
                extends: Base
                attributes: { a: Int, b: Int, c: { type: Int, default: 3 } }

            """,
            "m.yaml:7:22: error: attribute 'A.a' redeclares the attribute inherited from 'Base' as Int, but it is String; an entity may change an inherited attribute's default, doc or index, not its type",
            "m.yaml:4:19: note: 'a' is declared here",
            "m.yaml:7:30: error: attribute 'A.b' redeclares the attribute inherited from 'Base' as Int, but it is Int (optional); an entity may change an inherited attribute's default, doc or index, not its type",
            "m.yaml:4:30: note: 'b' is declared here"),
        BadModel(
            "relationships, fetches and renamedFrom on an abstract entity; relationships to it",
            """
            entities:
              Base:
                abstract: true
                renamedFrom: Old
                relationships:
                  owner: { to: Owner, inverse: things }
                fetches:
                  all:
              A: { extends: Base }
              B: { extends: Base }
              Owner:
                relationships:
                  things: { to: Base, many: true, inverse: owner }

            """,
            "m.yaml:2:3: error: abstract entity 'Base' has no table to rename; remove 'renamedFrom'",
            "m.yaml:6:7: error: abstract entity 'Base' cannot declare the relationship 'owner': its inverse could point back to only one entity; declare it on each entity that extends 'Base'",
            "m.yaml:8:7: error: abstract entity 'Base' has no table to fetch from; declare the fetch 'all' on each entity that extends it",
            "m.yaml:13:21: error: relationship 'Owner.things' points to the abstract entity 'Base', which has no table; point it to an entity that extends it ('A', 'B')"),
        BadModel(
            "errors in the base are reported once, not once per entity extending it",
            """
            entities:
              Base:
                abstract: true
                attributes: { init: Strin, n: { type: Int, default: x, indexed: true }, name: String, Name: String, oid: Int }
                unique: [[nam]]
                indexes: [[n]]
              A: { extends: Base }
              B: { extends: Base, attributes: { nAME: String } }

            """,
            "m.yaml:4:19: error: attribute name 'init' clashes with the generated member 'Base.init'; rename it",
            "m.yaml:4:25: error: unknown type 'Strin' for attribute 'Base.init'; did you mean 'String'?",
            "m.yaml:4:57: error: default 'x' of 'Base.n' is not a valid Int",
            "m.yaml:4:91: error: the attribute 'Name' of 'Base' differs from the attribute 'name' only by case, but SQLite column names ignore case; rename one",
            "m.yaml:4:105: error: the attribute 'oid' of 'Base' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); rename it",
            "m.yaml:5:15: error: unknown attribute or relationship 'nam' in 'unique' of 'Base'; did you mean 'name'?",
            "m.yaml:6:15: warning: index [n] of 'Base' duplicates 'indexed: true' on 'n', which is already indexed",
            "m.yaml:8:37: error: the attribute 'nAME' of 'B' differs from the attribute 'name' only by case, but SQLite column names ignore case; rename one"),
        BadModel(
            "'abstract' must be a boolean, 'extends' a name", "entities:\n  A: { abstract: yes, extends: [B] }\n",
            "m.yaml:2:18: error: 'abstract' must be true or false, not 'yes'",
            "m.yaml:2:32: error: 'extends' must be a scalar, not a sequence"),
    ]

    @Test(arguments: inheritanceErrors)
    func inheritance(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    @Test func inheritedPartsAreCopied() throws {
        let result = load("""
            entities:
              Base:
                abstract: true
                attributes: { a: String, b: { type: Int, default: 1 } }
                unique: [[a]]
                indexes: [[b]]
              Middle: { abstract: true, extends: Base, attributes: { c: "Codable<[Int]>" } }
              Leaf:
                extends: Middle
                attributes: { d: Bool, b: { type: Int, default: 2 } }
                fetches:
                  byA: { where: "a == $a AND b > 0", sort: [b] }

            """)
        #expect(result.diagnostics.isEmpty)
        let schema = try #require(result.schema)
        let leaf = try #require(schema.entity(named: "Leaf"))
        #expect(leaf.attributes.map(\.name) == ["a", "b", "c", "d"])
        #expect(leaf.attributes.map(\.inheritedFrom) == ["Base", nil, "Middle", nil])
        #expect(leaf.attribute(named: "b")?.defaultValue == .int(2))
        #expect(leaf.attribute(named: "c")?.type == .codable("[Int]"))
        #expect(leaf.uniques == [["a"]] && leaf.indexes == [["b"]])
        #expect(schema.entity(named: "Middle")?.attributes.map(\.name) == ["a", "b", "c"])
    }

    @Test func swiftTypeSpellings() {
        #expect(SwiftTypeSyntax.normalized("[ String :Int ]") == "[String: Int]")
        #expect(SwiftTypeSyntax.normalized("MyKit.Box<Int,[String?]>") == "MyKit.Box<Int, [String?]>")
        for valid in ["A", "_A", "a.b.C", "[[A]]", "[A: [B: C]]", "Dictionary<String, Set<Int>>", "Ünïcode"] {
            #expect(SwiftTypeSyntax.isValid(valid), "\(valid)")
        }
        for invalid in ["", "1A", "A.", "[A", "A<>", "A<B", "[A:]", "A?", "A B", "_", "A-B", "(A, B)"] {
            #expect(!SwiftTypeSyntax.isValid(invalid), "\(invalid)")
        }
    }
}
