import GRDB

/// Where a user's drop puts an item in a list whose rows of several parents sort among each
/// other: a request sorted by values of the parent (`list.rank`), then the position, where
/// parents of equal values mix their children by position (then the later keys, then id).
///
/// Siblings alone cannot place the item there: "right after the previous row among its
/// siblings" can land after rows of another parent that the user saw after the drop, and a
/// rebalance of its siblings would move them among the other parents' rows. So the item's
/// position alone is chosen, in the request's own order: the positions that sort it after
/// the row it was dropped after and before the row it was dropped before (ties broken as
/// the request breaks them) form a range; the item keeps its position when it is in the
/// range already, takes the middle of it otherwise, and the move is refused when the range
/// is empty. (`ResultsController.moveItem`, Docs/Decisions.md)
enum InterleavedPlacement {
    /// A row's id and its values of the request's sort keys.
    struct Row {
        var id: Int64
        var keys: [DatabaseValue]
    }

    /// The positions that sort `item` (whose position is its key at `positionIndex`) after
    /// `previous` and before `next` in the order of the sort keys (`descending` per key,
    /// ties by id); nil when none does.
    static func positions(
        of item: Row, after previous: Row?, before next: Row?, positionIndex: Int, descending: [Bool]
    ) -> ClosedRange<Int64>? {
        func keys(at position: Int64) -> [DatabaseValue] {
            var keys = item.keys
            keys[positionIndex] = position.databaseValue
            return keys
        }
        func afterPrevious(_ position: Int64) -> Bool {
            guard let previous else { return true }
            return DatabaseValueOrdering.compare(previous.keys, id: previous.id, keys(at: position), id: item.id, descending: descending) < 0
        }
        func beforeNext(_ position: Int64) -> Bool {
            guard let next else { return true }
            return DatabaseValueOrdering.compare(keys(at: position), id: item.id, next.keys, id: next.id, descending: descending) < 0
        }
        // A greater position sorts the item later (earlier when the position descends), so
        // each condition holds on one side of a threshold.
        let low: Int64?, high: Int64?
        if positionIndex < descending.count && descending[positionIndex] {
            (low, high) = (firstTrue(beforeNext), lastTrue(afterPrevious))
        } else {
            (low, high) = (firstTrue(afterPrevious), lastTrue(beforeNext))
        }
        guard let low, let high, low <= high else { return nil }
        return low...high
    }

    /// The position to write, in `range`: `current` when it is in the range (nothing to
    /// write), otherwise the middle of the range, or a gap inside a bound when the range is
    /// open on one side.
    static func position(in range: ClosedRange<Int64>, current: Int64?) -> Int64 {
        if let current, range.contains(current) { return current }
        let gap = OrderedPositions.gap
        switch (range.lowerBound == .min, range.upperBound == .max) {
        case (true, true): return gap
        case (false, true):
            let (position, overflow) = range.lowerBound.addingReportingOverflow(gap)
            if !overflow { return position }
        case (true, false):
            let (position, overflow) = range.upperBound.subtractingReportingOverflow(gap)
            if !overflow { return position }
        case (false, false): break
        }
        let low = unsigned(range.lowerBound), high = unsigned(range.upperBound)
        return signed(low + (high - low) / 2)
    }

    // MARK: - Thresholds over all 64-bit integers

    /// Int64 to UInt64, order kept.
    private static func unsigned(_ value: Int64) -> UInt64 { UInt64(bitPattern: value) ^ (1 << 63) }
    private static func signed(_ value: UInt64) -> Int64 { Int64(bitPattern: value ^ (1 << 63)) }

    /// The least integer where `condition` (false, then true) holds; nil when it never does.
    private static func firstTrue(_ condition: (Int64) -> Bool) -> Int64? {
        guard condition(.max) else { return nil }
        if condition(.min) { return .min }
        var low = unsigned(.min), high = unsigned(.max)  // false at low, true at high
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if condition(signed(middle)) { high = middle } else { low = middle }
        }
        return signed(high)
    }

    /// The greatest integer where `condition` (true, then false) holds; nil when it never does.
    private static func lastTrue(_ condition: (Int64) -> Bool) -> Int64? {
        guard condition(.min) else { return nil }
        if condition(.max) { return .max }
        var low = unsigned(.min), high = unsigned(.max)  // true at low, false at high
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if condition(signed(middle)) { low = middle } else { high = middle }
        }
        return signed(low)
    }
}
