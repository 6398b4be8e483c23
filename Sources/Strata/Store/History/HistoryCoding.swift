import Foundation

/// The binary form of one transaction's ``CommittedChanges`` in the history table: compact,
/// versioned, and cheap to write on the commit path (one blob per transaction, whatever the
/// number of rows).
///
/// Layout (version 1), every integer an unsigned LEB128 varint unless said otherwise:
/// ```
/// version (1)
/// table count, then per table:
///   name (length, UTF-8 bytes)
///   inserted, updated, deleted: count, then ascending rowids as zigzag deltas
///   updated columns: count, then names
///   join rows: column-name count and names, then count, then per row:
///     rowid (zigzag), value count, then (column index, value as zigzag) pairs
/// invalidated table count, then names
/// ```
/// Unknown versions and malformed blobs do not decode (``decode(_:)`` returns nil); readers
/// then treat the transaction as one that changed everything.
enum HistoryCoding {
    static let version: UInt64 = 1

    static func encode(_ changes: CommittedChanges) -> Data {
        var writer = Writer()
        writer.bytes.reserveCapacity(64)
        writer.varint(version)
        let tables = changes.tables.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
        writer.varint(UInt64(tables.count))
        for (name, table) in tables {
            writer.string(name)
            writer.ids(table.inserted)
            writer.ids(table.updated)
            writer.ids(table.deleted)
            writer.varint(UInt64(table.updatedColumns.count))
            for column in table.updatedColumns.sorted() { writer.string(column) }
            if table.joinRows.isEmpty {
                // No join rows: no column names and no rows (the common case, without the
                // sets and sorts below).
                writer.varint(0)
                writer.varint(0)
                continue
            }
            let columns = Set(table.joinRows.values.flatMap(\.keys)).sorted()
            writer.varint(UInt64(columns.count))
            for column in columns { writer.string(column) }
            let position = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })
            writer.varint(UInt64(table.joinRows.count))
            for (rowID, values) in table.joinRows.sorted(by: { $0.key < $1.key }) {
                writer.signed(rowID)
                writer.varint(UInt64(values.count))
                for (column, value) in values.sorted(by: { $0.key < $1.key }) {
                    writer.varint(UInt64(position[column]!))
                    writer.signed(value)
                }
            }
        }
        writer.varint(UInt64(changes.invalidatedTables.count))
        for table in changes.invalidatedTables.sorted() { writer.string(table) }
        return writer.data
    }

    static func decode(_ data: Data) -> CommittedChanges? {
        var reader = Reader(bytes: [UInt8](data))
        guard reader.varint() == version, let tableCount = reader.count() else { return nil }
        var tables: [String: CommittedChanges.TableChanges] = [:]
        for _ in 0..<tableCount {
            guard let name = reader.string(), let inserted = reader.ids(), let updated = reader.ids(),
                  let deleted = reader.ids(), let columnCount = reader.count()
            else { return nil }
            var table = CommittedChanges.TableChanges()
            table.inserted = inserted
            table.updated = updated
            table.deleted = deleted
            for _ in 0..<columnCount {
                guard let column = reader.string() else { return nil }
                table.updatedColumns.insert(column)
            }
            guard let joinColumnCount = reader.count() else { return nil }
            var joinColumns: [String] = []
            for _ in 0..<joinColumnCount {
                guard let column = reader.string() else { return nil }
                joinColumns.append(column)
            }
            guard let joinCount = reader.count() else { return nil }
            for _ in 0..<joinCount {
                guard let rowID = reader.signed(), let valueCount = reader.count() else { return nil }
                var values: [String: Int64] = [:]
                for _ in 0..<valueCount {
                    guard let index = reader.count(), index < joinColumns.count, let value = reader.signed() else {
                        return nil
                    }
                    values[joinColumns[index]] = value
                }
                table.joinRows[rowID] = values
            }
            tables[name] = table
        }
        guard let invalidatedCount = reader.count() else { return nil }
        var invalidated: Set<String> = []
        for _ in 0..<invalidatedCount {
            guard let table = reader.string() else { return nil }
            invalidated.insert(table)
        }
        guard reader.isAtEnd else { return nil }
        return CommittedChanges(tables: tables, invalidatedTables: invalidated)
    }

    // MARK: - Varints

    private struct Writer {
        /// Bytes, not `Data`: appending one byte to `Data` costs a call through its
        /// representation, and this runs in every recorded transaction.
        var bytes: [UInt8] = []
        var data: Data { Data(bytes) }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func signed(_ value: Int64) {
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        }

        mutating func string(_ value: String) {
            varint(UInt64(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
        }

        /// Ascending rowids as differences from the previous one (the first from 0).
        mutating func ids(_ ids: Set<Int64>) {
            varint(UInt64(ids.count))
            var previous: Int64 = 0
            for id in ids.sorted() {
                signed(id &- previous)
                previous = id
            }
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func varint() -> UInt64? {
            var result: UInt64 = 0, shift: UInt64 = 0
            while offset < bytes.count, shift < 64 {
                let byte = bytes[offset]
                offset += 1
                result |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
            return nil
        }

        /// A count or index: a varint no larger than the bytes left could describe.
        mutating func count() -> Int? {
            guard let value = varint(), value <= UInt64(bytes.count) else { return nil }
            return Int(value)
        }

        mutating func signed() -> Int64? {
            guard let raw = varint() else { return nil }
            return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
        }

        mutating func string() -> String? {
            guard let length = count(), offset + length <= bytes.count else { return nil }
            defer { offset += length }
            return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
        }

        mutating func ids() -> Set<Int64>? {
            guard let count = count() else { return nil }
            var result = Set<Int64>(minimumCapacity: count)
            var previous: Int64 = 0
            for _ in 0..<count {
                guard let delta = signed() else { return nil }
                previous = previous &+ delta
                result.insert(previous)
            }
            return result
        }
    }
}
