import Foundation
import GRDB
import Strata
import Testing

// The generated code of the Shapes model (Tests/StrataCodegenTests/Resources/Shapes.yaml):
// `Codable<T>` attributes stored as JSON, and the abstract entities `Shape` and `Solid`
// whose attributes each concrete entity stores in its own table. The Codable types are
// the app's own, defined here as an app would.

/// How a shape is drawn (`style: Codable<ShapeStyle>`).
public struct ShapeStyle: Codable, Hashable, Sendable {
    public var stroke: String
    public var width: Double
    public var dash: [Int]?
    public var labels: [String: String]

    public init(stroke: String, width: Double, dash: [Int]? = nil, labels: [String: String] = [:]) {
        self.stroke = stroke
        self.width = width
        self.dash = dash
        self.labels = labels
    }
}

/// A point of a polygon (`points: Codable<[ShapePoint]>`).
public struct ShapePoint: Codable, Hashable, Sendable {
    public var x: Double
    public var y: Double
}

/// A value of a label's metadata (`metadata: Codable<[String: ShapeValue]>`).
public enum ShapeValue: Codable, Hashable, Sendable {
    case text(String)
    case number(Int64)
    case list([ShapeValue])
    case nothing
}

/// A canvas's settings (`settings: Codable<CanvasSettings>`), with edge values.
public struct CanvasSettings: Codable, Hashable, Sendable {
    public var big: Int64 = 0
    public var unsigned: UInt64 = 0
    public var real: Double = 0
    public var grid: [[String: [Int]]] = []
    public var note: String? = nil
    public var when: Foundation.Date? = nil
}

@Suite("Shapes: Codable attributes and abstract entities")
struct ShapesTests {
    private func storedText(_ store: Strata.Store, _ table: String, _ column: String, id: Int64) throws -> String? {
        try store.writer.read { db in
            try String.fetchOne(db, sql: "SELECT \"\(column)\" FROM \"\(table)\" WHERE id = ?", arguments: [id])
        }
    }

    // MARK: - Codable attributes

    @Test("values at the edges round-trip through the typed API: nested, optional, unicode, big numbers, empty")
    func roundTrip() throws {
        let store = try Strata.Store.inMemory(schema: ShapesModel.schema)
        let edges: [CanvasSettings] = [
            CanvasSettings(),
            CanvasSettings(big: .max, unsigned: .max, real: .greatestFiniteMagnitude, grid: [[:], ["a": []]], note: ""),
            CanvasSettings(big: .min, unsigned: 0, real: -0.1, grid: [["é\u{301}🙂\u{0}\"\\/": [Int.min, Int.max]]],
                           note: "line\nbreak\t\u{0}nul", when: Foundation.Date(timeIntervalSinceReferenceDate: 123.456789)),
            CanvasSettings(real: .leastNonzeroMagnitude, grid: Array(repeating: ["k": [1, 2, 3]], count: 100)),
        ]
        for settings in edges {
            let canvas = try store.insert(Canvas(title: "c", settings: settings))
            #expect(canvas.settings == settings)
            #expect(try store.fetchOne(Canvas.self, id: canvas.id)?.settings == settings)
        }
        let metadata: [String: ShapeValue] = [
            "": .nothing, "deep": .list([.list([.list([.text("x"), .number(.min)])]), .list([])]), "ü": .number(.max),
        ]
        let label = try store.insert(Label(name: "l", text: "t", metadata: metadata))
        let empty = try store.insert(Label(name: "m", text: "t", metadata: [:]))
        let none = try store.insert(Label(name: "n", text: "t"))
        #expect(try store.fetchOne(Label.self, id: label.id)?.metadata == metadata)
        #expect(try store.fetchOne(Label.self, id: empty.id)?.metadata == [:])
        #expect(try store.fetchOne(Label.self, id: none.id)?.metadata == nil)
        // nil is NULL; an empty dictionary is the text {}.
        #expect(try store.writer.read { db in
            try DatabaseValue.fetchOne(db, sql: "SELECT metadata FROM Label WHERE id = ?", arguments: [none.id])
        } == .null)
        #expect(try storedText(store, "Label", "metadata", id: empty.id.rawValue) == "{}")
        let polygon = try store.insert(Polygon(name: "p", points: []))
        #expect(try store.fetchOne(Polygon.self, id: polygon.id)?.points == [])
    }

    @Test("equal values store equal text (sorted keys), so an unchanged value is no update and a change is one")
    func deterministicText() throws {
        let store = try Strata.Store.inMemory(schema: ShapesModel.schema)
        var forward: [String: String] = [:]
        var backward: [String: String] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { forward[key] = key }
        for key in keys.reversed() { backward[key] = key }
        var circle = try store.insert(Circle(name: "a", style: ShapeStyle(stroke: "red/blue", width: 1, labels: forward), radius: 1))
        let text = try #require(try storedText(store, "Circle", "style", id: circle.id.rawValue))
        #expect(text.hasPrefix(#"{"labels":{"key0":"key0","key1":"key1","key10":"#))
        #expect(text.contains(#""stroke":"red/blue""#))   // slashes are not escaped
        circle.style = ShapeStyle(stroke: "red/blue", width: 1, labels: backward)
        #expect(try store.update(circle) == false)
        circle.style?.labels["key7"] = "changed"
        #expect(try store.update(circle) == true)
        #expect(try store.fetchOne(Circle.self, id: circle.id)?.style?.labels["key7"] == "changed")
        circle.style = nil
        #expect(try store.update(circle) == true)
        #expect(try store.fetchOne(Circle.self, id: circle.id)?.style == nil)
    }

    @Test("a value its type cannot encode is refused before anything is written, on every write path")
    func unencodableValue() throws {
        let store = try Strata.Store.inMemory(schema: ShapesModel.schema)
        let infinite = Canvas(title: "c", settings: CanvasSettings(real: .infinity))
        #expect { try store.insert(infinite) } throws: { error in
            guard let error = error as? InvalidValueError, case .notEncodable = error.reason else { return false }
            return error.entity == "Canvas" && error.attribute == "settings"
                && error.description.hasPrefix("cannot store Canvas.settings: the value cannot be encoded as JSON: ")
        }
        #expect(throws: InvalidValueError.self) {
            try store.writer.write { db in
                var copy = infinite
                try copy.insert(db)   // GRDB's own API
            }
        }
        #expect(throws: InvalidValueError.self) {
            try store.insert(Circle(name: "n", style: ShapeStyle(stroke: "", width: .nan), radius: 1))
        }
        #expect(try store.read { db in try Canvas.fetchCount(db) + Circle.fetchCount(db) } == 0)
    }

    @Test("a stored value that is not JSON of the type throws, naming the entity, row, attribute and what is wrong")
    func badStoredJSON() throws {
        let store = try Strata.Store.inMemory(schema: ShapesModel.schema)
        let circle = try store.insert(Circle(name: "a", style: ShapeStyle(stroke: "red", width: 2), radius: 1))
        func readError(_ sql: String) throws -> ValueDecodingError? {
            try store.writer.write { db in try db.execute(sql: sql, arguments: [circle.id]) }
            do {
                _ = try store.fetchOne(Circle.self, id: circle.id)
                return nil
            } catch let error as ValueDecodingError {
                return error
            }
        }
        let truncated = try #require(try readError(#"UPDATE Circle SET style = '{"stroke":' WHERE id = ?"#))
        #expect(truncated.entity == "Circle" && truncated.id == circle.id.rawValue && truncated.column == "style")
        #expect(truncated.expectedType == "ShapeStyle" && truncated.detail?.hasPrefix("JSON: ") == true)
        #expect(truncated.description.hasPrefix(
            #"cannot read Circle.style of the row with id \#(circle.id.rawValue): the stored text '{"stroke":' is not a valid ShapeStyle (JSON: "#))

        let wrongType = try #require(try readError(#"UPDATE Circle SET style = '{"stroke": 5, "width": 1, "labels": {}}' WHERE id = ?"#))
        #expect(wrongType.detail?.contains("at stroke") == true)
        let missingKey = try #require(try readError(#"UPDATE Circle SET style = '{"stroke": "x", "labels": {}}' WHERE id = ?"#))
        #expect(missingKey.detail == "JSON: no value for the key 'width'")
        let blob = try #require(try readError("UPDATE Circle SET style = x'7b7d' WHERE id = ?"))
        #expect(blob.description.hasSuffix("the stored blob of 2 bytes is not a valid ShapeStyle"))
        // The TEXT column's affinity stores a number as its text: JSON, but not a ShapeStyle.
        let number = try #require(try readError("UPDATE Circle SET style = 12 WHERE id = ?"))
        #expect(number.storedValue == "12".databaseValue && number.detail?.hasPrefix("JSON: expected") == true)
        // JSON null in a required attribute is not a value of the type.
        let canvas = try store.insert(Canvas(title: "c", settings: CanvasSettings()))
        try store.writer.write { db in try db.execute(sql: "UPDATE Canvas SET settings = 'null'") }
        #expect(throws: ValueDecodingError.self) { try store.fetchOne(Canvas.self, id: canvas.id) }
        // A valid value written by raw SQL reads back.
        _ = try readError(#"UPDATE Circle SET style = '{"width": 3, "stroke": "b", "labels": {"k": "v"}}' WHERE id = ?"#)
        #expect(try store.fetchOne(Circle.self, id: circle.id)?.style == ShapeStyle(stroke: "b", width: 3, labels: ["k": "v"]))
    }

    @Test("a results controller reports a change of a Codable value as an update, and bad JSON as a failure")
    func liveResults() async throws {
        let store = try Strata.Store.inMemory(schema: ShapesModel.schema)
        var label = try store.insert(Label(name: "a", text: "t", metadata: ["k": .text("v")]))
        try store.insert(Label(name: "b", text: "t"))
        let controller = try ResultsController(store: store, request: Label.Fetches.byLayer)
        var updates = controller.updates.makeAsyncIterator()
        guard case .reload? = try await updates.next() else {
            Issue.record("the first update is not a reload")
            return
        }
        label.metadata?["k"] = .list([.number(1)])
        #expect(try store.update(label))
        guard case .batch(let batch, let snapshot)? = try await updates.next() else {
            Issue.record("no batch for the changed value")
            return
        }
        #expect(batch.itemUpdates == [ItemPath(section: 0, item: 0)] && batch.itemInserts.isEmpty && batch.itemDeletes.isEmpty)
        #expect(snapshot.sections[0].items[0].metadata == ["k": .list([.number(1)])])
        let id = label.id
        try await store.writer.write { db in
            try db.execute(sql: "UPDATE Label SET metadata = '[' WHERE id = ?", arguments: [id])
        }
        do {
            _ = try await updates.next()
            Issue.record("bad JSON was delivered")
        } catch let error as ValueDecodingError {
            #expect(error.entity == "Label" && error.column == "metadata" && error.id == id.rawValue)
        }
    }

    // MARK: - Abstract entities

    /// Generic code over every entity that extends `Shape`: its properties and typed columns.
    private func names<S: Shape>(_ type: S.Type, onLayerAtLeast layer: Int, in store: Strata.Store) throws -> [String] {
        try store.fetchAll(S.self, where: S.layer >= layer, sortedBy: [S.name.ascending]).map(\.name)
    }

    private func raise<S: Solid>(_ shape: inout S) {
        shape.layer += 1
        shape.fill = .hatched
    }

    @Test("each concrete entity has its own table holding the inherited attributes; no table for abstract ones")
    func tables() throws {
        let store = try Strata.Store.inMemory(schema: ShapesModel.schema)
        let tables = try store.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'strata_%' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        }
        #expect(tables == ["Canvas", "Circle", "Label", "Polygon"])
        let columns = try store.writer.read { db in try db.columns(in: "Polygon").map(\.name) }
        #expect(columns == ["id", "name", "createdAt", "layer", "style", "fill", "points", "canvasID"])
        #expect(ShapesModel.schema.entity(named: "Shape") == nil)
    }

    @Test("generic code reads and writes every entity that extends an abstract one")
    func protocols() throws {
        let store = try Strata.Store.inMemory(schema: ShapesModel.schema)
        let canvas = try store.insert(Canvas(title: "c", settings: CanvasSettings()))
        var circle = try store.insert(Circle(name: "c1", radius: 2, canvasID: canvas.id))
        var polygon = try store.insert(Polygon(name: "p1", points: [ShapePoint(x: 0, y: 0)]))
        try store.insert(Label(name: "l1", layer: 3, text: "hello"))
        #expect(circle.layer == 0 && polygon.layer == 1)   // Polygon redeclares the default
        raise(&circle)
        raise(&polygon)
        try store.update(circle)
        try store.update(polygon)
        #expect(try names(Circle.self, onLayerAtLeast: 1, in: store) == ["c1"])
        #expect(try names(Polygon.self, onLayerAtLeast: 2, in: store) == ["p1"])
        #expect(try names(Label.self, onLayerAtLeast: 3, in: store) == ["l1"])
        let shapes: [any Shape] = [circle, polygon]
        #expect(shapes.map(\.name) == ["c1", "p1"] && shapes.allSatisfy { ($0 as? any Solid)?.fill == .hatched })
        #expect(try store.fetchAll(Circle.Fetches.onLayer(minimum: 1)).map(\.name) == ["c1"])
        // The inherited unique constraint holds per table: a Circle and a Label may share a name.
        try store.insert(Label(name: "c1", text: "same name, other table"))
        #expect(throws: UniqueConstraintError(entity: "Circle", attributes: ["name"])) {
            try store.insert(Circle(name: "c1", radius: 1))
        }
    }

    // MARK: - Migrations

    /// The Shapes schema as an older model had it: `without` attributes removed from every entity.
    private func olderSchema(without removed: Set<String>) -> SchemaDescriptor {
        var schema = ShapesModel.schema
        for index in schema.entities.indices {
            schema.entities[index].attributes.removeAll { removed.contains($0.name) }
        }
        return schema
    }

    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("strata-shapes-\(UUID().uuidString).sqlite").path
    }

    @Test("an attribute added to the abstract base is added to the table of every entity extending it")
    func addingABaseAttribute() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let old = try Strata.Store(schema: olderSchema(without: ["style"]), path: path)
            try old.writer.write { db in
                try db.execute(sql: "INSERT INTO Circle (name, radius) VALUES ('old circle', 1)")
                try db.execute(sql: #"INSERT INTO Polygon (name, points) VALUES ('old polygon', '[{"x":1,"y":2}]')"#)
                try db.execute(sql: "INSERT INTO Label (name, text) VALUES ('old label', 't')")
            }
            #expect(try old.writer.read { db in try db.columns(in: "Label").map(\.name) }.contains("style") == false)
            try old.close()
        }
        let store = try Strata.Store(schema: ShapesModel.schema, path: path)
        defer { try? store.close() }
        for table in ["Circle", "Polygon", "Label"] {
            #expect(try store.writer.read { db in try db.columns(in: table).map(\.name) }.contains("style"))
        }
        #expect(try store.fetchAll(Circle.self).map(\.style) == [nil])
        #expect(try store.fetchAll(Polygon.self).map(\.points) == [[ShapePoint(x: 1, y: 2)]])
        var label = try #require(try store.fetchAll(Label.self).first)
        label.style = ShapeStyle(stroke: "s", width: 1)
        try store.update(label)
        #expect(try store.fetchOne(Label.self, id: label.id)?.style?.stroke == "s")
    }

    @Test("removing a Codable attribute is destructive; adding a required one without a default too")
    func removingAndAddingRequired() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try Strata.Store(schema: ShapesModel.schema, path: path)
            try store.insert(Label(name: "l", text: "t", metadata: ["a": .text("b")]))
            try store.close()
        }
        // Removing `metadata`: refused, then applied with allowDataLoss.
        let withoutMetadata = olderSchema(without: ["metadata"])
        #expect(throws: MigrationError.destructiveChanges([.removedAttribute(entity: "Label", attribute: "metadata")])) {
            try Strata.Store(schema: withoutMetadata, path: path)
        }
        try Strata.Store(schema: withoutMetadata, path: path, options: .init(allowDataLoss: true)).close()
        // Adding it back (optional) is lightweight; the old values are gone.
        do {
            let store = try Strata.Store(schema: ShapesModel.schema, path: path)
            #expect(try store.fetchAll(Label.self).map(\.metadata) == [nil])
            try store.insert(Canvas(title: "c", settings: CanvasSettings(big: 7)))
            try store.close()
        }
        // A new required Codable attribute without default: refused, unless data loss is
        // allowed, when rows get JSON null, which then fails to read as the type.
        let withoutSettings = olderSchema(without: ["settings"])
        try Strata.Store(schema: withoutSettings, path: path, options: .init(allowDataLoss: true)).close()
        #expect(throws: MigrationError.destructiveChanges([.newRequiredAttribute(entity: "Canvas", attribute: "settings")])) {
            try Strata.Store(schema: ShapesModel.schema, path: path)
        }
        let store = try Strata.Store(schema: ShapesModel.schema, path: path, options: .init(allowDataLoss: true))
        #expect(try storedText(store, "Canvas", "settings", id: 1) == "null")
        #expect(throws: ValueDecodingError.self) { try store.fetchAll(Canvas.self) }
        try store.close()
        // A String attribute that becomes Codable<T> changes type: destructive.
        var asText = ShapesModel.schema
        let canvas = try #require(asText.entities.firstIndex { $0.name == "Canvas" })
        let settings = try #require(asText.entities[canvas].attributes.firstIndex { $0.name == "settings" })
        asText.entities[canvas].attributes[settings].type = .string
        try Strata.Store(schema: asText, path: path, options: .init(allowDataLoss: true)).close()
        #expect(throws: MigrationError.destructiveChanges([.changedType(entity: "Canvas", attribute: "settings")])) {
            try Strata.Store(schema: ShapesModel.schema, path: path)
        }
    }
}
