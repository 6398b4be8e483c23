import Foundation
import StrataSchema

/// A JSON Schema (draft 2020-12) of the model language, version 1, for editors that
/// complete and check YAML (`# yaml-language-server: $schema=strata.schema.json`).
public enum JSONSchemaRenderer {
    /// The schema's `$id`: a name, not a place the schema can be downloaded from.
    public static let schemaID = "https://strata.invalid/schema/model-v1.json"

    /// The schema as pretty-printed JSON with sorted keys: the same bytes on every run.
    public static func render() -> String {
        let data = try! JSONSerialization.data(
            withJSONObject: document(), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static let identifier = "^[A-Za-z_][A-Za-z0-9_]*$"
    /// A type name: a built-in type, an enum, or `Codable<T>` with the app's Swift type `T`.
    private static let typeName = "^([A-Za-z_][A-Za-z0-9_]*|Codable<.+>)$"

    static func document() -> [String: Any] {
        let typeNames = AttributeType.builtins.keys.sorted()
        // A list of key paths, or a single one (`sort: title`); `-` descending, `+` ascending;
        // `.@position` last: the place in an ordered relationship (`list.@position`).
        let keyPath = "^[-+]?[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*(\\.@position)?$"
        let keyPathList: [String: Any] = [
            "type": ["array", "string"], "pattern": keyPath, "items": ["type": "string", "pattern": keyPath],
        ]
        // The decoder reads an empty value (`Tag:`, `attributes:`) as an empty mapping or list.
        let objectOrNull = ["object", "null"]
        // `unique: [[a, b]]`, `indexes: [[a]]`: no empty group, no name twice in one group.
        let nameList: [String: Any] = [
            "type": ["array", "null"],
            "items": ["type": "array", "items": ["type": "string"], "minItems": 1, "uniqueItems": true],
        ]
        // `indexes: [[a, -b], { name: byB, columns: [-b] }]`: `-` for a descending column.
        let indexColumns: [String: Any] = [
            "type": "array", "minItems": 1, "uniqueItems": true,
            "items": ["type": "string", "pattern": "^[-+]?[A-Za-z_][A-Za-z0-9_]*$"],
        ]
        let indexList: [String: Any] = [
            "type": ["array", "null"],
            "items": [
                "oneOf": [
                    indexColumns,
                    [
                        "type": "object", "additionalProperties": false, "required": ["columns"],
                        "properties": [
                            "name": ["type": "string", "pattern": identifier, "description": "The SQLite index name: unique in the model, not starting with sqlite_ or strata_."],
                            "columns": indexColumns,
                        ] as [String: Any],
                    ],
                ],
            ] as [String: Any],
        ]
        let attribute: [String: Any] = [
            "oneOf": [
                ["type": "string", "pattern": typeName, "description": "Short form: the type only; required, no default."],
                [
                    "type": "object", "additionalProperties": false, "required": ["type"],
                    "properties": [
                        "type": ["type": "string", "pattern": typeName, "description": "A built-in type (\(typeNames.joined(separator: ", "))), an enum of the model, or Codable<T>: a value of the app's Codable Swift type T, stored as JSON."],
                        "optional": ["type": "boolean"],
                        "default": ["type": ["boolean", "number", "string"], "description": "A literal of the type; for Date `now` or an ISO 8601 date-time or date, for UUID `uuid`."],
                        "indexed": ["type": "boolean"], "unique": ["type": "boolean"],
                        "transient": ["type": "boolean", "description": "Generated as a stored property but not stored: needs a default or optional: true."],
                        "doc": ["type": "string"], "renamedFrom": ["type": "string"],
                        "min": ["type": ["number", "string"], "description": "Int, Int32, Int16, Double, Float: the smallest value allowed; Date: the earliest, as 2024-01-31 or 2024-01-31T08:30:00Z (UTC)."],
                        "max": ["type": ["number", "string"], "description": "Int, Int32, Int16, Double, Float: the largest value allowed; Date: the latest, as 2024-01-31 or 2024-01-31T08:30:00Z (UTC)."],
                        "minLength": ["type": "integer", "minimum": 0, "description": "String only: the fewest Unicode code points allowed."],
                        "maxLength": ["type": "integer", "minimum": 0, "description": "String only: the most Unicode code points allowed."],
                        "pattern": ["type": "string", "description": "String only: a regular expression (Swift Regex syntax) that the whole value must match."],
                    ] as [String: Any],
                    "allOf": defaultKinds(),
                ],
            ],
        ]
        let relationship: [String: Any] = [
            "type": "object", "additionalProperties": false, "required": ["to", "inverse"],
            "properties": [
                "to": ["type": "string", "pattern": identifier],
                "many": ["type": "boolean"],
                "inverse": ["type": "string", "pattern": identifier],
                "required": ["type": "boolean", "description": "To-one only: the relationship must not be nil."],
                "deleteRule": ["enum": DeleteRule.allCases.map(\.rawValue)],
                "ordered": ["type": "boolean", "description": "To-many only, whose inverse is to-one: the destinations keep an order of their own (sort by '<inverse>.@position')."],
                "initialOrder": ["$ref": "#/$defs/sort", "description": "With 'ordered: true': the destination's sort keys that give the first order when a migration makes the relationship ordered."],
                "minCount": ["type": "integer", "minimum": 0, "description": "To-many only: the fewest destinations allowed when a transaction commits."],
                "maxCount": ["type": "integer", "minimum": 1, "description": "To-many only: the most destinations allowed when a transaction commits."],
                "foreignKey": ["type": "string", "pattern": identifier, "description": "To-one only: the name of its key's Swift property and column, instead of '<relationship>ID'."],
                "doc": ["type": "string"], "renamedFrom": ["type": "string"],
            ] as [String: Any],
            "allOf": [
                // `required` applies to to-one relationships only.
                [
                    "if": ["required": ["many"], "properties": ["many": ["const": true]]] as [String: Any],
                    "then": ["properties": ["required": ["const": false, "description": "A to-many relationship cannot be required."]]],
                ] as [String: Any],
                // `minCount` and `maxCount` apply to to-many relationships only.
                [
                    "if": ["anyOf": [["required": ["minCount"]], ["required": ["maxCount"]]]] as [String: Any],
                    "then": [
                        "required": ["many"],
                        "properties": ["many": ["const": true, "description": "Only a to-many relationship has a count."]],
                    ] as [String: Any],
                ] as [String: Any],
                // `foreignKey` applies to to-one relationships only.
                [
                    "if": ["required": ["foreignKey"]] as [String: Any],
                    "then": ["properties": ["many": ["const": false, "description": "Only a to-one relationship has a key column of its own."]]],
                ] as [String: Any],
                // `ordered` applies to to-many relationships only.
                [
                    "if": ["required": ["ordered"], "properties": ["ordered": ["const": true]]] as [String: Any],
                    "then": [
                        "required": ["many"],
                        "properties": ["many": ["const": true, "description": "Only a to-many relationship can be ordered."]],
                    ] as [String: Any],
                ] as [String: Any],
            ],
        ]
        let sections: [String: Any] = [
            "oneOf": [
                [
                    "type": "object", "additionalProperties": false, "required": ["key"],
                    "properties": [
                        "key": ["type": "string"], "descending": ["type": "boolean"], "by": ["enum": ["firstLetter"]],
                    ] as [String: Any],
                ],
                [
                    "type": "object", "additionalProperties": false, "required": ["entity"],
                    "properties": [
                        "entity": ["type": "string", "description": "A to-one relationship of the entity."],
                        "sort": ["$ref": "#/$defs/sort"], "where": ["$ref": "#/$defs/predicate"],
                        "orphans": ["type": "boolean"],
                    ] as [String: Any],
                ],
            ],
        ]
        let fetch: [String: Any] = [
            "type": objectOrNull, "additionalProperties": false,
            "properties": [
                "where": ["$ref": "#/$defs/predicate"], "sort": ["$ref": "#/$defs/sort"],
                "sections": ["$ref": "#/$defs/sections"], "doc": ["type": "string"],
            ] as [String: Any],
        ]
        // An abstract entity declares no relationships and no fetches (no name matches "^$").
        let nothing: [String: Any] = [
            "type": objectOrNull, "propertyNames": ["pattern": "^$"],
            "description": "An abstract entity has no table: declare this on each entity that extends it.",
        ]
        let entity: [String: Any] = [
            "type": objectOrNull, "additionalProperties": false,
            "properties": [
                "doc": ["type": "string"], "renamedFrom": ["type": "string"],
                "abstract": ["type": "boolean", "description": "No table and no struct: a Swift protocol whose attributes, unique constraints and indexes every entity that extends it stores in its own table."],
                "extends": ["type": "string", "pattern": identifier, "description": "The abstract entity whose attributes, unique constraints and indexes this entity inherits."],
                "primaryKey": ["type": "string", "pattern": identifier, "description": "The name of the primary key (its property and column), over the file's; `id` by default. Name it to keep an attribute called `id`."],
                "attributes": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/attribute"]],
                "relationships": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/relationship"]],
                "unique": nameList, "indexes": indexList,
                "fetches": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/fetch"]],
                "access": [
                    "description": "Per-user data: which signed-in users a relay serves the objects to and lets change them. Once one entity declares it, every entity does.",
                    "oneOf": [
                        ["const": "everyone", "description": "Every signed-in user."],
                        [
                            "type": "object", "additionalProperties": false,
                            "properties": [
                                "owner": ["type": "string", "pattern": identifier, "description": "A String or UUID attribute holding the owner's user id."],
                                "members": ["type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$", "description": "A one-to-many relationship and the attribute of its objects holding a member's user id: members.userID."],
                            ] as [String: Any],
                        ] as [String: Any],
                        [
                            "type": "object", "additionalProperties": false, "required": ["through"],
                            "properties": [
                                "through": ["type": "string", "pattern": identifier, "description": "A to-one relationship (holding its key): the object's users are those of the object it leads to."],
                            ] as [String: Any],
                        ] as [String: Any],
                    ],
                ] as [String: Any],
            ] as [String: Any],
            "allOf": [
                [
                    "if": ["required": ["abstract"], "properties": ["abstract": ["const": true]]] as [String: Any],
                    "then": ["properties": ["relationships": nothing, "fetches": nothing, "primaryKey": nothing, "access": nothing]],
                ] as [String: Any],
            ],
        ]
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": schemaID,
            "title": "Strata model, version 1",
            "type": "object", "additionalProperties": false,
            "properties": [
                "version": ["const": 1],
                "primaryKey": ["type": "string", "pattern": identifier, "description": "The name of the primary key of every entity of this file that does not name its own; `id` by default."],
                "enums": [
                    "type": objectOrNull, "propertyNames": ["pattern": identifier],
                    "additionalProperties": ["type": "array", "items": ["type": "string", "pattern": identifier], "minItems": 1, "uniqueItems": true],
                ] as [String: Any],
                "entities": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/entity"]],
            ] as [String: Any],
            "$defs": [
                "entity": entity, "attribute": attribute, "relationship": relationship, "fetch": fetch,
                "sections": sections, "sort": keyPathList,
                "predicate": ["type": "string", "minLength": 1, "pattern": "\\S", "description": "NSPredicate-like: == != < <= > >=, AND OR NOT, IN, BETWEEN, CONTAINS BEGINSWITH ENDSWITH LIKE with [c]/[d], ANY/ALL/NONE, @count, $parameters."],
            ] as [String: Any],
        ]
    }

    /// For each built-in type whose defaults `strata` reads only from one kind of YAML
    /// scalar: an `if`/`then` that the `default` is of that kind (and range). `String` and
    /// `Data` take any scalar; an enum's cases are the model's, so they are left to `strata`.
    static func defaultKinds() -> [[String: Any]] {
        func when(_ type: String, _ defaultSchema: [String: Any]) -> [String: Any] {
            [
                "if": ["required": ["type"], "properties": ["type": ["const": type]]] as [String: Any],
                "then": ["properties": ["default": defaultSchema]],
            ]
        }
        let uuid = "^(uuid|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$"
        return [
            when("Int", ["type": "integer", "description": "An integer, without quotes."]),
            when("Int32", ["type": "integer", "minimum": Int(Int32.min), "maximum": Int(Int32.max)]),
            when("Int16", ["type": "integer", "minimum": Int(Int16.min), "maximum": Int(Int16.max)]),
            when("Double", ["type": "number"]),
            when("Float", ["type": "number"]),
            when("Decimal", ["type": "number"]),
            when("Bool", ["type": "boolean", "description": "true or false."]),
            when("Date", [
                "type": "string",
                "pattern": "^(now|[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,3})?([Zz]|[+-][0-9]{2}:[0-9]{2}))?)$",
                "description": "`now` (the time of the insert), an ISO 8601 date-time (2024-01-01T09:30:00Z) or a date (2024-01-01, midnight UTC).",
            ]),
            when("UUID", ["type": "string", "pattern": uuid, "description": "`uuid` (a new one per object) or a UUID literal."]),
            when("URL", ["type": "string", "pattern": "^[A-Za-z][A-Za-z0-9+.-]*:", "description": "An absolute URL."]),
            // A Codable attribute has no default, no index and no unique constraint.
            [
                "if": ["required": ["type"], "properties": ["type": ["pattern": "^Codable<"]]] as [String: Any],
                "then": [
                    "properties": [
                        "default": ["type": "null", "description": "A Codable attribute has no default: make it optional."],
                        "indexed": ["const": false, "description": "A Codable attribute (JSON text) cannot be indexed."],
                        "unique": ["const": false, "description": "A Codable attribute (JSON text) cannot be unique."],
                    ] as [String: Any],
                ],
            ],
        ]
    }
}
