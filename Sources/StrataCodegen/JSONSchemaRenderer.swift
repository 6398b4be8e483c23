import Foundation
import StrataSchema

/// A JSON Schema (draft 2020-12) of the model language, version 1, for editors that
/// complete and check YAML (`# yaml-language-server: $schema=strata.schema.json`).
public enum JSONSchemaRenderer {
    public static let schemaID = "https://strata.invalid/schema/model-v1.json"

    /// The schema as pretty-printed JSON with sorted keys: the same bytes on every run.
    public static func render() -> String {
        let data = try! JSONSerialization.data(
            withJSONObject: document(), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static let identifier = "^[A-Za-z_][A-Za-z0-9_]*$"

    static func document() -> [String: Any] {
        let typeNames = AttributeType.builtins.keys.sorted()
        // A list of key paths, or a single one (`sort: title`); `-` descending, `+` ascending.
        let keyPath = "^[-+]?[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$"
        let keyPathList: [String: Any] = [
            "type": ["array", "string"], "pattern": keyPath, "items": ["type": "string", "pattern": keyPath],
        ]
        // The decoder reads an empty value (`Tag:`, `attributes:`) as an empty mapping or list.
        let objectOrNull = ["object", "null"]
        let nameList: [String: Any] = ["type": ["array", "null"], "items": ["type": "array", "items": ["type": "string"], "minItems": 1]]
        let attribute: [String: Any] = [
            "oneOf": [
                ["type": "string", "pattern": identifier, "description": "Short form: the type only; required, no default."],
                [
                    "type": "object", "additionalProperties": false, "required": ["type"],
                    "properties": [
                        "type": ["type": "string", "pattern": identifier, "description": "A built-in type (\(typeNames.joined(separator: ", "))) or an enum of the model."],
                        "optional": ["type": "boolean"],
                        "default": ["type": ["boolean", "number", "string"], "description": "A literal of the type; `now` for Date, `uuid` for UUID."],
                        "indexed": ["type": "boolean"], "unique": ["type": "boolean"],
                        "doc": ["type": "string"], "renamedFrom": ["type": "string"],
                    ] as [String: Any],
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
                "doc": ["type": "string"], "renamedFrom": ["type": "string"],
            ] as [String: Any],
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
        let entity: [String: Any] = [
            "type": objectOrNull, "additionalProperties": false,
            "properties": [
                "doc": ["type": "string"], "renamedFrom": ["type": "string"],
                "attributes": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/attribute"]],
                "relationships": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/relationship"]],
                "unique": nameList, "indexes": nameList,
                "fetches": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/fetch"]],
            ] as [String: Any],
        ]
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": schemaID,
            "title": "Strata model, version 1",
            "type": "object", "additionalProperties": false,
            "properties": [
                "version": ["const": 1],
                "enums": [
                    "type": objectOrNull, "propertyNames": ["pattern": identifier],
                    "additionalProperties": ["type": "array", "items": ["type": "string", "pattern": identifier], "minItems": 1, "uniqueItems": true],
                ] as [String: Any],
                "entities": ["type": objectOrNull, "propertyNames": ["pattern": identifier], "additionalProperties": ["$ref": "#/$defs/entity"]],
            ] as [String: Any],
            "$defs": [
                "entity": entity, "attribute": attribute, "relationship": relationship, "fetch": fetch,
                "sections": sections, "sort": keyPathList,
                "predicate": ["type": "string", "description": "NSPredicate-like: == != < <= > >=, AND OR NOT, IN, BETWEEN, CONTAINS BEGINSWITH ENDSWITH LIKE with [c]/[d], ANY/ALL/NONE, @count, $parameters."],
            ] as [String: Any],
        ]
    }
}
