import GRDB

/// One sort key of every item of a ``FullIndexKeys``, by slot, stored by its type: an integer
/// key (a number, a Boolean, a position) in the fewest bytes that hold every one so far
/// (``NarrowIntegers``: a Boolean in one, a position in four, at most eight) and a text key as
/// a `String` (16), where a `DatabaseValue` takes 24. The storage is chosen by the first
/// value; a value of another storage class (a NULL, a real among integers) turns the column
/// into plain `DatabaseValue`s, which it stays until it is cleared. Reading gives back the stored value
/// exactly (`DatabaseValue` equality), so the order is SQLite's either way.
struct SortKeyColumn: Sendable {
    private enum Storage {
        case integers
        case texts
        case reals
        case values
    }

    private var storage = Storage.integers
    private var integers = NarrowIntegers()
    private var texts: ContiguousArray<String> = []
    private var reals: ContiguousArray<Double> = []
    private var values: ContiguousArray<DatabaseValue> = []
    /// The capacity asked for, given to the storage the first value chooses.
    private var capacity = 0

    init() {}

    /// Whether the column holds plain `DatabaseValue`s (its values are not all of one storage
    /// class).
    var holdsPlainValues: Bool { storage == .values }

    var count: Int {
        switch storage {
        case .integers: integers.count
        case .texts: texts.count
        case .reals: reals.count
        case .values: values.count
        }
    }

    mutating func reserveCapacity(_ count: Int) {
        capacity = Swift.max(capacity, count)
        switch storage {
        case .integers: integers.reserveCapacity(count)
        case .texts: texts.reserveCapacity(count)
        case .reals: reals.reserveCapacity(count)
        case .values: values.reserveCapacity(count)
        }
    }

    /// Forgets every value, keeping the room; the next value chooses the storage again.
    mutating func removeAll() {
        integers.removeAll()
        texts.removeAll(keepingCapacity: true)
        reals.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        storage = .integers
    }

    subscript(slot: Int) -> DatabaseValue {
        switch storage {
        case .integers: integers[slot].databaseValue
        case .texts: texts[slot].databaseValue
        case .reals: reals[slot].databaseValue
        case .values: values[slot]
        }
    }

    mutating func append(_ value: DatabaseValue) {
        if count == 0 { choose(for: value) }
        switch (storage, value.storage) {
        case (.integers, .int64(let integer)): integers.append(integer)
        case (.texts, .string(let text)): texts.append(text)
        case (.reals, .double(let real)): reals.append(real)
        case (.values, _): values.append(value)
        default:
            widen()
            values.append(value)
        }
    }

    /// Replaces the value in `slot`.
    mutating func set(_ value: DatabaseValue, at slot: Int) {
        switch (storage, value.storage) {
        case (.integers, .int64(let integer)): integers.set(integer, at: slot)
        case (.texts, .string(let text)): texts[slot] = text
        case (.reals, .double(let real)): reals[slot] = real
        case (.values, _): values[slot] = value
        default:
            widen()
            values[slot] = value
        }
    }

    /// Puts `value` at `slot` (``ItemSlots/insert(_:)``): replaces the value there, or appends
    /// it, after fillers when `slot` is past the end.
    mutating func place(_ value: DatabaseValue, at slot: Int) {
        if slot < count {
            set(value, at: slot)
            return
        }
        if count == 0 { choose(for: value) }
        if slot > count {
            let fillers = slot - count
            switch storage {
            case .integers: integers.appendZeros(fillers)
            case .texts: texts.append(contentsOf: repeatElement("", count: fillers))
            case .reals: reals.append(contentsOf: repeatElement(0, count: fillers))
            case .values: values.append(contentsOf: repeatElement(.null, count: fillers))
            }
        }
        append(value)
    }

    /// Applies an ``ItemSlots/Removal``: a hole holds a filler (an empty text releases what
    /// the value held).
    mutating func apply(_ removal: ItemSlots.Removal) {
        switch storage {
        case .integers: integers.apply(removal)
        case .texts: texts.apply(removal, filler: "")
        case .reals: reals.apply(removal, filler: 0)
        case .values: values.apply(removal, filler: .null)
        }
    }

    /// Applies an ``ItemSlots/Relayout``.
    mutating func apply(_ relayout: ItemSlots.Relayout) {
        capacity = Swift.max(capacity, relayout.capacity)
        switch storage {
        case .integers: integers.apply(relayout)
        case .texts: texts.apply(relayout, filler: "")
        case .reals: reals.apply(relayout, filler: 0)
        case .values: values.apply(relayout, filler: .null)
        }
    }

    /// The storage for a column whose first value is `value`.
    private mutating func choose(for value: DatabaseValue) {
        switch value.storage {
        case .int64: storage = .integers
        case .string: storage = .texts
        case .double: storage = .reals
        default: storage = .values
        }
        // Only the chosen storage keeps room (a refetch keeps the room it had).
        if storage != .integers { integers = NarrowIntegers() }
        if storage != .texts { texts = [] }
        if storage != .reals { reals = [] }
        if storage != .values { values = [] }
        reserveCapacity(capacity)
    }

    /// Turns the column into plain values (a value of another storage class came).
    private mutating func widen() {
        var widened = ContiguousArray<DatabaseValue>()
        widened.reserveCapacity(Swift.max(capacity, count + 1))
        for slot in 0..<count { widened.append(self[slot]) }
        integers = NarrowIntegers()
        texts = []
        reals = []
        values = widened
        storage = .values
    }
}
