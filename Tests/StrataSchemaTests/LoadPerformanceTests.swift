import Foundation
import Testing

@testable import StrataSchema

/// A model of `entityCount` entities with ten attributes each, a chain of one-to-many
/// relationships, a many-to-many, an index, and fetches with predicates and sections.
func generatedModel(entityCount: Int) -> String {
    var yaml = "version: 1\nenums:\n  Level: [low, normal, high]\nentities:\n"
    for i in 0..<entityCount {
        let next = (i + 1) % entityCount
        let previous = (i + entityCount - 1) % entityCount
        yaml += """
              E\(i):
                doc: Entity number \(i).
                attributes:
                  name: String
                  title: { type: String, optional: true }
                  count: { type: Int, default: 0, indexed: true }
                  small: { type: Int16, default: 1 }
                  score: { type: Double, default: 0.5 }
                  flag: { type: Bool, default: false }
                  createdAt: { type: Date, default: now }
                  key: { type: UUID, default: uuid }
                  level: { type: Level, default: normal }
                  link: { type: URL, optional: true }
                relationships:
                  parent: { to: E\(next), inverse: children }
                  children: { to: E\(previous), many: true, inverse: parent, deleteRule: cascade }
                  peers: { to: E\(i), many: true, inverse: peers }
                unique: [[name]]
                indexes: [[parent, createdAt]]
                fetches:
                  recent: { where: "flag == false AND count > $min OR parent.name BEGINSWITH[c] $prefix", sort: [-createdAt, parent.name] }
                  tagged: { where: "ANY peers.level IN {'low', 'high'} AND children.@count > 2", sort: [name] }
                  byParent: { sections: { entity: parent, sort: [name] }, sort: [-count, name] }
                  byLetter: { sections: { key: name, by: firstLetter }, sort: [name] }

            """
    }
    return yaml
}

@Suite("Load performance")
struct LoadPerformanceTests {
    /// Prints how long a 200-entity model takes to load and validate; asserts correctness only.
    @Test func twoHundredEntities() throws {
        let yaml = generatedModel(entityCount: 200)
        let file = ModelFile(path: "big.yaml", text: yaml)
        _ = SchemaPipeline.load(files: [file])  // warm-up
        let clock = ContinuousClock()
        var result: SchemaLoadResult?
        let runs = 5
        let elapsed = clock.measure {
            for _ in 0..<runs { result = SchemaPipeline.load(files: [file]) }
        }
        let loaded = try #require(result)
        #expect(loaded.diagnostics == [])
        let schema = try #require(loaded.schema)
        #expect(schema.entities.count == 200)
        #expect(schema.entities.allSatisfy { $0.attributes.count == 10 && $0.relationships.count == 3 })
        let lines = yaml.split(separator: "\n").count
        print("strata-schema load+validate: 200 entities × 10 attributes, \(lines) lines, \(yaml.utf8.count) bytes: \(elapsed / runs) per load")
    }
}
