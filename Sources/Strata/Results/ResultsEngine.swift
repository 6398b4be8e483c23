import Foundation
import GRDB

/// The synchronous state machine behind ``ResultsController``: fetches, applies commits
/// incrementally, and derives snapshots. Not thread-safe; its owner serialises access.
///
/// State: every item that matches the request's predicate (a record with its item, its
/// sort-key values and its section), and the sections in order, each with its item ids in
/// SQL order. Commits re-read only affected rows by id and place them by binary search with
/// ``DatabaseValueOrdering``, which orders exactly as SQLite's `ORDER BY`.
final class ResultsEngine<Item: StrataEntity, Section: Hashable & Sendable> {
    struct Record {
        var item: Item
        var sort: [DatabaseValue]
        /// The raw section key: the key value, or the section object's id (NULL when nil).
        var key: DatabaseValue
        /// The ordering value of the key (enum keys order by declaration).
        var keyOrder: DatabaseValue
        /// The section the item is in; nil when its section is not shown.
        var section: SectionID?
    }

    struct RawSection {
        var id: SectionID
        var value: SectionValue<Section>
        var order: [DatabaseValue]
        var items: [Int64]
    }

    let plan: ResultsQueryPlan
    var options: ResultsOptions<Item> {
        didSet {
            derived.removeAll()
            if case .rows = pending { pending = .sections }
        }
    }
    /// A commit that affects more than `max(refetchMinimum, refetchRatio × count)` items
    /// makes the engine refetch everything instead.
    var refetchMinimum = 64
    var refetchRatio = 0.25

    private(set) var records: [Int64: Record] = [:]
    private(set) var sections: [RawSection] = []
    private var sectionIndex: [SectionID: Int] = [:]
    /// Entity sections: the hidden records (section not shown) by their section object id, so a
    /// section that appears adopts its items without a scan.
    private var hidden: [Int64: Set<Int64>] = [:]
    /// The rows of each section as last derived (post-fetch options applied). While rows are
    /// journaled, they are the section's items in order and are patched in place.
    private var derived: [SectionID: [ResultsRow<Item>]] = [:]
    /// What changed since the last snapshot, as far as the engine can tell.
    private var pending = Pending.all
    /// Above this many changed rows in one commit, changed sections are derived again rather
    /// than patched row by row.
    static var patchLimit: Int { 64 }

    private enum Pending {
        /// Rows are items (no post-fetch filter or comparator), and every row changed since
        /// the last snapshot is journaled with its old and new places.
        case rows([Int64: RowChange])
        /// The sections derived again since the last snapshot are the ones that changed.
        case sections
        /// Anything may have changed (a refetch).
        case all
    }

    /// Whether snapshot rows are the items in fetch order: no post-fetch filter or comparator.
    private var rowsAreItems: Bool { options.filter == nil && options.comparator == nil }
    private let sectionDescending: [Bool]

    init(request: ResultsRequest<Item, Section>, schema: SchemaDescriptor, options: ResultsOptions<Item>) throws {
        plan = try ResultsQueryPlan(request: request, schema: schema)
        self.options = options
        switch plan.sectionKind {
        case .none: sectionDescending = []
        case .key(_, let descending, _): sectionDescending = [descending]
        case .entity(_, _, let sort, _, _): sectionDescending = sort.map(\.descending)
        }
        if case .none = plan.sectionKind {
            guard NoSection() is Section else { throw ResultsError.sectionTypeMismatch(String(describing: Section.self)) }
        }
    }

    // MARK: - Fetching

    /// Replaces the whole state with a fresh fetch.
    func fetchAll(_ db: Database) throws {
        records.removeAll(keepingCapacity: true)
        derived = [:]
        pending = .all
        hidden = [:]
        sections = []
        switch plan.sectionKind {
        case .none:
            sections = [RawSection(id: .single, value: .value(NoSection() as! Section), order: [], items: [])]
        case .key:
            break
        case .entity:
            sections = try fetchSectionObjects(db)
        }
        rebuildSectionIndex()
        // One pass over the rows: records, section buckets, and (without post-fetch options,
        // where rows are items) the snapshot's rows.
        let rowsAreItems = rowsAreItems
        if records.capacity == 0 {
            // The first fetch: room for every row of the table (an upper bound SQLite counts
            // without reading rows), so the index is not copied while it grows, which would
            // raise peak memory by a third. Refetches keep the capacity they had.
            let rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoted(plan.itemEntity))") ?? 0
            records.reserveCapacity(rows)
        }
        var buckets: [SectionID: Int] = [:]
        var bucketItems: [[Int64]] = []
        var bucketRows: [[ResultsRow<Item>]] = []
        var bucketKeys: [(key: DatabaseValue, order: DatabaseValue)] = []
        var last: (id: SectionID, bucket: Int)?
        try forEachRecord(db, ids: nil) { record in
            let id = record.item.id.rawValue
            record.section = sectionID(for: record)
            if let sectionID = record.section {
                let bucket: Int
                if let last, last.id == sectionID {
                    bucket = last.bucket
                } else if let existing = buckets[sectionID] {
                    bucket = existing
                } else {
                    bucket = bucketItems.count
                    buckets[sectionID] = bucket
                    bucketItems.append([])
                    bucketRows.append([])
                    bucketKeys.append((record.key, record.keyOrder))
                }
                last = (sectionID, bucket)
                bucketItems[bucket].append(id)
                if rowsAreItems { bucketRows[bucket].append(.item(record.item)) }
            } else {
                addHidden(id, record)
            }
            records[id] = record
        }
        // Entity and single sections exist already; keyed and orphan sections are created here.
        for (id, bucket) in buckets where sectionIndex[id] == nil {
            let (key, order) = bucketKeys[bucket]
            if let section = try? makeKeySection(id: id, key: key, keyOrder: order) {
                sections.append(section)
            } else {
                // A key the section type cannot represent (an unknown enum raw value written
                // by raw SQL): its items are left out, as incremental updates leave them out.
                buckets[id] = nil
                hide(bucketItems[bucket])
            }
        }
        sections.sort { sectionPrecedes($0, $1) }
        rebuildSectionIndex()
        for (id, bucket) in buckets {
            sections[sectionIndex[id]!].items = bucketItems[bucket]
            if rowsAreItems { derived[id] = bucketRows[bucket] }
        }
    }

    private func addHidden(_ id: Int64, _ record: Record) {
        if case .int64(let key) = record.key.storage { hidden[key, default: []].insert(id) }
    }

    private func removeHidden(_ id: Int64, _ record: Record) {
        if case .int64(let key) = record.key.storage {
            hidden[key]?.remove(id)
            if hidden[key]?.isEmpty == true { hidden[key] = nil }
        }
    }

    /// Takes the items of a section that went out of the shown sections.
    private func hide(_ items: [Int64]) {
        for item in items {
            guard let record = records[item] else { continue }
            records[item]?.section = nil
            addHidden(item, record)
        }
    }

    /// The items matching the predicate (and whose id is in `ids`, when given), in SQL order.
    private func fetchItems(_ db: Database, ids: [Int64]) throws -> [Record] {
        var result: [Record] = []
        result.reserveCapacity(ids.count)
        var start = 0
        while start < ids.count {
            try forEachRecord(db, ids: Array(ids[start..<min(start + 500, ids.count)])) { result.append($0) }
            start += 500
        }
        return result
    }

    /// Calls `body` with each item matching the predicate (and whose id is in `ids`, when
    /// given; at most a few hundred), in SQL order, its section not yet set.
    private func forEachRecord(_ db: Database, ids: [Int64]?, _ body: (inout Record) throws -> Void) throws {
        var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
        var selection = SQL(sql: "\(builder.rootAlias).*")
        for (index, key) in plan.sort.enumerated() {
            selection += ", " + (try builder.orderingExpression(key)) + SQL(sql: " AS \"__strata_s\(index)\"")
        }
        switch plan.sectionKind {
        case .none:
            break
        case .key(let path, let descending, _):
            selection += ", " + (try builder.value(path)) + " AS \"__strata_key\""
            selection += ", " + (try builder.orderingExpression(SortNode(path: path, descending: descending)))
                + " AS \"__strata_keyorder\""
        case .entity(let relationship, _, _, _, _):
            selection += ", " + (try builder.value(relationship + ["id"])) + " AS \"__strata_key\""
        }
        var conditions: [SQL] = []
        if let predicate = plan.predicate { conditions.append(try builder.condition(predicate)) }
        if let ids {
            if ids.isEmpty { return }
            let list = ids.map { SQL(sql: "?", arguments: [$0]) }.joined(separator: ", ")
            conditions.append(SQL(sql: "\(builder.rootAlias).\"id\" IN (") + list + ")")
        }
        let order = try builder.orderingTerms(plan.sort)
        var sql: SQL = "SELECT \(selection) FROM \(builder.fromClause)"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY \(order)"
        let sortCount = plan.sort.count
        let keyColumns: Int
        switch plan.sectionKind {
        case .none: keyColumns = 0
        case .key: keyColumns = 2
        case .entity: keyColumns = 1
        }
        // A cursor, not `Row.fetchAll`: its rows find columns through the statement. The
        // extra columns follow the entity's own, so they are read by index.
        let rows = try Row.fetchCursor(db, SQLRequest(literal: sql))
        while let row = try rows.next() {
            let first = row.count - sortCount - keyColumns
            var sort: [DatabaseValue] = []
            sort.reserveCapacity(sortCount)
            for index in first..<(first + sortCount) { sort.append(DatabaseValueOrdering.sortValue(in: row, at: index)) }
            let key: DatabaseValue = keyColumns > 0 ? row[first + sortCount] : .null
            let keyOrder: DatabaseValue = keyColumns > 1 ? row[first + sortCount + 1] : key
            var record = Record(item: try Item(row: row), sort: sort, key: key, keyOrder: keyOrder, section: nil)
            try body(&record)
        }
    }

    /// The ids of items whose `foreignKeyPath` is one of `ids` (whatever the predicate says).
    private func itemIDs(_ db: Database, where foreignKeyPath: [String], in ids: Set<Int64>) throws -> Set<Int64> {
        var result = Set<Int64>()
        let all = Array(ids)
        var start = 0
        while start < all.count {
            let chunk = all[start..<min(start + 500, all.count)]
            start += 500
            var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: plan.itemEntity)
            let value = try builder.value(foreignKeyPath)
            let list = chunk.map { SQL(sql: "?", arguments: [$0]) }.joined(separator: ", ")
            let sql: SQL = "SELECT \(SQL(sql: builder.rootAlias)).\"id\" FROM \(builder.fromClause) WHERE \(value) IN (" + list + ")"
            result.formUnion(try Int64.fetchAll(db, SQLRequest(literal: sql)))
        }
        return result
    }

    /// The section objects of an entity-sectioned request (those of `ids` when given), in
    /// order, without items.
    private func fetchSectionObjects(_ db: Database, ids: Set<Int64>? = nil) throws -> [RawSection] {
        if let ids, ids.count > 500 {
            let all = Array(ids)
            var result: [RawSection] = []
            var start = 0
            while start < all.count {
                result += try fetchSectionObjects(db, ids: Set(all[start..<min(start + 500, all.count)]))
                start += 500
            }
            return result
        }
        guard case .entity(_, let entity, let sort, let predicate, _) = plan.sectionKind else { return [] }
        guard let type = Section.self as? any FetchableRecord.Type else {
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
        var builder = try SQLQueryBuilder(schema: plan.schema, rootEntity: entity)
        var selection = SQL(sql: "\(builder.rootAlias).*")
        for (index, key) in sort.enumerated() {
            selection += ", " + (try builder.orderingExpression(key)) + SQL(sql: " AS \"__strata_s\(index)\"")
        }
        var condition = predicate
        if let ids {
            if ids.isEmpty { return [] }
            let idCondition = PredicateNode.isIn(.path(["id"]), ids.sorted().map(\.databaseValue))
            condition = predicate.map { .and([$0, idCondition]) } ?? idCondition
        }
        let sql = try builder.select(selection, where: condition, orderBy: sort)
        return try Row.fetchAll(db, SQLRequest(literal: sql)).map { row in
            let value = try Self.decode(type, row: row)
            let id: Int64 = row["id"]
            var order: [DatabaseValue] = []
            let first = row.count - sort.count  // the sort columns follow the entity's own
            for index in first..<row.count { order.append(DatabaseValueOrdering.sortValue(in: row, at: index)) }
            return RawSection(id: .object(id), value: .value(value), order: order, items: [])
        }
    }

    private static func decode<T: FetchableRecord>(_ type: T.Type, row: Row) throws -> Section {
        guard let value = try T(row: row) as? Section else {
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
        return value
    }

    private func makeKeySection(id: SectionID, key: DatabaseValue, keyOrder: DatabaseValue) throws -> RawSection {
        switch id {
        case .orphans:
            return RawSection(id: .orphans, value: .orphans, order: [], items: [])
        case .key(let letter):
            if case .key(_, _, true) = plan.sectionKind {
                guard case .string(let string) = letter.storage, let value = string as? Section else {
                    throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
                }
                return RawSection(id: id, value: .value(value), order: [letter], items: [])
            }
            return RawSection(id: id, value: .value(try Self.sectionValue(key)), order: [keyOrder], items: [])
        default:
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
    }

    private static func sectionValue(_ key: DatabaseValue) throws -> Section {
        guard let type = Section.self as? any DatabaseValueConvertible.Type else {
            throw ResultsError.sectionTypeMismatch(String(describing: Section.self))
        }
        func convert<T: DatabaseValueConvertible>(_ type: T.Type) -> Section? {
            if key.isNull, let none = Optional<T>.none as? Section { return none }
            return T.fromDatabaseValue(key) as? Section
        }
        guard let value = convert(type) else { throw ResultsError.sectionValueUnreadable(key.description) }
        return value
    }

    /// The section an item belongs in; nil when it is not shown.
    private func sectionID(for record: Record) -> SectionID? {
        switch plan.sectionKind {
        case .none:
            return .single
        case .key(_, _, let firstLetter):
            guard firstLetter else { return .key(record.key) }
            guard case .string(let string) = record.key.storage, let first = string.first else {
                return .key("".databaseValue)
            }
            // Canonically equivalent letters ("é", "e\u{301}") are one section, keyed by their
            // precomposed form so that its bytes, which order sections, are unique.
            return .key(String(first).uppercased().precomposedStringWithCanonicalMapping.databaseValue)
        case .entity(_, _, _, _, let orphans):
            guard case .int64(let id) = record.key.storage else { return orphans ? .orphans : nil }
            let section = SectionID.object(id)
            return sectionIndex[section] == nil ? nil : section
        }
    }

    // MARK: - Ordering

    private func itemPrecedes(_ lhs: Record, _ lhsID: Int64, _ rhs: Record, _ rhsID: Int64) -> Bool {
        DatabaseValueOrdering.compare(lhs.sort, id: lhsID, rhs.sort, id: rhsID, descending: plan.itemDescending) < 0
    }

    private func sectionPrecedes(_ lhs: RawSection, _ rhs: RawSection) -> Bool {
        switch (lhs.id, rhs.id) {
        case (.orphans, _): return false
        case (_, .orphans): return true
        case (.object(let a), .object(let b)):
            return DatabaseValueOrdering.compare(lhs.order, id: a, rhs.order, id: b, descending: sectionDescending) < 0
        case (.key(let a), .key(let b)):
            for index in 0..<min(lhs.order.count, rhs.order.count) {
                let order = DatabaseValueOrdering.compare(lhs.order[index], rhs.order[index])
                if order != 0 { return sectionDescending.first == true ? order > 0 : order < 0 }
            }
            let order = DatabaseValueOrdering.compare(a, b)
            return sectionDescending.first == true ? order > 0 : order < 0
        default:
            return false
        }
    }

    /// The position of `id` (with `record`'s sort values) in `items`, or where it belongs.
    private func insertionIndex(of id: Int64, _ record: Record, in items: [Int64]) -> Int {
        var low = 0
        var high = items.count
        while low < high {
            let mid = (low + high) / 2
            let other = items[mid]
            if itemPrecedes(records[other]!, other, record, id) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func sectionInsertionIndex(of section: RawSection) -> Int {
        var low = 0
        var high = sections.count
        while low < high {
            let mid = (low + high) / 2
            if sectionPrecedes(sections[mid], section) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func rebuildSectionIndex() {
        sectionIndex = [:]
        for (index, section) in sections.enumerated() { sectionIndex[section.id] = index }
    }

    // MARK: - Incremental maintenance

    /// Brings the state up to date with one commit (or several merged). Returns false when
    /// the commit cannot have changed the results.
    @discardableResult
    func apply(_ changes: CommittedChanges, _ db: Database) throws -> Bool {
        // Changes announced without row detail (another process's writes) to a table the
        // results read: refetch; the batch is then the identity difference.
        if !changes.invalidatedTables.isDisjoint(with: plan.readTables) {
            try fetchAll(db)
            return true
        }
        // A journal describes one step from the last snapshot.
        if case .rows(let journal) = pending, !journal.isEmpty { pending = .all }
        if !plan.refetchTables.isDisjoint(with: changes.tables.keys.filter { !changes[$0].isEmpty }) {
            try fetchAll(db)
            return true
        }
        var relevant = false
        // 1. Section objects.
        if case .entity = plan.sectionKind,
            !plan.sectionTables.isDisjoint(with: changes.tables.keys.filter { !changes[$0].isEmpty })
        {
            relevant = true
            if plan.sectionsDependOnOwnRowOnly, case .entity(_, let entity, _, _, _) = plan.sectionKind {
                try updateSections(db, ids: changes[entity].all)
            } else {
                try refreshSections(db)
            }
        }
        // 2. Affected items.
        let own = changes[plan.itemEntity]
        var affected = own.inserted.union(own.updated)
        for dependency in plan.dependencies {
            let table = changes[dependency.table]
            if table.isEmpty { continue }
            var ids = table.inserted.union(table.deleted)
            if let columns = dependency.columns {
                if !columns.isDisjoint(with: table.updatedColumns) { ids.formUnion(table.updated) }
            } else {
                ids.formUnion(table.updated)
            }
            if ids.isEmpty { continue }
            affected.formUnion(try itemIDs(db, where: dependency.foreignKeyPath, in: ids))
        }
        if affected.isEmpty && own.deleted.isEmpty { return relevant }
        if affected.count + own.deleted.count > max(refetchMinimum, Int(Double(records.count) * refetchRatio)) {
            try fetchAll(db)
            return true
        }
        // 3. Remove every affected or deleted item, then insert the re-read ones; journal
        // their places before and after.
        let fetched = try fetchItems(db, ids: Array(affected))
        let gone = affected.union(own.deleted)
        guard case .rows(var journal) = pending else {
            for id in gone { remove(id, patch: false) }
            for record in fetched { insert(record, patch: false) }
            return true
        }
        pending = .all  // while the journal is out, so that it stays uniquely referenced
        let patch = gone.count <= Self.patchLimit
        for id in gone {
            if let place = place(of: id) { journal[id] = RowChange(old: place) }
        }
        for id in gone { remove(id, patch: patch) }
        for record in fetched { insert(record, patch: patch) }
        for record in fetched {
            let id = record.item.id.rawValue
            if let place = place(of: id) { journal[id, default: RowChange()].new = place }
        }
        pending = .rows(journal)
        return true
    }

    /// Where the item `id` is shown: its section and its index there.
    private func place(of id: Int64) -> RowChange.Place? {
        guard let record = records[id], let sectionID = record.section, let s = sectionIndex[sectionID] else {
            return nil
        }
        return RowChange.Place(section: sectionID, index: insertionIndex(of: id, record, in: sections[s].items))
    }

    private func remove(_ id: Int64, patch: Bool) {
        guard let record = records[id] else { return }
        defer { records[id] = nil }
        guard let sectionID = record.section, let s = sectionIndex[sectionID] else {
            removeHidden(id, record)
            return
        }
        let index = insertionIndex(of: id, record, in: sections[s].items)
        precondition(index < sections[s].items.count && sections[s].items[index] == id, "item \(id) not where expected")
        sections[s].items.remove(at: index)
        if patch, derived[sectionID] != nil { derived[sectionID]!.remove(at: index) } else { derived[sectionID] = nil }
        if sections[s].items.isEmpty, isTransient(sectionID) {
            sections.remove(at: s)
            derived[sectionID] = nil
            rebuildSectionIndex()
        }
    }

    private func insert(_ fetched: Record, patch: Bool) {
        var record = fetched
        let id = record.item.id.rawValue
        record.section = sectionID(for: record)
        records[id] = record
        guard let sectionID = record.section else {
            addHidden(id, record)
            return
        }
        if sectionIndex[sectionID] == nil {
            guard let section = try? makeKeySection(id: sectionID, key: record.key, keyOrder: record.keyOrder) else {
                hide([id])  // a key the section type cannot represent: left out
                return
            }
            sections.insert(section, at: sectionInsertionIndex(of: section))
            rebuildSectionIndex()
        }
        let s = sectionIndex[sectionID]!
        let index = insertionIndex(of: id, record, in: sections[s].items)
        sections[s].items.insert(id, at: index)
        if patch, derived[sectionID] != nil {
            derived[sectionID]!.insert(.item(record.item), at: index)
        } else {
            derived[sectionID] = nil
        }
    }

    /// Keyed and orphan sections exist only while they hold items.
    private func isTransient(_ id: SectionID) -> Bool {
        switch id {
        case .key, .orphans: true
        case .single, .object: false
        }
    }

    /// Re-reads the section objects of `ids` only, and places them by binary search; moves
    /// items in and out of sections that appeared or went.
    private func updateSections(_ db: Database, ids: Set<Int64>) throws {
        var fresh: [SectionID: RawSection] = [:]
        for section in try fetchSectionObjects(db, ids: ids) { fresh[section.id] = section }
        var appeared: [Int64] = []
        for id in ids.sorted() {
            let sectionID = SectionID.object(id)
            var items: [Int64] = []
            let existed = sectionIndex[sectionID] != nil
            if let index = sectionIndex[sectionID] {
                let old = sections.remove(at: index)
                rebuildSectionIndex()
                items = old.items
                if fresh[sectionID] == nil {
                    derived[sectionID] = nil
                    hide(old.items)
                    continue
                }
                // Its rows stay; its value, read afresh, goes into the next snapshot.
            }
            guard var section = fresh[sectionID] else { continue }
            if !existed { appeared.append(id) }
            section.items = items
            sections.insert(section, at: sectionInsertionIndex(of: section))
            rebuildSectionIndex()
        }
        adoptHiddenItems(of: appeared)
    }

    /// Moves the hidden items of sections that appeared into them.
    private func adoptHiddenItems(of appeared: [Int64]) {
        for key in appeared {
            guard let ids = hidden.removeValue(forKey: key) else { continue }
            let sectionID = SectionID.object(key)
            guard let s = sectionIndex[sectionID] else { continue }
            for id in ids { records[id]!.section = sectionID }
            sections[s].items = (sections[s].items + ids).sorted { itemPrecedes(records[$0]!, $0, records[$1]!, $1) }
            derived[sectionID] = nil
        }
    }

    /// Re-reads the section objects; moves items in and out of sections that appeared or went.
    private func refreshSections(_ db: Database) throws {
        let fresh = try fetchSectionObjects(db)
        var old: [SectionID: RawSection] = [:]
        for section in sections { old[section.id] = section }
        let orphans = old[.orphans]
        var appeared: [Int64] = []
        var next: [RawSection] = []
        next.reserveCapacity(fresh.count + 1)
        for var section in fresh {
            if let previous = old.removeValue(forKey: section.id) {
                section.items = previous.items
            } else if case .object(let key) = section.id {
                appeared.append(key)
            }
            next.append(section)
        }
        old[.orphans] = nil
        if let orphans { next.append(orphans) }
        sections = next
        rebuildSectionIndex()
        // Items of sections that went are no longer shown.
        for (id, gone) in old {
            derived[id] = nil
            hide(gone.items)
        }
        // Items of sections that appeared come in (kept in `records` while hidden).
        adoptHiddenItems(of: appeared)
    }

    // MARK: - Snapshots

    /// The current results, with the post-fetch options applied.
    func snapshot() -> ResultsSnapshot<Item, Section> { snapshotAndChanges().snapshot }

    /// What changed between two snapshots, as far as the engine knows.
    enum Changes {
        /// Every changed row, with its places (see ``ChangeBatch/init(from:to:rowChanges:)``).
        case rows([RowChange])
        /// The sections whose rows may differ (derived again); any section's value may differ.
        case sections(Set<SectionID>)
        /// Anything may differ (a refetch).
        case all
    }

    /// The current results, and what changed since the previous call.
    func snapshotAndChanges() -> (snapshot: ResultsSnapshot<Item, Section>, changes: Changes) {
        var changed = Set<SectionID>()
        var result: [ResultsSection<Item, Section>] = []
        result.reserveCapacity(sections.count)
        for raw in sections {
            let rows: [ResultsRow<Item>]
            if let cached = derived[raw.id] {
                rows = cached
            } else {
                rows = derive(raw)
                derived[raw.id] = rows
                changed.insert(raw.id)
            }
            if rows.isEmpty && isTransient(raw.id) { continue }
            result.append(ResultsSection(id: raw.id, value: raw.value, rows: rows))
        }
        let changes: Changes
        switch pending {
        case .rows(let journal):
            changes = .rows(Array(journal.values))
        case .sections:
            changes = .sections(changed)
        case .all:
            changes = .all
        }
        pending = rowsAreItems ? .rows([:]) : .sections
        return (ResultsSnapshot(sections: result), changes)
    }

    private func derive(_ raw: RawSection) -> [ResultsRow<Item>] {
        var shown: [Item] = []
        var rejected: [Item] = []
        shown.reserveCapacity(raw.items.count)
        for id in raw.items {
            let item = records[id]!.item
            if let filter = options.filter, !filter(item) { rejected.append(item) } else { shown.append(item) }
        }
        if let comparator = options.comparator {
            // Stable: ties keep the fetch order.
            shown = shown.enumerated().sorted { a, b in
                if comparator(a.element, b.element) { return true }
                if comparator(b.element, a.element) { return false }
                return a.offset < b.offset
            }.map(\.element)
        }
        var rows = shown.map { ResultsRow.item($0) }
        if options.groupFilteredItems && !rejected.isEmpty { rows.append(.group(rejected)) }
        return rows
    }

    // MARK: - Invariants

    /// Checks the internal state (debug builds only): sections in order and indexed, items
    /// in order, every shown record in exactly its section, no hidden record in a section.
    func _checkInvariants() {
        #if DEBUG
        for (index, section) in sections.enumerated() {
            precondition(sectionIndex[section.id] == index, "section index out of date")
            if index > 0 { precondition(sectionPrecedes(sections[index - 1], section), "sections out of order") }
            if isTransient(section.id) { precondition(!section.items.isEmpty, "empty transient section") }
            for (position, id) in section.items.enumerated() {
                guard let record = records[id] else { preconditionFailure("item \(id) has no record") }
                precondition(record.section == section.id, "item \(id) in the wrong section")
                if position > 0 {
                    let previous = section.items[position - 1]
                    precondition(itemPrecedes(records[previous]!, previous, record, id), "items out of order")
                }
            }
        }
        let shown = sections.reduce(0) { $0 + $1.items.count }
        precondition(shown == records.values.filter { $0.section != nil }.count, "shown records not in sections")
        precondition(sectionIndex.count == sections.count, "section index size")
        var expectedHidden: [Int64: Set<Int64>] = [:]
        for (id, record) in records where record.section == nil {
            if case .int64(let key) = record.key.storage { expectedHidden[key, default: []].insert(id) }
        }
        precondition(hidden == expectedHidden, "hidden index out of date")
        if rowsAreItems {
            for section in sections {
                guard let rows = derived[section.id] else { continue }
                precondition(rows.map { $0.item?.id.rawValue } == section.items, "derived rows out of date")
            }
        }
        #endif
    }
}
