/// Integers, each read back as an `Int64`, stored in the narrowest of 1, 2, 4 and 8 bytes
/// that holds every one so far: a Boolean or a small number takes a byte, a position four.
/// A value that does not fit makes the whole array wider (one copy; at most three before it
/// is cleared), never narrower.
struct NarrowIntegers: Sendable {
    private enum Width: Int, Comparable {
        case one = 1, two = 2, four = 4, eight = 8
        static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The narrowest width that holds `value`.
        init(fitting value: Int64) {
            if Int64(Int8.min)...Int64(Int8.max) ~= value {
                self = .one
            } else if Int64(Int16.min)...Int64(Int16.max) ~= value {
                self = .two
            } else if Int64(Int32.min)...Int64(Int32.max) ~= value {
                self = .four
            } else {
                self = .eight
            }
        }
    }

    private var width = Width.one
    private var ones: ContiguousArray<Int8> = []
    private var twos: ContiguousArray<Int16> = []
    private var fours: ContiguousArray<Int32> = []
    private var eights: ContiguousArray<Int64> = []
    /// The room asked for, kept across widenings.
    private var room = 0

    init() {}

    /// The bytes each value takes now (for tests and measurements).
    var bytesPerValue: Int { width.rawValue }

    var count: Int {
        switch width {
        case .one: ones.count
        case .two: twos.count
        case .four: fours.count
        case .eight: eights.count
        }
    }

    /// The values the storage of the width in use has room for.
    var capacity: Int {
        switch width {
        case .one: ones.capacity
        case .two: twos.capacity
        case .four: fours.capacity
        case .eight: eights.capacity
        }
    }

    mutating func reserveCapacity(_ count: Int) {
        room = Swift.max(room, count)
        switch width {
        case .one: ones.reserveCapacity(count)
        case .two: twos.reserveCapacity(count)
        case .four: fours.reserveCapacity(count)
        case .eight: eights.reserveCapacity(count)
        }
    }

    /// Forgets every value, keeping the room of the width in use; the next values choose the
    /// width again, from one byte.
    mutating func removeAll() {
        ones.removeAll(keepingCapacity: width == .one)
        twos.removeAll(keepingCapacity: width == .two)
        fours.removeAll(keepingCapacity: width == .four)
        eights.removeAll(keepingCapacity: width == .eight)
        if width != .one {
            width = .one
            ones.reserveCapacity(room)
        }
    }

    @inline(__always)
    subscript(slot: Int) -> Int64 {
        switch width {
        case .one: Int64(ones[slot])
        case .two: Int64(twos[slot])
        case .four: Int64(fours[slot])
        case .eight: eights[slot]
        }
    }

    mutating func append(_ value: Int64) {
        fit(value)
        switch width {
        case .one: ones.append(Int8(truncatingIfNeeded: value))
        case .two: twos.append(Int16(truncatingIfNeeded: value))
        case .four: fours.append(Int32(truncatingIfNeeded: value))
        case .eight: eights.append(value)
        }
    }

    /// Appends `count` zeros (holes, see ``ItemSlots``).
    mutating func appendZeros(_ count: Int) {
        switch width {
        case .one: ones.append(contentsOf: repeatElement(0, count: count))
        case .two: twos.append(contentsOf: repeatElement(0, count: count))
        case .four: fours.append(contentsOf: repeatElement(0, count: count))
        case .eight: eights.append(contentsOf: repeatElement(0, count: count))
        }
    }

    mutating func set(_ value: Int64, at slot: Int) {
        fit(value)
        switch width {
        case .one: ones[slot] = Int8(truncatingIfNeeded: value)
        case .two: twos[slot] = Int16(truncatingIfNeeded: value)
        case .four: fours[slot] = Int32(truncatingIfNeeded: value)
        case .eight: eights[slot] = value
        }
    }

    /// Applies an ``ItemSlots/Removal`` (a hole holds a zero).
    mutating func apply(_ removal: ItemSlots.Removal) {
        switch width {
        case .one: ones.apply(removal, filler: 0)
        case .two: twos.apply(removal, filler: 0)
        case .four: fours.apply(removal, filler: 0)
        case .eight: eights.apply(removal, filler: 0)
        }
    }

    /// Applies an ``ItemSlots/Relayout`` (holes hold zeros).
    mutating func apply(_ relayout: ItemSlots.Relayout) {
        room = Swift.max(room, relayout.capacity)
        switch width {
        case .one: ones.apply(relayout, filler: 0)
        case .two: twos.apply(relayout, filler: 0)
        case .four: fours.apply(relayout, filler: 0)
        case .eight: eights.apply(relayout, filler: 0)
        }
    }

    /// Widens the storage when `value` does not fit it.
    @inline(__always)
    private mutating func fit(_ value: Int64) {
        let needed = Width(fitting: value)
        if needed > width { widen(to: needed) }
    }

    private mutating func widen(to wider: Width) {
        let values = (0..<count).map { self[$0] }
        let room = Swift.max(self.room, values.count + 1)
        ones = []
        twos = []
        fours = []
        eights = []
        width = wider
        switch wider {
        case .one: ones.reserveCapacity(room)
        case .two: twos.reserveCapacity(room)
        case .four: fours.reserveCapacity(room)
        case .eight: eights.reserveCapacity(room)
        }
        for value in values {
            switch wider {
            case .one: ones.append(Int8(truncatingIfNeeded: value))
            case .two: twos.append(Int16(truncatingIfNeeded: value))
            case .four: fours.append(Int32(truncatingIfNeeded: value))
            case .eight: eights.append(value)
            }
        }
    }
}
