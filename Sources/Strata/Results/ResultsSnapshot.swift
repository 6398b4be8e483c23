import Foundation
import GRDB

/// The state of sectioned results at one moment: sections in order, each with its rows.
///
/// A snapshot is an immutable value. A results controller delivers a new snapshot with every
/// ``ChangeBatch``; a list's data source should read the snapshot it was last given, so that
/// its counts always agree with the batch being applied.
///
/// ```swift
/// let snapshot = controller.snapshot
/// for section in snapshot.sections {
///     print(section.value.object?.name ?? "No notebook", section.rows.count)
/// }
/// let first = snapshot[ItemPath(section: 0, item: 0)]
/// ```
public struct ResultsSnapshot<Item: ResultsItem, Section: Hashable & Sendable>:
    Hashable, Sendable {
    /// The sections, in display order.
    public let sections: [ResultsSection<Item, Section>]

    /// A snapshot of `sections`.
    public init(sections: [ResultsSection<Item, Section>]) {
        self.sections = sections
    }

    /// A snapshot without sections.
    public static var empty: ResultsSnapshot { ResultsSnapshot(sections: []) }

    /// The number of sections.
    public var numberOfSections: Int { sections.count }

    /// The number of rows of the section at `section`, the group row included.
    public func numberOfRows(inSection section: Int) -> Int { sections[section].rows.count }

    /// The row at `path`.
    public subscript(path: ItemPath) -> ResultsRow<Item> { sections[path.section].rows[path.item] }

    /// Every item shown as a row, in display order (items inside group rows excluded).
    public var items: [Item] { sections.flatMap(\.items) }

    /// The path of the row that shows the item identified by `id`, or nil. Linear time;
    /// loads nothing in a batched snapshot.
    public func path(of id: Item.ID) -> ItemPath? {
        let rowID = (id as? any RawRepresentable)?.rawValue as? Int64
        for (s, section) in sections.enumerated() {
            if let ids = section.rows.batchedIDs {
                if let rowID, let r = ids.firstIndex(of: rowID) { return ItemPath(section: s, item: r) }
                continue
            }
            if let r = section.rows.firstIndex(where: { $0.item?.objectID == id }) { return ItemPath(section: s, item: r) }
        }
        return nil
    }

    /// Whether the row at `path` may show another value at `newPath` of `new` (the rows are
    /// of the same item): compares the values, or, between batched snapshots, asks which
    /// items changed in between, without loading them.
    func rowDiffers(at path: ItemPath, from new: ResultsSnapshot, at newPath: ItemPath) -> Bool {
        let oldRows = sections[path.section].rows
        let newRows = new.sections[newPath.section].rows
        if let ids = oldRows.batchedIDs, let oldPages = oldRows.batchedPages, let newPages = newRows.batchedPages {
            return oldPages.valueMayDiffer(ids[path.item], in: newPages)
        }
        let before = oldRows[path.item], after = newRows[newPath.item]
        return before != after || !sameTextBytes(before, after)
    }

    /// The index of the section identified by `id`, or nil. Linear time.
    public func index(ofSection id: SectionID) -> Int? { sections.firstIndex { $0.id == id } }

    /// The number of rows of every section, in order.
    public var rowCounts: [Int] { sections.map(\.rows.count) }
}

// MARK: - Windows

extension ResultsSnapshot {
    /// The rows `offset..<offset + limit` in display order, in their sections; sections
    /// without a row in the window are left out (see ``ResultsRequest/limit(_:offset:)``).
    func window(limit: Int?, offset: Int) -> ResultsSnapshot {
        var skip = offset
        var remaining = limit ?? .max
        var result: [ResultsSection<Item, Section>] = []
        for section in sections where remaining > 0 {
            let count = section.rows.count
            if skip >= count {
                skip -= count
                continue
            }
            let end = count - skip > remaining ? skip + remaining : count
            result.append(ResultsSection(id: section.id, value: section.value, rows: section.rows.slice(skip..<end)))
            remaining -= end - skip
            skip = 0
        }
        return ResultsSnapshot(sections: result)
    }
}

// MARK: - Description

extension ResultsSnapshot: CustomStringConvertible {
    /// One line per section: its value, then its rows as item ids, the group row in braces.
    ///
    /// ```
    /// Notebook(name: "Work", …): [3, 1, {4, 7}]
    /// orphans: []
    /// ```
    public var description: String {
        sections.map { section in
            let title: String
            switch section.value {
            case .value(let value): title = "\(value)"
            case .orphans: title = "orphans"
            }
            let rows = section.rows.map { row -> String in
                switch row {
                case .item(let item): "\(item.objectID)"
                case .group(let items): "{" + items.map { "\($0.objectID)" }.joined(separator: ", ") + "}"
                }
            }
            return "\(title): [\(rows.joined(separator: ", "))]"
        }.joined(separator: "\n")
    }
}

// MARK: - Sections

/// One section of a ``ResultsSnapshot``: its identity, its value and its rows.
public struct ResultsSection<Item: ResultsItem, Section: Hashable & Sendable>: Hashable,
    Sendable {
    /// The section's identity, stable across snapshots; batches match sections by it.
    public let id: SectionID
    /// What the section stands for: a key value, a section object, or the orphans.
    public let value: SectionValue<Section>
    /// The rows, in display order. When filtered items are grouped, the group row is last.
    public let rows: ResultsRows<Item>

    /// A section.
    public init(id: SectionID, value: SectionValue<Section>, rows: [ResultsRow<Item>]) {
        self.id = id
        self.value = value
        self.rows = ResultsRows(rows)
    }

    /// A section of `rows` (eager or batched).
    public init(id: SectionID, value: SectionValue<Section>, rows: ResultsRows<Item>) {
        self.id = id
        self.value = value
        self.rows = rows
    }

    /// The items shown as rows (the group row's items excluded).
    public var items: [Item] { rows.compactMap(\.item) }

    /// The group row's items (items of this section that the post-fetch filter rejected), or
    /// an empty array when the section has no group row.
    public var groupedItems: [Item] {
        if case .group(let items)? = rows.last { return items }
        return []
    }
}

/// The identity of a section: what a batch uses to tell whether a section is the "same"
/// section in two snapshots.
public enum SectionID: Hashable, Sendable, CustomStringConvertible {
    /// The one section of a request without sections.
    case single
    /// A section of a keyed request: the key value (the first letter for `firstLetter`).
    case key(DatabaseValue)
    /// A section of an entity-sectioned request: the section object's row id.
    case object(Int64)
    /// The trailing section of items whose section relationship is nil.
    case orphans

    /// The identity of the keyed section whose key is `key`, stored the way the store
    /// stores it (an enumeration by its raw value, a `Decimal` as text, a `Date` as UTC text).
    ///
    /// ```swift
    /// let index = snapshot.index(ofSection: SectionID(key: Priority.high))
    /// ```
    public init(key: some DatabaseValueConvertible) {
        self = .key(key.databaseValue)
    }

    /// The key of a keyed section, read as `type`; nil for other sections, or when the key
    /// is not a value of `type`.
    ///
    /// ```swift
    /// if let priority = section.id.key(as: Priority.self) { … }
    /// ```
    public func key<Key: DatabaseValueConvertible>(as type: Key.Type) -> Key? {
        guard case .key(let value) = self else { return nil }
        return Key.fromDatabaseValue(value)
    }

    /// A description for test output: `single`, `key(x)`, `object(3)`, `orphans`.
    public var description: String {
        switch self {
        case .single: "single"
        case .key(let value): "key(\(value))"
        case .object(let id): "object(\(id))"
        case .orphans: "orphans"
        }
    }
}

/// What a section stands for: read ``key`` for a keyed section, ``object`` for an entity
/// section.
///
/// ```swift
/// for section in snapshot.sections {
///     print(section.value, section.items.count)        // "starter 2", "Work 3", "orphans 1"
///     if let course = section.value.key { … }          // keyed: sections: { key: course }
///     if let notebook = section.value.object { … }     // entity: sections: { entity: notebook }
/// }
/// ```
public enum SectionValue<Section: Hashable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// A key value (keyed sections), a section object (entity sections), or ``NoSection``.
    case value(Section)
    /// The trailing section of items whose section relationship is nil (`orphans: true`).
    case orphans

    /// The section object of an entity section (the same value as ``key``); nil for the
    /// orphans section.
    public var object: Section? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// The key of a keyed section: the course of `sections: { key: course }`, the first
    /// letter of `by: firstLetter` (the same value as ``object``, named for keyed sections).
    /// Nil for the orphans section, which only entity sections have.
    public var key: Section? { object }

    /// The key or section object as it prints itself (`starter`, not `value(starter)`), or
    /// `orphans`.
    public var description: String {
        switch self {
        case .value(let value): String(describing: value)
        case .orphans: "orphans"
        }
    }
}

// MARK: - Rows

/// One row of a section: an item, or the group row that holds the section's filtered-out
/// items (see ``ResultsController/groupFilteredItems``).
public enum ResultsRow<Item: ResultsItem>: Hashable, Sendable {
    /// An item.
    case item(Item)
    /// The items of the section that the post-fetch filter rejected, in fetch order.
    case group([Item])

    /// The item of an item row; nil for a group row.
    public var item: Item? {
        if case .item(let item) = self { return item }
        return nil
    }

    /// True for the group row.
    public var isGroup: Bool {
        if case .group = self { return true }
        return false
    }
}

/// The identity of a row inside a snapshot: an item's id, or the group row of a section.
///
/// Change batches match rows by it: an item is the same row in two snapshots when its
/// ``ResultsItem/objectID`` is; the group row of a section (see
/// ``ResultsOptions/groupFilteredItems``) is the same row as long as its section is, so a
/// batch moves or updates it like an item. Use it as the identifier of a diffable data
/// source's rows.
///
/// ```swift
/// let ids = snapshot.sections[0].rows.map { $0.id(in: snapshot.sections[0].id) }
/// ```
public enum ResultsRowID<ItemID: Hashable & Sendable>: Hashable, Sendable {
    /// The row of the item with this id.
    case item(ItemID)
    /// The group row of the section with this id.
    case group(SectionID)
}

extension ResultsRow {
    /// The row's identity in the section `section` (see ``ResultsRowID``).
    public func id(in section: SectionID) -> ResultsRowID<Item.ID> { key(in: section) }

    func key(in section: SectionID) -> ResultsRowID<Item.ID> {
        switch self {
        case .item(let item): .item(item.objectID)
        case .group: .group(section)
        }
    }
}

// MARK: - Paths

/// The position of a row: a section index and a row index inside that section.
///
/// `IndexPath(path)` and `ItemPath(indexPath)` convert to and from Foundation's two-index
/// `IndexPath`, as UIKit and AppKit use it.
public struct ItemPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The section index.
    public var section: Int
    /// The row index inside the section.
    public var item: Int

    /// A path.
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    /// Section first, then item.
    public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    /// `[section, item]`.
    public var description: String { "[\(section), \(item)]" }

    /// The path of a two-index `IndexPath` (section, then item or row).
    public init(_ indexPath: IndexPath) {
        precondition(indexPath.count == 2, "an item path has two indexes")
        self.init(section: indexPath[0], item: indexPath[1])
    }
}

extension IndexPath {
    /// The two-index path (section, item) of `path`, as table and collection views use it.
    ///
    /// ```swift
    /// tableView.deleteRows(at: batch.itemDeletes.map(IndexPath.init), with: .automatic)
    /// ```
    public init(_ path: ItemPath) {
        self.init(indexes: [path.section, path.item])
    }
}

// MARK: - Invariants

extension ResultsSnapshot {
    /// Checks the snapshot's structural invariants: unique section ids, unique item ids,
    /// at most one group row per section, last, and never empty. Traps on violation.
    public func _checkInvariants() {
        var sectionIDs = Set<SectionID>()
        var itemIDs = Set<Item.ID>()
        for section in sections {
            precondition(sectionIDs.insert(section.id).inserted, "duplicate section \(section.id)")
            for (r, row) in section.rows.enumerated() {
                switch row {
                case .item(let item):
                    precondition(itemIDs.insert(item.objectID).inserted, "duplicate item \(item.objectID)")
                case .group(let items):
                    precondition(r == section.rows.count - 1, "group row not last in section \(section.id)")
                    precondition(!items.isEmpty, "empty group row in section \(section.id)")
                    for item in items {
                        precondition(itemIDs.insert(item.objectID).inserted, "duplicate item \(item.objectID)")
                    }
                }
            }
        }
    }
}

/// Whether two values that are `==` also hold the same bytes in every string they contain.
/// Swift's `==` on strings is canonical equivalence (`"caf\u{E9}" == "cafe\u{301}"`), but the
/// store keeps and compares the bytes (see `Docs/Decisions.md`, *Values: stored exactly*), so
/// a row rewritten in another normalization form is a change the snapshot must carry.
/// Only called for rows a commit re-read whose values compare equal.
func sameTextBytes(_ a: Any, _ b: Any) -> Bool {
    if let x = a as? String, let y = b as? String { return x.utf8.elementsEqual(y.utf8) }
    let left = Mirror(reflecting: a), right = Mirror(reflecting: b)
    if left.children.isEmpty && right.children.isEmpty { return true }
    guard left.children.count == right.children.count else { return false }
    for (x, y) in zip(left.children, right.children) where !sameTextBytes(x.value, y.value) { return false }
    return true
}
