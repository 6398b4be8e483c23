import Foundation
import GRDB
import Testing

@testable import Strata

/// The build of a sectioned index from a fetch (``IndexBuild``, driven by the index's
/// `beginBuild`, `appendFetched` and `finishBuild`), checked against what it is documented to
/// produce: a build forgets every item and starts with the single section or every entity
/// section; each item read in the results' order goes to its section's bucket (numbered in
/// the order the build met the sections), or is hidden; the end of the build creates the
/// keyed sections, orders the sections and hides the items of a key the section type cannot
/// represent. A compact index's build, which places an item met again under an integer or
/// NULL key without building its keys, gives the same index as the general way.
@Suite("Index build, alone")
struct IndexBuildTests {
    typealias Row = (id: Int64, keys: IndexKeys)

    static func keys(_ key: DatabaseValue, _ sort: DatabaseValue = .null) -> IndexKeys {
        IndexKeys(sort: [sort], key: key, keyOrder: key)
    }

    static func keyed(descending: Bool = false, itemDescending: Bool = false) -> SectionedIndex<Int, FullIndexKeys> {
        SectionedIndex(kind: .key(path: ["k"], descending: descending, firstLetter: false), itemDescending: [itemDescending])
    }

    static func entityKind(orphans: Bool) -> ResultsQueryPlan.SectionKind {
        .entity(relationship: ["folder"], entity: "Folder", sort: [SortNode(path: ["name"], descending: false)], predicate: nil, orphans: orphans)
    }

    /// A section object whose section sort value is `order`.
    static func object(_ id: Int64, _ order: DatabaseValue) -> FetchedSection<String> {
        FetchedSection(id: id, value: "folder \(id)", order: [order])
    }

    /// Builds `index` from `rows`, one `appendFetched` each, in the given order; returns what
    /// each append returned and what the end of the build returned, by section.
    @discardableResult
    static func build<Section, Keys>(
        _ index: inout SectionedIndex<Section, Keys>, sectionObjects: [FetchedSection<Section>] = [], _ rows: [Row]
    ) -> (buckets: [Int?], shown: [SectionID: Int]) {
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        let buckets = rows.map { index.appendFetched($0.id, $0.keys, to: &builder) }
        let shown = index.finishBuild(builder)
        return (buckets, Dictionary(shown.map { ($0.section, $0.bucket) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The sections in order, each with its items.
    static func content<Section, Keys>(_ index: SectionedIndex<Section, Keys>) -> [(section: SectionID, items: [Int64])] {
        zip(index.sections.keys, index.sections.values).map { ($0, Array($1.items)) }
    }

    /// Every shown item is where its section's items put it.
    static func checkPlaces<Section, Keys>(
        _ index: SectionedIndex<Section, Keys>, _ context: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        index._checkInvariants()
        for (section, items) in content(index) {
            for (position, id) in items.enumerated() {
                let place = try index.place(of: id)
                #expect(
                    place?.section == section && place?.index == position, "\(context) place of \(id): \(String(describing: place))",
                    sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: - Empty input

    @Test("an empty fetch: no keyed section, no item")
    func emptyKeyedBuild() throws {
        var index = Self.keyed()
        let (buckets, shown) = Self.build(&index, [])
        #expect(buckets.isEmpty && shown.isEmpty)
        #expect(index.sections.isEmpty)
        #expect(index.count == 0 && index.ids.isEmpty)
        try Self.checkPlaces(index)
    }

    @Test("an empty fetch keeps the single section, and every entity section in the section sort's order")
    func emptyBuildKeepsTheSectionsThatAlwaysExist() throws {
        var single = SectionedIndex<NoSection, FullIndexKeys>(kind: .none, itemDescending: [false])
        Self.build(&single, [])
        #expect(Self.content(single).map(\.section) == [.single])
        #expect(single.sections[.single]?.items.isEmpty == true)
        #expect(single.count == 0)

        var entity = SectionedIndex<String, FullIndexKeys>(kind: Self.entityKind(orphans: true), itemDescending: [false])
        // Section objects come in any order.
        Self.build(&entity, sectionObjects: [Self.object(2, "b".databaseValue), Self.object(1, "c".databaseValue), Self.object(3, "a".databaseValue)], [])
        #expect(Self.content(entity).map(\.section) == [.object(3), .object(2), .object(1)], "in the section sort's order")
        #expect(Self.content(entity).allSatisfy { $0.items.isEmpty })
        #expect(entity.sections[.orphans] == nil, "the orphans section exists only while it holds items")
        try Self.checkPlaces(entity)
    }

    @Test("a build forgets every item of the index before it")
    func aBuildStartsOver() throws {
        var index = Self.keyed()
        Self.build(&index, [(1, Self.keys(1.databaseValue)), (2, Self.keys(2.databaseValue))])
        _ = try index.insert(3, Self.keys(9.databaseValue))
        Self.build(&index, [(4, Self.keys(2.databaseValue))])
        #expect(Self.content(index).map(\.section) == [.key(2.databaseValue)])
        #expect(Self.content(index).map(\.items) == [[4]])
        #expect(index.count == 1 && !index.contains(1) && !index.contains(3))
        try Self.checkPlaces(index)

        Self.build(&index, [])
        #expect(index.sections.isEmpty && index.count == 0)
    }

    // MARK: - One section

    @Test("one section: the items in the fetch's order, all in bucket 0")
    func oneSection() throws {
        var index = Self.keyed()
        let rows: [Row] = [
            (5, Self.keys(7.databaseValue, 1.databaseValue)),
            (2, Self.keys(7.databaseValue, 2.databaseValue)),
            (9, Self.keys(7.databaseValue, 3.databaseValue)),
        ]
        let (buckets, shown) = Self.build(&index, rows)
        #expect(buckets == [0, 0, 0])
        #expect(shown == [.key(7.databaseValue): 0])
        #expect(Self.content(index).map(\.section) == [.key(7.databaseValue)])
        #expect(Self.content(index).map(\.items) == [[5, 2, 9]])
        #expect(index.count == 3)
        try Self.checkPlaces(index)

        var single = SectionedIndex<NoSection, FullIndexKeys>(kind: .none, itemDescending: [true])
        let (singleBuckets, singleShown) = Self.build(&single, [(3, Self.keys(.null, 9.databaseValue)), (1, Self.keys(.null, 4.databaseValue))])
        #expect(singleBuckets == [0, 0])
        #expect(singleShown == [.single: 0])
        #expect(Self.content(single).map(\.items) == [[3, 1]])
        try Self.checkPlaces(single)
    }

    // MARK: - Ties

    @Test("tied sort keys stay in id order, and an item inserted later goes among them by id", arguments: [false, true])
    func tiedSortKeys(itemDescending: Bool) throws {
        var index = Self.keyed(itemDescending: itemDescending)
        let x = "x".databaseValue, y = "y".databaseValue
        // The results' order: by the sort key, ties by id (ascending in either direction).
        let tied: [Row] = [1, 3, 5].map { ($0, Self.keys(0.databaseValue, x)) }
        let other: Row = (7, Self.keys(0.databaseValue, y))
        Self.build(&index, itemDescending ? [other] + tied : tied + [other])
        let built = itemDescending ? [7, 1, 3, 5] : [1, 3, 5, 7] as [Int64]
        #expect(Self.content(index).map(\.items) == [built])
        try Self.checkPlaces(index, "built")

        let place = try index.insert(4, Self.keys(0.databaseValue, x))
        #expect(place?.index == (itemDescending ? 3 : 2), "between 3 and 5")
        let placeOfSix = try index.insert(6, Self.keys(0.databaseValue, x))
        #expect(placeOfSix?.index == (itemDescending ? 5 : 4), "between 5 and the item after the ties")
        #expect(Self.content(index).map(\.items) == [itemDescending ? [7, 1, 3, 4, 5, 6] : [1, 3, 4, 5, 6, 7]])
        try Self.checkPlaces(index, "after inserts")
    }

    @Test("entity sections whose section sort values tie are ordered by id")
    func tiedSections() throws {
        var index = SectionedIndex<String, FullIndexKeys>(kind: Self.entityKind(orphans: false), itemDescending: [false])
        let same = "same".databaseValue
        let (buckets, shown) = Self.build(
            &index, sectionObjects: [Self.object(10, same), Self.object(5, same), Self.object(1, "z".databaseValue)],
            [(100, Self.keys(5.databaseValue)), (101, Self.keys(10.databaseValue)), (102, Self.keys(1.databaseValue))])
        #expect(buckets == [0, 1, 2])
        #expect(shown == [.object(5): 0, .object(10): 1, .object(1): 2])
        #expect(Self.content(index).map(\.section) == [.object(5), .object(10), .object(1)])
        #expect(Self.content(index).map(\.items) == [[100], [101], [102]])
        try Self.checkPlaces(index)
    }

    // MARK: - Sections

    @Test("buckets number the sections in the order met; the end of the build orders the sections", arguments: [false, true])
    func sectionsInOrder(descending: Bool) throws {
        var index = Self.keyed(descending: descending)
        let rows: [Row] = [
            (1, Self.keys(2.databaseValue)), (2, Self.keys(2.databaseValue)), (3, Self.keys(1.databaseValue)),
            (4, Self.keys(3.databaseValue)),
        ]
        let (buckets, shown) = Self.build(&index, rows)
        #expect(buckets == [0, 0, 1, 2])
        #expect(shown == [.key(2.databaseValue): 0, .key(1.databaseValue): 1, .key(3.databaseValue): 2])
        let keys: [Int64] = descending ? [3, 2, 1] : [1, 2, 3]
        #expect(Self.content(index).map(\.section) == keys.map { .key($0.databaseValue) })
        #expect(Self.content(index).map(\.items) == (descending ? [[4], [1, 2], [3]] : [[3], [1, 2], [4]]))
        try Self.checkPlaces(index)
    }

    @Test("an item whose section is not shown is hidden: indexed, in no section", arguments: [false, true])
    func hiddenItems(orphans: Bool) throws {
        var index = SectionedIndex<String, FullIndexKeys>(kind: Self.entityKind(orphans: orphans), itemDescending: [false])
        let (buckets, shown) = Self.build(
            &index, sectionObjects: [Self.object(1, "a".databaseValue), Self.object(2, "b".databaseValue)],
            [
                (10, Self.keys(1.databaseValue)),
                (11, Self.keys(3.databaseValue)),  // a section object the section predicate left out
                (13, Self.keys(2.databaseValue)),
                (12, Self.keys(.null)),  // no section object: an orphan
                (14, Self.keys(.null)),
            ])
        #expect(buckets[0] == 0 && buckets[1] == nil && buckets[2] == 1)
        #expect(orphans ? buckets[3] == 2 && buckets[4] == 2 : buckets[3] == nil && buckets[4] == nil)
        #expect(shown == (orphans ? [.object(1): 0, .object(2): 1, .orphans: 2] : [.object(1): 0, .object(2): 1]))
        #expect(Self.content(index).map(\.section) == (orphans ? [.object(1), .object(2), .orphans] : [.object(1), .object(2)]))
        #expect(Self.content(index).map(\.items) == (orphans ? [[10], [13], [12, 14]] : [[10], [13]]))
        #expect(index.count == 5)
        #expect(Set(index.ids) == [10, 11, 12, 13, 14])
        #expect(try index.place(of: 11) == nil)
        if !orphans { #expect(try index.place(of: 12) == nil) }
        try Self.checkPlaces(index)
    }

    @Test("the items of a key the section type cannot represent are hidden at the end of the build")
    func unrepresentableKeyIsHidden() throws {
        var index = Self.keyed()
        let (_, shown) = Self.build(&index, [(1, Self.keys(5.databaseValue)), (2, Self.keys("five".databaseValue))])
        #expect(shown == [.key(5.databaseValue): 0])
        #expect(Self.content(index).map(\.section) == [.key(5.databaseValue)])
        #expect(Self.content(index).map(\.items) == [[1]])
        #expect(index.count == 2 && index.contains(2))
        #expect(try index.place(of: 2) == nil)
        try Self.checkPlaces(index)
    }

    // MARK: - The compact build's shortcut

    /// Builds a compact index from `rows` by the shortcut (``SectionedIndex/appendFetched(from:to:)``).
    static func compactBuild<Section>(
        _ index: inout SectionedIndex<Section, CompactIndexKeys>, sectionObjects: [FetchedSection<Section>] = [], _ rows: [Row]
    ) throws -> [SectionID: Int] {
        var builder = index.beginBuild(sectionObjects: sectionObjects)
        try index.appendFetched(from: { body in for row in rows { try body(row.id, row.keys.key, row.keys.keyOrder) } }, to: &builder)
        let shown = index.finishBuild(builder)
        return Dictionary(shown.map { ($0.section, $0.bucket) }, uniquingKeysWith: { first, _ in first })
    }

    /// Checks that the compact build of `rows` gives the index the general build gives.
    static func checkCompactMatchesFull<Section: Hashable & Sendable>(
        kind: ResultsQueryPlan.SectionKind, sectionObjects: [FetchedSection<Section>], _ rows: [Row], _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var full = SectionedIndex<Section, FullIndexKeys>(kind: kind, itemDescending: [false])
        let (_, fullShown) = Self.build(&full, sectionObjects: sectionObjects, rows)
        var compact = SectionedIndex<Section, CompactIndexKeys>(kind: kind, itemDescending: [false])
        // Two builds in a row: the second must not see the first's resolved keys.
        _ = try Self.compactBuild(&compact, sectionObjects: sectionObjects, rows.reversed().map { ($0.id + 1_000_000, $0.keys) })
        let compactShown = try Self.compactBuild(&compact, sectionObjects: sectionObjects, rows)
        #expect(compactShown == fullShown, "\(context): shown sections and buckets", sourceLocation: sourceLocation)
        let fullContent = Self.content(full), compactContent = Self.content(compact)
        #expect(compactContent.map(\.section) == fullContent.map(\.section), "\(context): sections", sourceLocation: sourceLocation)
        #expect(compactContent.map(\.items) == fullContent.map(\.items), "\(context): items", sourceLocation: sourceLocation)
        #expect(compact.count == full.count, "\(context): count", sourceLocation: sourceLocation)
        #expect(Set(compact.ids) == Set(rows.map(\.id)), "\(context): ids", sourceLocation: sourceLocation)
        for row in rows {
            let expected = try full.place(of: row.id), actual = try compact.place(of: row.id)
            #expect(
                actual?.section == expected?.section && actual?.index == expected?.index, "\(context): place of \(row.id)",
                sourceLocation: sourceLocation)
        }
        try Self.checkPlaces(full, context, sourceLocation: sourceLocation)
        try Self.checkPlaces(compact, context, sourceLocation: sourceLocation)
    }

    @Test("a compact build places items met again under an integer or NULL key as the general build does")
    func compactBuildMatchesTheGeneralBuild() throws {
        // Small, large (past the keys found by offset) and negative integer keys, in order,
        // several items each; ties of the sort key broken by id.
        let keys: [Int64] = [-7, 0, 1, 2, 4_095, 4_096, 70_000, .max]
        var rows: [Row] = []
        var id: Int64 = 1
        for key in keys {
            for sort in [0, 0, 1, 2] as [Int64] {
                rows.append((id, Self.keys(key.databaseValue, sort.databaseValue)))
                id += 1
            }
        }
        let keyed = ResultsQueryPlan.SectionKind.key(path: ["k"], descending: false, firstLetter: false)
        try Self.checkCompactMatchesFull(kind: keyed, sectionObjects: [] as [FetchedSection<Int>], rows, "keyed")
        try Self.checkCompactMatchesFull(kind: keyed, sectionObjects: [] as [FetchedSection<Int>], [], "keyed, empty")

        // Entity sections: shown objects (ids small and large), objects left out (hidden) and
        // orphans, with and without an orphans section.
        let objects: [FetchedSection<String>] = [3, 5_000, 1, 9_000_000].map { Self.object($0, $0.databaseValue) }
        var entityRows: [Row] = []
        let sectionOrder: [DatabaseValue] = [1, 2, 3, 5_000, 6_000, 9_000_000].map(\.databaseValue) + [.null]
        for key in sectionOrder {
            for _ in 0..<3 {
                entityRows.append((id, Self.keys(key, 0.databaseValue)))
                id += 1
            }
        }
        for orphans in [false, true] {
            try Self.checkCompactMatchesFull(kind: Self.entityKind(orphans: orphans), sectionObjects: objects, entityRows, "entity, orphans \(orphans)")
            try Self.checkCompactMatchesFull(
                kind: Self.entityKind(orphans: orphans), sectionObjects: objects, [], "entity, empty, orphans \(orphans)")
        }

        // No sections: every row under the NULL key.
        try Self.checkCompactMatchesFull(
            kind: .none, sectionObjects: [] as [FetchedSection<NoSection>], (1...5).map { ($0, Self.keys(.null, 0.databaseValue)) }, "single")
    }

    @Test("a compact build of first letters goes the general way and gives the same sections")
    func compactFirstLetters() throws {
        let kind = ResultsQueryPlan.SectionKind.key(path: ["title"], descending: false, firstLetter: true)
        let rows: [Row] = [(3, "apple"), (1, "avocado"), (2, "banana"), (4, "blueberry"), (5, "cherry")].map {
            ($0.0, Self.keys($0.1.databaseValue, $0.1.databaseValue))
        }
        try Self.checkCompactMatchesFull(kind: kind, sectionObjects: [] as [FetchedSection<String>], rows, "first letters")
        var index = SectionedIndex<String, FullIndexKeys>(kind: kind, itemDescending: [false])
        Self.build(&index, rows)
        #expect(Self.content(index).map(\.items) == [[3, 1], [2, 4], [5]], "one section per first letter")
    }

    // MARK: - What raw keys resolved to

    @Test("a raw key resolves to nothing until it is set, then to what it was set to; other keys stay unresolved")
    func resolvedKeys() {
        var build = IndexBuild()
        let keys: [Int64] = [0, 1, 4_095, 4_096, -1, .max, .min]
        for key in keys { #expect(build.resolved(key.databaseValue) == nil, "\(key) before any") }
        #expect(build.resolved(.null) == nil)

        for (bucket, key) in keys.enumerated() {
            build.setResolved(IndexBuild.Resolved(section: .key(key.databaseValue), bucket: bucket), for: key)
        }
        for (bucket, key) in keys.enumerated() {
            let resolved = build.resolved(key.databaseValue)
            #expect(resolved?.bucket == bucket && resolved?.section == .key(key.databaseValue), "\(key)")
        }
        // Keys between those set, below and past the ones found by offset, are not resolved.
        for key: Int64 in [2, 100, 4_094, 4_097, -2] { #expect(build.resolved(key.databaseValue) == nil, "\(key) was never set") }
        #expect(build.resolved(.null) == nil, "NULL was never set")
        // Only integer and NULL keys resolve.
        #expect(build.resolved(1.0.databaseValue) == nil && build.resolved("1".databaseValue) == nil)

        // A hidden section is remembered as such (resolved, without a bucket).
        build.setResolvedNull(IndexBuild.Resolved(section: nil, bucket: nil))
        build.setResolved(IndexBuild.Resolved(section: nil, bucket: nil), for: 7)
        #expect(build.resolved(.null) != nil && build.resolved(.null)?.bucket == nil)
        #expect(build.resolved(7.databaseValue) != nil && build.resolved(7.databaseValue)?.bucket == nil)
        // Set again: the last one counts.
        build.setResolved(IndexBuild.Resolved(section: .key(1.databaseValue), bucket: 42), for: 1)
        #expect(build.resolved(1.databaseValue)?.bucket == 42)
    }

    @Test("an item goes the shortcut only under a key resolved to a shown section")
    func appendResolvedRefusesUnresolvedAndHiddenKeys() {
        var build = IndexBuild()
        var keys = CompactIndexKeys()
        #expect(!build.appendResolved(1, rawKey: 5.databaseValue, to: &keys), "not resolved")
        #expect(!build.appendResolved(1, rawKey: .null, to: &keys), "NULL not resolved")
        #expect(!build.appendResolved(1, rawKey: "a".databaseValue, to: &keys), "not an integer")
        build.setResolved(IndexBuild.Resolved(section: nil, bucket: nil), for: 5)
        build.setResolvedNull(IndexBuild.Resolved(section: nil, bucket: nil))
        #expect(!build.appendResolved(1, rawKey: 5.databaseValue, to: &keys), "hidden")
        #expect(!build.appendResolved(1, rawKey: .null, to: &keys), "NULL hidden")
        #expect(keys.count == 0 && !keys.contains(1), "nothing appended")
    }
}
