import Foundation

/// A columnar pull answer (``SyncPullResult`` with ``SyncPullResult/objects``) as JSON, written
/// and read by hand: the relay's answer to a device's pull, and the device's reading of it.
/// Foundation's `Codable` JSON walks a keyed container per table and an unkeyed one per row
/// and cell; through a relay, it cost four times the rest of an initial sync (Benchmarks/README.md,
/// "A user's initial sync through a relay"). The text is the same JSON as `JSONEncoder`
/// writes of ``SyncPullResult`` (members in another order, ids in lowercase), so any JSON
/// client reads it as the OpenAPI document describes it; and what the reader does not take
/// (another order of members, a form it does not expect) goes to `JSONDecoder`.
extension PullBatch {
    /// The batch as the JSON of its ``columnarResult``.
    func columnarJSON() throws -> [UInt8] {
        if given != nil { return Array(try JSONEncoder().encode(columnarResult)) }
        var out: [UInt8] = []
        out.reserveCapacity(64 + objects.reduce(0) { $0 + $1.ids.count * (44 + 12 * $1.columns.count) })
        func append(_ text: StaticString) { out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) }
        append("{\"cursor\":")
        out.append(contentsOf: String(cursor).utf8)
        append(hasMore ? ",\"hasMore\":true,\"changes\":" : ",\"hasMore\":false,\"changes\":")
        if links.isEmpty { append("[]") } else { out.append(contentsOf: try JSONEncoder().encode(links)) }
        append(",\"objects\":[")
        for (number, table) in objects.enumerated() {
            if number > 0 { out.append(UInt8(ascii: ",")) }
            append("{\"table\":")
            SyncJSON.appendJSONString(table.table, to: &out)
            append(",\"columns\":[")
            for (offset, column) in table.columns.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                SyncJSON.appendJSONString(column, to: &out)
            }
            append("],\"ids\":[")
            for (offset, id) in table.ids.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\""))
                withUnsafeBytes(of: id.uuid) { bytes in
                    let start = out.count
                    out.append(contentsOf: repeatElement(0, count: 36))
                    out.withUnsafeMutableBufferPointer { buffer in
                        SyncValue.writeHex(bytes, dashed: true, into: UnsafeMutableBufferPointer(rebasing: buffer[start..<start + 36]))
                    }
                }
                out.append(UInt8(ascii: "\""))
            }
            append("],\"rows\":[")
            let width = table.columns.count
            for (offset, row) in table.rows.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                guard row >= 0 else {
                    append("null")
                    continue
                }
                out.append(UInt8(ascii: "["))
                for cell in row * width..<(row + 1) * width {
                    if cell > row * width { out.append(UInt8(ascii: ",")) }
                    if let text = table.text(at: cell) ?? nil { SyncJSON.appendJSONString(text, to: &out) } else { append("null") }
                }
                out.append(UInt8(ascii: "]"))
            }
            append("]}")
        }
        append("]}")
        return out
    }

    /// The batch of a relay's pull answer or snapshot line: read by hand
    /// (``init(columnarJSON:)``), or by `JSONDecoder` where that reader does not take it
    /// (another form of the answer), whose error it throws.
    init(relayJSON data: Data) throws {
        if let read = PullBatch(columnarJSON: data) {
            self = read
        } else {
            self = PullBatch(try JSONDecoder().decode(SyncPullResult.self, from: data))
        }
    }

    /// The batch of a columnar answer's JSON, read by hand, as ``init(_:)`` makes it of the
    /// decoded ``SyncPullResult`` (members in any order, any JSON whitespace); nil when the
    /// text is not that answer in JSON, which the caller then hands to `JSONDecoder` (for its
    /// error, or a form this reader does not know).
    init?(columnarJSON data: Data) {
        let read: PullBatch?? = data.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var scanner = JSONScanner(UnsafeBufferPointer(start: base, count: raw.count))
            var cursor: Int64?, hasMore: Bool?
            var links: [SyncChange]?
            var objects: [Objects]?
            let complete = scanner.object { scanner, key in
                switch key {
                case "cursor":
                    cursor = scanner.int64()
                    return cursor != nil
                case "hasMore":
                    hasMore = scanner.bool()
                    return hasMore != nil
                case "changes":
                    scanner.skipSpace()
                    let start = scanner.index
                    guard scanner.skipValue() else { return false }
                    let text = scanner.text(from: start)
                    if text.count == 2, text[0] == UInt8(ascii: "["), text[1] == UInt8(ascii: "]") {
                        links = []
                    } else {
                        links = try? JSONDecoder().decode([SyncChange].self, from: Data(text))
                    }
                    return links != nil
                case "objects":
                    var tables: [Objects] = []
                    guard scanner.array({ scanner in
                        guard let table = Self.readObjects(&scanner) else { return false }
                        tables.append(table)
                        return true
                    }) else { return false }
                    objects = tables
                    return true
                default:
                    return scanner.skipValue()
                }
            }
            guard complete, scanner.atEnd, let cursor, let hasMore, let links, let objects else { return nil }
            return PullBatch(objects: objects, links: links, cursor: cursor, hasMore: hasMore)
        }
        guard let read = read ?? nil else { return nil }
        self = read
    }

    /// One table's objects: `{"table":…,"columns":[…],"ids":[…],"rows":[…]}` (members in any
    /// order), as ``init(_:)`` reads a ``SyncPullObjects``: a row of fewer values than columns
    /// holds only those, more are ignored, ids and rows are paired as far as both go.
    private static func readObjects(_ scanner: inout JSONScanner) -> Objects? {
        var table: String?, columns: [String]?, ids: [UUID]?
        var rows: [(start: Int, count: Int)]?  // per row, its cells in `cells` (start -1: deleted)
        var cells: [String??] = []
        let complete = scanner.object { scanner, key in
            switch key {
            case "table":
                table = scanner.string()
                return table != nil
            case "columns":
                var names: [String] = []
                guard scanner.array({ scanner in
                    guard let name = scanner.string() else { return false }
                    names.append(name)
                    return true
                }) else { return false }
                columns = names
                return true
            case "ids":
                var read: [UUID] = []
                guard scanner.array({ scanner in
                    guard let id = scanner.uuid() else { return false }
                    read.append(id)
                    return true
                }) else { return false }
                ids = read
                return true
            case "rows":
                var read: [(start: Int, count: Int)] = []
                guard scanner.array({ scanner in
                    if scanner.null() {
                        read.append((-1, 0))
                        return true
                    }
                    let start = cells.count
                    guard scanner.array({ scanner in
                        if scanner.null() {
                            cells.append(.some(nil))
                            return true
                        }
                        guard let text = scanner.string() else { return false }
                        cells.append(.some(text))
                        return true
                    }) else { return false }
                    read.append((start, cells.count - start))
                    return true
                }) else { return false }
                rows = read
                return true
            default:
                return scanner.skipValue()
            }
        }
        guard complete, let table, let columns, let ids, let rows else { return nil }
        var objects = Objects(table: table, columns: columns)
        let count = min(ids.count, rows.count), width = columns.count
        objects.ids.reserveCapacity(count)
        objects.rows.reserveCapacity(count)
        if count == rows.count, rows.allSatisfy({ $0.start < 0 || $0.count == width }) {
            objects.texts = cells  // every row as wide as the columns: the cells as they are
        } else {
            objects.texts.reserveCapacity(count * width)
            for (start, cellCount) in rows.prefix(count) where start >= 0 {
                for offset in 0..<width { objects.texts.append(offset < cellCount ? cells[start + offset] : nil) }
            }
        }
        for index in 0..<count {
            if rows[index].start < 0 { objects.appendDeleted(ids[index]) } else { objects.appendRow(ids[index]) }
        }
        return objects
    }
}

extension JSONScanner {
    /// A UUID written as a string (`8-4-4-4-12`, either case).
    mutating func uuid() -> UUID? {
        skipSpace()
        let start = index
        if start + 38 <= bytes.count, bytes[start] == UInt8(ascii: "\""), bytes[start + 37] == UInt8(ascii: "\""),
           let id = SyncValue.uuid(utf8: UnsafeBufferPointer(rebasing: bytes[start + 1..<start + 37]))
        {
            index = start + 38
            return id
        }
        return string().flatMap(SyncValue.uuid)
    }
}
