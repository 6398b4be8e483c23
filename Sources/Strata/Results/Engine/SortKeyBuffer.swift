import Foundation
import GRDB
import GRDBSQLite

/// The sort keys of many rows, each encoded as bytes whose `memcmp` order is the order of
/// `ORDER BY k0, k1, …, id` in SQLite, so that a fetch of all the results can read its rows
/// in table order and sort them itself: one comparison of bytes per step instead of
/// SQLite's sorter, which spilled a large fetch to temporary files and compared each pair
/// field by field (two thirds of opening a batched list of a million rows).
///
/// The order is SQLite's with the `BINARY` collation, the only one results requests use
/// (the same order as ``DatabaseValueOrdering``): NULL first, then numbers, then text by
/// its bytes, then blobs by theirs; a key sorted in descending order has its bytes
/// inverted. Every encoding is prefix-free (its first byte tells its length, or it ends
/// with a terminator that its content escapes), so that inverting one reverses its order
/// against any other, and a row's keys, followed by its id, form one key unique to it.
///
/// A column that holds both integers and reals cannot be encoded this way (SQLite compares
/// them by value, exactly): ``append(_:columns:id:value:kind:)`` then returns false and the caller
/// sorts in SQL instead.
struct SortKeyBuffer {
    /// Every row's key, one after the other.
    private var bytes: [UInt8] = []
    /// Where each row's key starts in `bytes`, and a last element: the end of the last key.
    private var starts: [Int] = [0]
    /// Each row with its abbreviated key (computed when sorting), in the order appended,
    /// then, after ``sort()``, in the order of the keys.
    private var rows: [Abbreviated] = []
    /// The number of rows expected, to reserve room for the keys once their size is known.
    private let capacity: Int
    private let descending: [Bool]
    /// What each key column held so far: integers, reals, neither yet.
    private var numericKinds: [NumericKind]
    /// Per key column, the bytes that every text and blob value of it met so far begins
    /// with (nil before the first): sorting skips them (see ``sort()``).
    private var commonPrefixes: [[UInt8]?]

    private enum NumericKind { case none, integer, real }

    /// Tags: the first byte of a value's encoding. Integers take a tag per sign and length.
    private enum Tag {
        static let null: UInt8 = 0x05
        /// Negative integers: `integerZero - n` for `n` significant bytes (1 to 8).
        /// Zero and positive ones: `integerZero + n` (0 to 8).
        static let integerZero: UInt8 = 0x10
        static let real: UInt8 = 0x20
        static let text: UInt8 = 0x30
        static let blob: UInt8 = 0x40
    }

    init(descending: [Bool], capacity: Int = 0) {
        self.descending = descending
        numericKinds = Array(repeating: .none, count: descending.count)
        commonPrefixes = Array(repeating: nil, count: descending.count)
        starts.reserveCapacity(capacity + 1)
        rows.reserveCapacity(capacity)
        self.capacity = capacity
        bytes.reserveCapacity(min(capacity, 1_024) * 32)
    }

    /// The number of rows.
    var count: Int { rows.count }

    /// Appends the key of a row whose sort values are the columns `columns` of the current
    /// row of `statement`, then its id, with `value` and `kind` (see ``Row``). Returns false,
    /// appending nothing, when a column holds integers and reals both (the buffer is then of
    /// no use).
    mutating func append(_ statement: SQLiteStatement, columns: Range<Int32>, id: Int64, value: Int64 = 0, kind: UInt8 = 0) -> Bool {
        for (offset, column) in columns.enumerated() {
            let start = bytes.count
            switch sqlite3_column_type(statement, column) {
            case SQLITE_NULL:
                bytes.append(Tag.null)
            case SQLITE_INTEGER:
                guard numericKinds[offset] != .real else { return rollBack() }
                numericKinds[offset] = .integer
                appendInteger(sqlite3_column_int64(statement, column))
            case SQLITE_FLOAT:
                guard numericKinds[offset] != .integer else { return rollBack() }
                numericKinds[offset] = .real
                appendReal(sqlite3_column_double(statement, column))
            case SQLITE_TEXT:
                let text = sqlite3_column_text(statement, column)
                let count = Int(sqlite3_column_bytes(statement, column))
                let content = UnsafeRawBufferPointer(start: text, count: text == nil ? 0 : count)
                narrowPrefix(offset, content)
                appendEscaped(Tag.text, content)
            default:
                let blob = sqlite3_column_blob(statement, column)
                let count = Int(sqlite3_column_bytes(statement, column))
                let content = UnsafeRawBufferPointer(start: blob, count: blob == nil ? 0 : count)
                narrowPrefix(offset, content)
                appendEscaped(Tag.blob, content)
            }
            if descending[offset] {
                for index in start..<bytes.count { bytes[index] = ~bytes[index] }
            }
        }
        appendInteger(id)
        rows.append(Abbreviated(prefix: 0, row: Row(id: id, value: value, row: UInt32(truncatingIfNeeded: count), kind: kind)))
        starts.append(bytes.count)
        if count == 1_024 && capacity > count {
            // Room for the keys of every row expected, at the size of the first ones: the
            // buffer does not double (and hold both copies) while it grows.
            bytes.reserveCapacity(bytes.count / count * capacity * 5 / 4)
        }
        return true

        func rollBack() -> Bool {
            bytes.removeSubrange(starts[starts.count - 1]...)
            return false
        }
    }

    /// Shortens the common prefix of column `column` to what `content` begins with.
    private mutating func narrowPrefix(_ column: Int, _ content: UnsafeRawBufferPointer) {
        guard let prefix = commonPrefixes[column] else {
            commonPrefixes[column] = Array(content)
            return
        }
        guard !prefix.isEmpty else { return }
        var length = 0
        let limit = min(prefix.count, content.count)
        while length < limit && prefix[length] == content[length] { length += 1 }
        if length < prefix.count { commonPrefixes[column]!.removeSubrange(length...) }
    }

    /// A row as the caller gave it: its id and a value and a kind of the caller's (the
    /// section key, when it is an integer), kept in the array that is sorted, so that the
    /// rows are read in order afterwards rather than looked up at random (a cache miss per
    /// row); `row` numbers the rows in the order they were appended.
    struct Row {
        var id: Int64
        var value: Int64
        var row: UInt32
        var kind: UInt8
    }

    /// A row and the first 8 bytes of its key without the columns' common prefixes,
    /// big-endian: most comparisons of a sort end on them.
    struct Abbreviated {
        var prefix: UInt64
        var row: Row
    }

    /// Sorts the rows in the order of their keys.
    ///
    /// The sort compares abbreviated keys first (PostgreSQL's idea for text): 8 bytes of
    /// each key, in an array sorted in place, read in order; only rows whose 8 bytes are
    /// the same compare their whole keys. So that those 8 bytes tell rows apart, they are
    /// taken from the key without the bytes that every text or blob value of a column
    /// begins with (`Note 0…`, `2026-…`): those bytes are the same in every key that
    /// reaches them, at the same place, so leaving them out changes no order.
    ///
    /// `leading`: rows (numbered in the order appended) to give the sort first, in this
    /// order, before the others in the order appended — rows known to be nearly in order (a
    /// commit's refetch: the rows of the last snapshot that the commit did not write, in that
    /// snapshot's order), which the sort then takes in runs (it merges runs it finds, like
    /// Timsort) instead of sorting them again. A row given twice, or out of range, is
    /// ignored; any `leading` gives the same order.
    ///
    /// The keys are released once sorted: the rows are then read with ``sortedRows``.
    mutating func sort(leading: [UInt32] = []) {
        precondition(count < Int(UInt32.max), "too many rows to sort")
        // The encoded length of each column's common prefix (a NUL takes two bytes).
        let skips = commonPrefixes.map { prefix in prefix.map { $0.count + $0.lazy.filter { $0 == 0 }.count } ?? 0 }
        var rows = self.rows
        self.rows = []
        bytes.withUnsafeBytes { bytes in
            rows.withUnsafeMutableBufferPointer { rows in
                for row in rows.indices {
                    rows[row].prefix = abbreviation(bytes, from: starts[row], to: starts[row + 1], skips: skips)
                }
            }
            if !leading.isEmpty { rows = Self.arranged(rows, leading: leading) }
            starts.withUnsafeBufferPointer { starts in
                let base = bytes.baseAddress!
                rows.sort { a, b in
                    if a.prefix != b.prefix { return a.prefix < b.prefix }
                    let aRow = Int(a.row.row), bRow = Int(b.row.row)
                    let aStart = starts[aRow], aCount = starts[aRow + 1] - aStart
                    let bStart = starts[bRow], bCount = starts[bRow + 1] - bStart
                    let order = memcmp(base + aStart, base + bStart, min(aCount, bCount))
                    // Keys are prefix-free and unique: they differ within the shorter one.
                    return order < 0 || (order == 0 && aCount < bCount)
                }
            }
        }
        self.rows = rows
        bytes = []
        starts = []
    }

    /// `rows` with the rows `leading` lists first, in that order (see ``sort(leading:)``).
    private static func arranged(_ rows: [Abbreviated], leading: [UInt32]) -> [Abbreviated] {
        var arranged: [Abbreviated] = []
        arranged.reserveCapacity(rows.count)
        var taken = [Bool](repeating: false, count: rows.count)
        for row in leading where Int(row) < rows.count && !taken[Int(row)] {
            taken[Int(row)] = true
            arranged.append(rows[Int(row)])
        }
        for row in rows.indices where !taken[row] { arranged.append(rows[row]) }
        return arranged
    }

    /// The rows, in the order of their keys after ``sort()``.
    var sortedRows: LazyMapSequence<[Abbreviated], Row> { rows.lazy.map(\.row) }

    /// The first 8 bytes of the key `bytes[start..<end]` without the first `skips[c]` bytes
    /// of the content of each text or blob of column `c`, zero-padded.
    private func abbreviation(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int, skips: [Int]) -> UInt64 {
        var result: UInt64 = 0
        var taken = 0
        var index = start
        func take(_ byte: UInt8) -> Bool {
            result = result << 8 | UInt64(byte)
            taken += 1
            return taken == 8
        }
        columns: for column in 0..<descending.count {
            guard index < end else { break }
            // Bytes are inverted in descending columns: read them as ascending.
            let flip: UInt8 = descending[column] ? 0xFF : 0
            let tag = bytes[index] ^ flip
            if take(bytes[index]) { return result }
            index += 1
            let length: Int
            switch tag {
            case Tag.null: length = 0
            case Tag.real: length = 8
            case Tag.text, Tag.blob:
                index += skips[column]
                // Up to the terminator: 0x00 then 0x00 (0x00 then 0xFF is an escaped NUL).
                while index + 1 < end {
                    let byte = bytes[index] ^ flip
                    if byte == 0 && bytes[index + 1] ^ flip == 0 { break }
                    if take(bytes[index]) { return result }
                    index += 1
                }
                length = 2
            default:
                // Integers: the tag tells the number of bytes.
                length = tag >= Tag.integerZero ? Int(tag - Tag.integerZero) : Int(Tag.integerZero - tag)
            }
            for offset in 0..<length where index + offset < end {
                if take(bytes[index + offset]) { return result }
            }
            index += length
        }
        return result << UInt64(8 * (8 - taken))
    }

    private mutating func appendInteger(_ value: Int64) {
        if value >= 0 {
            let count = Self.significantBytes(UInt64(value))
            bytes.append(Tag.integerZero + UInt8(count))
            appendBigEndian(UInt64(value), count: count)
        } else {
            // More bytes, a smaller number: a smaller tag; among as many bytes, the bytes of
            // `~value` (non-negative) inverted, so that a larger `~value` comes first.
            let complement = UInt64(~value)
            let count = max(Self.significantBytes(complement), 1)
            bytes.append(Tag.integerZero - UInt8(count))
            appendBigEndian(~complement, count: count)
        }
    }

    private mutating func appendReal(_ value: Double) {
        // SQLite has no NaN (it stores NULL) and orders -0.0 with 0.0.
        let bits = (value == 0 ? 0.0 : value).bitPattern
        bytes.append(Tag.real)
        appendBigEndian(bits & (1 << 63) == 0 ? bits | (1 << 63) : ~bits, count: 8)
    }

    /// `tag`, the bytes with each 0x00 written 0x00 0xFF, then 0x00 0x00.
    private mutating func appendEscaped(_ tag: UInt8, _ content: UnsafeRawBufferPointer) {
        bytes.append(tag)
        var runStart = content.startIndex
        for index in content.indices where content[index] == 0 {
            bytes.append(contentsOf: content[runStart...index])
            bytes.append(0xFF)
            runStart = index + 1
        }
        bytes.append(contentsOf: content[runStart...])
        bytes.append(0)
        bytes.append(0)
    }

    private mutating func appendBigEndian(_ value: UInt64, count: Int) {
        var shift = 8 * (count - 1)
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }

    private static func significantBytes(_ value: UInt64) -> Int { (64 - value.leadingZeroBitCount + 7) / 8 }
}
