import Foundation
import Strata
import StrataSQL

/// The model's per-user data (its entities' ``AccessDescriptor``s) as the server's SQL: whether
/// a row is in the data of the user that the transaction's setting `strata.user` names, and
/// the triggers that name in the log every object whose users changed because another object
/// changed (a card whose board got another owner or lost a member), so that pulls remove it
/// from the devices of the users who lost it, and bring it, whole, to those who gained it.
struct ServerAccess: Sendable {
    let tables: SyncedTables

    /// Whether any entity declares its users: else every user reads and writes everything.
    var isDeclared: Bool { tables.entities.contains { $0.descriptor.access != nil } }

    /// The user of the transaction, as SQL.
    static let user = "current_setting('strata.user')"

    /// The names of the triggers this adds: on an entity whose owner or `through` key
    /// changed, on a member entity.
    static let triggerName = "strata_sync_access"
    static let membersTriggerName = "strata_sync_access_members"

    /// `SELECT set_config('strata.user', $1, true)`: the user of the rest of the transaction.
    static let setUser = "SELECT set_config('strata.user', $1, true)"

    func descriptor(_ name: String) -> EntityDescriptor? { tables.schema.entity(named: name) }

    /// `alias.column` compared with the user: a `UUID` column as its lowercase text.
    func isUser(_ alias: String, _ column: String, of entity: EntityDescriptor) -> String {
        let type = entity.attribute(named: column)?.type
        return type == .uuid
            ? "\(alias).\(quoted(column))::text = lower(\(Self.user))"
            : "\(alias).\(quoted(column))::text = \(Self.user)"
    }

    /// The key column of to-one `relationship` of `entity`, if it holds one.
    func keyColumn(_ relationship: String, of entity: EntityDescriptor) -> String? {
        guard case .foreignKey(let column)? = entity.relationship(named: relationship)?.storage else { return nil }
        return column
    }

    /// The member entity, its key column back to `entity`, and its user column.
    func members(of entity: EntityDescriptor) -> (entity: EntityDescriptor, key: String, user: String)? {
        guard case .users(_, let members?)? = entity.access,
              let relationship = entity.relationship(named: members.relationship),
              let destination = descriptor(relationship.destination),
              let key = keyColumn(relationship.inverse, of: destination)
        else { return nil }
        return (destination, key, members.attribute)
    }

    /// SQL: whether the row `alias` of `entityName` is in the user's data.
    func visible(_ entityName: String, _ alias: String, depth: Int = 0) -> String {
        guard isDeclared else { return "true" }
        guard let entity = descriptor(entityName), let access = entity.access, depth < 32 else { return "false" }
        switch access {
        case .everyone:
            return "true"
        case .users(let owner, _):
            var terms: [String] = []
            if let owner { terms.append(isUser(alias, owner, of: entity)) }
            if let members = members(of: entity) {
                let m = "m\(depth)"
                terms.append(
                    "EXISTS (SELECT 1 FROM \(quoted(members.entity.name)) \(m) WHERE \(m).\(quoted(members.key)) = \(alias).\(quoted(entity.primaryKey)) AND \(isUser(m, members.user, of: members.entity)))")
            }
            return terms.isEmpty ? "false" : "(" + terms.joined(separator: " OR ") + ")"
        case .through(let name):
            guard let relationship = entity.relationship(named: name), let destination = descriptor(relationship.destination),
                  let key = keyColumn(name, of: entity)
            else { return "false" }
            let x = "x\(depth)"
            return "EXISTS (SELECT 1 FROM \(quoted(destination.name)) \(x) WHERE \(x).\(quoted(destination.primaryKey)) = \(alias).\(quoted(key)) AND \(visible(destination.name, x, depth: depth + 1)))"
        }
    }

    /// SQL: whether the object of `entityName` whose id is the SQL `id` exists and is in the
    /// user's data, or exists outside it (nil when it does not exist): `SELECT <this>`.
    func state(_ entityName: String, id: String) -> String {
        guard let entity = descriptor(entityName) else { return "NULL" }
        return "(SELECT \(visible(entityName, "o")) FROM \(quoted(entityName)) o WHERE o.\(quoted(entity.primaryKey)) = \(id))"
    }

    /// SQL: whether the link of `join` between the objects whose ids are the SQL `a` and `b`
    /// is in the user's data: both objects exist and are.
    func linkVisible(_ join: SyncedTables.Join, a: String, b: String) -> String {
        "coalesce(\(state(join.entity, id: a)), false) AND coalesce(\(state(join.destination, id: b)), false)"
    }

    // MARK: - Triggers

    /// The entities whose access goes through a to-one to `entityName`, with that key column.
    func dependents(of entityName: String) -> [(entity: EntityDescriptor, key: String)] {
        tables.entities.compactMap { entity in
            guard case .through(let name)? = entity.descriptor.access,
                  entity.descriptor.relationship(named: name)?.destination == entityName,
                  let key = keyColumn(name, of: entity.descriptor)
            else { return nil }
            return (entity.descriptor, key)
        }
    }

    /// The function that names in the log (for every device: no origin) the objects `ids` of
    /// `entity`, their links, and, in turn, the objects whose access goes through them.
    func touchFunction(_ entity: SyncedTables.Entity) -> String {
        let name = entity.name
        var body = "INSERT INTO strata_sync_log (tbl, id) SELECT \(literal(name)), u FROM unnest(ids) u WHERE u IS NOT NULL;\n"
        for join in tables.joins {
            if join.entity == name {
                body += "INSERT INTO strata_sync_log (tbl, a, b) SELECT \(literal(join.name)), j.\(quoted(join.column)), j.\(quoted(join.inverseColumn)) FROM \(quoted(join.name)) j WHERE j.\(quoted(join.column)) = ANY(ids);\n"
            }
            if join.destination == name, join.entity != name {
                body += "INSERT INTO strata_sync_log (tbl, a, b) SELECT \(literal(join.name)), j.\(quoted(join.column)), j.\(quoted(join.inverseColumn)) FROM \(quoted(join.name)) j WHERE j.\(quoted(join.inverseColumn)) = ANY(ids);\n"
            }
        }
        for dependent in dependents(of: name) {
            body += "PERFORM \(Self.touchFunctionName(dependent.entity.name))(ARRAY(SELECT d.\(quoted(dependent.entity.primaryKey)) FROM \(quoted(dependent.entity.name)) d WHERE d.\(quoted(dependent.key)) = ANY(ids)));\n"
        }
        return """
            CREATE OR REPLACE FUNCTION \(Self.touchFunctionName(name))(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
            BEGIN
            IF cardinality(ids) = 0 THEN RETURN; END IF;
            \(body)END $$
            """
    }

    static func touchFunctionName(_ entity: String) -> String { quoted("strata_sync_access_" + entity) }

    /// For each table whose changes can change who may read other objects, its trigger: an
    /// entity whose owner or `through` key changed (its dependents and links, itself), a
    /// member entity whose rows came, went or changed (the object they are members of).
    var triggers: [(table: String, trigger: String?, sql: [String])] {
        guard isDeclared else { return [] }
        var result: [(String, String?, [String])] = []
        for entity in tables.entities {
            var columns: [String] = []
            switch entity.descriptor.access {
            case .users(let owner, _)?: if let owner { columns.append(owner) }
            case .through(let name)?: if let key = keyColumn(name, of: entity.descriptor) { columns.append(key) }
            default: break
            }
            var statements = [touchFunction(entity)]
            var trigger: String?
            let key = quoted(entity.primaryKey)
            if !columns.isEmpty, !dependents(of: entity.name).isEmpty || tables.joins.contains(where: { $0.entity == entity.name || $0.destination == entity.name }) {
                let function = quoted("strata_sync_access_trigger_" + entity.name)
                let change = columns.map { "OLD.\(quoted($0)) IS DISTINCT FROM NEW.\(quoted($0))" }.joined(separator: " OR ")
                statements.append("""
                    CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                    IF \(change) THEN PERFORM \(Self.touchFunctionName(entity.name))(ARRAY[NEW.\(key)]); END IF;
                    RETURN NULL;
                    END $$
                    """)
                statements.append("""
                    CREATE OR REPLACE TRIGGER \(Self.triggerName) AFTER UPDATE OF \(columns.map(quoted).joined(separator: ", ")) \
                    ON \(quoted(entity.name)) FOR EACH ROW EXECUTE FUNCTION \(function)()
                    """)
                trigger = Self.triggerName
            }
            result.append((entity.name, trigger, statements))
        }
        // Member entities: a member added, removed or changed changes who may read the object.
        for entity in tables.entities {
            guard let members = members(of: entity.descriptor), tables.entity(named: members.entity.name) != nil else { continue }
            let function = quoted("strata_sync_access_members_" + members.entity.name)
            let key = quoted(members.key)
            do {
                let sql = [
                    """
                    CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                    IF TG_OP <> 'INSERT' THEN PERFORM \(Self.touchFunctionName(entity.name))(ARRAY[OLD.\(key)]); END IF;
                    IF TG_OP <> 'DELETE' THEN PERFORM \(Self.touchFunctionName(entity.name))(ARRAY[NEW.\(key)]); END IF;
                    RETURN NULL;
                    END $$
                    """,
                    """
                    CREATE OR REPLACE TRIGGER \(Self.membersTriggerName) AFTER INSERT OR DELETE OR UPDATE OF \(key), \(quoted(members.user)) \
                    ON \(quoted(members.entity.name)) FOR EACH ROW EXECUTE FUNCTION \(function)()
                    """,
                ]
                result.append((members.entity.name, Self.membersTriggerName, sql))
            }
        }
        return result
    }
}
