import Foundation
import GRDB

/// Compares database values exactly as SQLite's `ORDER BY` (and its `<`, `=`, `>`) does on
/// columns with the `BINARY` collation:
///
/// - storage classes order `NULL < INTEGER/REAL < TEXT < BLOB`;
/// - integers and reals compare numerically with each other (an `Int64` and a `Double` are
///   compared exactly, without rounding the integer);
/// - text compares by UTF-8 bytes (`memcmp`), *not* by Swift's `String` equality, so a
///   precomposed `"é"` and a decomposed `"e\u{301}"` are different values, as in SQLite;
/// - blobs compare with `memcmp`, then by length.
///
/// Values are compared as stored, without SQLite's column-affinity conversions: typed
/// predicates compare a column with values of its own type, where SQLite converts nothing.
/// (`Decimal` attributes are stored as TEXT by GRDB, so they order as text in both.)
///
/// Results controllers select sort-key values with ``SQLQueryBuilder`` and order them in
/// memory with this comparator; the two orders are equal.
///
/// One caveat: GRDB reads text up to its first NUL character and replaces invalid UTF-8,
/// where SQLite compares all the bytes. Results controllers read text sort keys with NUL
/// characters in full (see `sortValue(in:at:)`); text that is not valid UTF-8 (only raw
/// SQL can write it, with `CAST(blob AS TEXT)`) may order differently in memory.
public enum DatabaseValueOrdering {
    /// -1, 0 or 1, like `memcmp`.
    public static func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Int {
        // One switch per side rather than on a tuple of both: a tuple copies (and retains)
        // both values' strings and blobs, and this runs for every probe of every search.
        switch lhs.storage {
        case .null:
            if case .null = rhs.storage { return 0 }
            return -1
        case .int64(let a):
            switch rhs.storage {
            case .null: return 1
            case .int64(let b): return a < b ? -1 : (a == b ? 0 : 1)
            case .double(let b): return compareInt(a, double: b)
            case .string, .blob: return -1
            }
        case .double(let a):
            switch rhs.storage {
            case .null: return 1
            case .int64(let b): return -compareInt(b, double: a)
            case .double(let b): return compareDoubles(a, b)
            case .string, .blob: return -1
            }
        case .string(let a):
            switch rhs.storage {
            case .null, .int64, .double: return 1
            case .string(let b): return compareUTF8(a, b)
            case .blob: return -1
            }
        case .blob(let a):
            switch rhs.storage {
            case .null, .int64, .double, .string: return 1
            case .blob(let b):
                return a.withUnsafeBytes { x in
                    b.withUnsafeBytes { y in compareBytes(x.bindMemory(to: UInt8.self), y.bindMemory(to: UInt8.self)) }
                }
            }
        }
    }

    /// True when SQLite's `IS` says the values are the same.
    public static func isSame(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Bool { compare(lhs, rhs) == 0 }

    /// Compares two lists of sort-key values key by key (`descending[i]` reverses key `i`),
    /// then by `lhsID`/`rhsID`, as `ORDER BY k0, k1, …, id` does.
    public static func compare(
        _ lhs: [DatabaseValue], id lhsID: Int64, _ rhs: [DatabaseValue], id rhsID: Int64, descending: [Bool]
    ) -> Int {
        compare(lhs[...], id: lhsID, rhs[...], id: rhsID, descending: descending)
    }

    /// ``compare(_:id:_:id:descending:)`` of keys kept in slices of larger arrays.
    static func compare(
        _ lhs: ArraySlice<DatabaseValue>, id lhsID: Int64, _ rhs: ArraySlice<DatabaseValue>, id rhsID: Int64,
        descending: [Bool]
    ) -> Int {
        for index in 0..<min(lhs.count, rhs.count) {
            let order = compare(lhs[lhs.startIndex + index], rhs[rhs.startIndex + index])
            if order != 0 { return index < descending.count && descending[index] ? -order : order }
        }
        return lhsID < rhsID ? -1 : (lhsID == rhsID ? 0 : 1)
    }

    /// The value at `index` in `row` for ordering: text with NUL characters is read in
    /// full (GRDB's `DatabaseValue` stops at the first NUL), so that it orders as in SQLite.
    static func sortValue(in row: Row, at index: Int) -> DatabaseValue {
        let value: DatabaseValue = row[index]
        return value.inFull { try row.withUnsafeData(atIndex: index, $0) }
    }

    static func compareDoubles(_ a: Double, _ b: Double) -> Int {
        // SQLite stores NaN as NULL, so it never reaches here from the database.
        a < b ? -1 : (a == b ? 0 : 1)
    }

    /// Exact comparison of an integer with a double, as sqlite3IntFloatCompare does.
    static func compareInt(_ i: Int64, double r: Double) -> Int {
        if r.isNaN { return 1 }
        if r < -9223372036854775808.0 { return 1 }
        if r >= 9223372036854775808.0 { return -1 }
        let y = Int64(r.rounded(.towardZero))
        if i < y { return -1 }
        if i > y { return 1 }
        let s = Double(i)
        if s < r { return -1 }
        if s > r { return 1 }
        return 0
    }

    /// Compares the UTF-8 bytes of two strings without copying them (native strings are
    /// UTF-8: this runs on every comparison of a binary search).
    static func compareUTF8(_ a: String, _ b: String) -> Int {
        // Native strings are contiguous UTF-8: compared in place, without copies.
        if let order = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in compareBytes(x, y) }
        }), let order {
            return order
        }
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in compareBytes(x, y) } }
    }

    static func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count)
        if n > 0, let x = a.baseAddress, let y = b.baseAddress {
            let order = memcmp(x, y, n)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
    }
}

// MARK: - Bound values

extension DatabaseValue {
    /// The value as SQLite stores it: a `Double.nan` becomes NULL (SQLite binds NaN as NULL),
    /// anything else is unchanged. Values read from subjects go through it.
    var nanAsNull: DatabaseValue {
        if case .double(let double) = storage, double.isNaN { return .null }
        return self
    }

    /// The value as SQLite receives it when GRDB binds it: a `Double.nan` is NULL, and text
    /// ends at its first NUL character (GRDB binds text as a C string). Predicate values go
    /// through it, in SQL and in memory, so that both agree on NaN and on NUL.
    var asBound: DatabaseValue {
        switch storage {
        case .double(let double) where double.isNaN: return .null
        case .string(let string): return string.upToNUL.databaseValue
        default: return self
        }
    }
}
