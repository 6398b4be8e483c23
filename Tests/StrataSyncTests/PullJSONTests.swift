import Foundation
@testable import StrataSync
import StrataTestSupport
import Testing

/// A relay's columnar pull answer, written and read by hand (PullBatch+JSON.swift): the text
/// must be the JSON of the same ``SyncPullResult`` as Foundation's `Codable` reads it, and the
/// reader must make the same batch as decoding with `JSONDecoder` does, or hand the text over.
@Suite("Pull answers as JSON")
struct PullJSONTests {
    /// Wire texts at the edges of JSON strings.
    static let texts: [String] = [
        "", "plain", "say \"hi\"", "a/b\\c", "\u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}\u{7F}", "é \u{2028} 😀 𝄞", "-12", "3.5e-7",
        "2026-12-03T10:00:00.000Z", "{\"json\": [1, null]}", String(repeating: "long ", count: 200), "null", "[]",
    ]

    /// A batch as the PostgreSQL server reads one (values as the store keeps them), random.
    static func serverBatch(_ random: inout SeededGenerator) -> PullBatch {
        var tables: [PullBatch.Objects] = []
        for number in 0..<Int.random(in: 0...3, using: &random) {
            let width = Int.random(in: 0...4, using: &random)
            var objects = PullBatch.Objects(table: "T\(number) \"q\"", columns: (0..<width).map { "c\($0)/\\" })
            objects.types = (0..<width).map { _ in [.string, .int, .double, .uuid, .bool].randomElement(using: &random)! }
            for _ in 0..<Int.random(in: 0...20, using: &random) {
                let id = UUID()
                if Int.random(in: 0..<5, using: &random) == 0 {
                    objects.appendDeleted(id)
                    continue
                }
                for column in 0..<width {
                    let value: StoredValue
                    switch (objects.types[column], Int.random(in: 0..<6, using: &random)) {
                    case (_, 0): value = .null
                    case (.int, _): value = .integer(Int64.random(in: Int64.min...Int64.max, using: &random))
                    case (.bool, _): value = .integer(Int64.random(in: 0...1, using: &random))
                    case (.double, _): value = .real(Double.random(in: -1e300...1e300, using: &random))
                    case (.uuid, _): value = .blob(withUnsafeBytes(of: UUID().uuid) { Data($0) })
                    default: value = .text(texts.randomElement(using: &random)!)
                    }
                    objects.values.append(value)
                }
                objects.appendRow(id)
            }
            tables.append(objects)
        }
        var links: [SyncChange] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            links.append(SyncChange(kind: Bool.random(using: &random) ? .link : .unlink, table: "J", link: ["a": UUID(), "b": UUID()]))
        }
        return PullBatch(
            objects: tables, links: links, cursor: Int64.random(in: 0...Int64.max, using: &random), hasMore: Bool.random(using: &random))
    }

    @Test(arguments: 0..<40)
    func theTextIsTheJSONOfTheSameAnswer(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let batch = Self.serverBatch(&random)
        let expected = batch.columnarResult
        let text = Data(try batch.columnarJSON())
        // Any JSON client reads the answer the OpenAPI document describes.
        let decoded = try JSONDecoder().decode(SyncPullResult.self, from: text)
        #expect(decoded == expected, "seed \(seed)")
        // The device reads it by hand as the decoded answer would be read.
        let read = try #require(PullBatch(columnarJSON: text), "seed \(seed)")
        #expect(read.columnarResult == expected, "seed \(seed)")
        #expect(read.changes == PullBatch(expected).changes, "seed \(seed)")
        // And reads Foundation's text of it the same (another relay's, or an older one's):
        // its members come in any order (`rows` before `columns`, say).
        let foundation = try JSONEncoder().encode(expected)
        let readFoundation = try #require(PullBatch(columnarJSON: foundation), "seed \(seed)")
        #expect(readFoundation.columnarResult == expected, "seed \(seed)")
    }

    @Test func rowsOfAnotherWidthAndUnknownMembersAreReadAsDecodingReadsThem() throws {
        let a = UUID(), b = UUID(), c = UUID()
        let text = """
             { "later": {"x": [1, 2.5e3, true, null, "s"]}, "cursor" : 7 ,"hasMore":false, "changes": [],
               "objects": [ {"table": "T", "columns": ["x", "y"], "extra": -1, "ids": ["\(a.uuidString)", "\(b.uuidString.lowercased())", "\(c)"],
                 "rows": [["1"], null, ["\\u00e9\\ud83d\\ude00", null, "ignored"], ["no id"]]} ] }
            """
        let read = try #require(PullBatch(columnarJSON: Data(text.utf8)))
        let decoded = try JSONDecoder().decode(SyncPullResult.self, from: Data(text.utf8))
        #expect(read.changes == PullBatch(decoded).changes)
        #expect(read.changes == [
            SyncChange(kind: .insert, table: "T", id: a, values: ["x": "1"]),
            SyncChange(kind: .delete, table: "T", id: b),
            SyncChange(kind: .insert, table: "T", id: c, values: ["x": "é😀", "y": nil]),
        ])
        #expect(read.cursor == 7 && !read.hasMore)
    }

    @Test func whatTheReaderDoesNotTakeGoesToJSONDecoder() {
        let id = UUID()
        let refused = [
            // Not JSON, or not the answer.
            "{\"cursor\":1,\"hasMore\":false,\"changes\":[],\"objects\":[}",
            "{\"cursor\":1.5,\"hasMore\":false,\"changes\":[],\"objects\":[]}",
            "{\"cursor\":1,\"hasMore\":false,\"changes\":[]}",
            "{\"cursor\":1,\"hasMore\":false,\"changes\":[],\"objects\":[]} trailing",
            "{\"cursor\":1,\"hasMore\":false,\"changes\":[],\"objects\":[{\"table\":\"T\",\"columns\":[\"x\"],\"ids\":[\"not an id\"],\"rows\":[]}]}",
            "{\"cursor\":1,\"hasMore\":false,\"changes\":[],\"objects\":[{\"table\":\"T\",\"columns\":[\"x\"],\"ids\":[\"\(id)\"]}]}",
            "{\"cursor\":1,\"hasMore\":false,\"changes\":[],\"objects\":[{\"table\":\"T\",\"columns\":[\"x\"],\"ids\":[],\"rows\":[[\"a\u{1}\"]]}]}",
        ]
        for text in refused { #expect(PullBatch(columnarJSON: Data(text.utf8)) == nil, "\(text)") }
        // Text that is not UTF-8.
        var bytes = Array("{\"cursor\":1,\"hasMore\":false,\"changes\":[],\"objects\":[{\"table\":\"T\",\"columns\":[\"x\"],\"ids\":[],\"rows\":[[\"".utf8)
        bytes += [0xC3, 0x28] + Array("\"]]}]}".utf8)
        #expect(PullBatch(columnarJSON: Data(bytes)) == nil)
    }
}
