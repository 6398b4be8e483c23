import Foundation

/// How a request is ordered by an ordered relationship: which position column, whether the
/// sections follow the parent (entity sections by the same to-one).
struct OrderedRequest {
    var storage: OrderedPositions.Storage
    var parentEntity: String
    /// The parent table's primary key column.
    var parentKey: String
    var descending: Bool
    var sectionsFollowParent: Bool
    /// The index of the position among the request's sort keys.
    var positionIndex: Int
    /// True when rows of several parents can sort among each other: the sections do not
    /// follow the parent, and the sort keys before the position do not include the parent's
    /// key (parents of equal values, `list.rank`, then mix their children by position).
    var parentsMayInterleave: Bool
    /// True when the request orders siblings as the store does, by (position, id): the
    /// position ascends and is the last sort key. Otherwise (`-list.@position`, where
    /// siblings of equal position still follow each other by increasing id, or keys after
    /// the position) a move is placed in the request's order (`SiblingPlacement`).
    var siblingsInStorageOrder: Bool

    init<Item: StrataEntity, Section>(request: ResultsRequest<Item, Section>, schema: SchemaDescriptor) throws {
        let entity = Item.entityDescriptor
        var found: (Int, RelationshipDescriptor, String, String)? = nil
        for (index, key) in request.sortKeys.enumerated() where key.node.path.count == 1 {
            if let relationship = entity.relationships.first(where: { $0.positionColumn == key.node.path[0] }),
               case .foreignKey(let column) = relationship.storage, let position = relationship.positionColumn
            {
                found = (index, relationship, column, position)
                break
            }
        }
        guard let (index, relationship, column, position) = found else {
            throw ResultsEditError.notOrderedByPosition(
                reason: "its sort has no key '<to-one>.@position' of an ordered relationship")
        }
        // Keys before the position must be values of the parent: equal among siblings.
        for key in request.sortKeys[..<index] {
            let path = key.node.path
            guard path == [column] || (path.count >= 2 && path[0] == relationship.name) else {
                throw ResultsEditError.notOrderedByPosition(
                    reason: "the sort key '\(path.joined(separator: "."))' comes before '\(relationship.name).@position' and is not a value of the parent")
            }
        }
        storage = OrderedPositions.Storage(table: entity.name, foreignKey: column, position: position, key: entity.primaryKey)
        parentEntity = relationship.destination
        parentKey = schema.entity(named: relationship.destination)?.primaryKey ?? "id"
        descending = request.sortKeys[index].node.descending
        positionIndex = index
        if case .entity(let path, _, _, _) = request.sectioning.kind, path == [relationship.name] {
            sectionsFollowParent = true
        } else {
            sectionsFollowParent = false
        }
        siblingsInStorageOrder = !descending && index == request.sortKeys.count - 1
        let parentKey = self.parentKey
        parentsMayInterleave = !sectionsFollowParent && !request.sortKeys[..<index].contains { key in
            key.node.path == [column] || key.node.path == [relationship.name, parentKey]
        }
    }
}
