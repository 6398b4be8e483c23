import Dispatch

/// The last snapshot's values laid out by id on another thread, for a commit's refetch that
/// reads its rows in table order: once laid out, the value of the row being read is next to
/// the last one taken, where a look-up in the last snapshot's rows (in the results' order)
/// costs a cache miss a row, about what decoding the row costs.
///
/// The values are copied into a buffer with a slot per id of the table's range, on a serial
/// queue of their own, from the moment the refetch starts; the refetch decodes its rows until
/// they are ready (``isReady``, which never waits) and then takes each row's value
/// (``take(_:)``), reading again only the columns the commit wrote
/// (``StrataEntity/strataRead(_:at:)``). Values not taken are released with the buffer.
final class HeldValues<Item: StrataEntity>: @unchecked Sendable {
    private let base: Int64
    private let slots: UnsafeMutableBufferPointer<Item?>
    private let laidOut = DispatchGroup()
    /// Set on the refetch's thread once ``isReady`` saw the values laid out.
    private var ready = false

    /// Lays out, on another thread, the values that `values` calls its argument with (each
    /// id once), for the ids of `range`; nil when the range is much wider than `count` (the
    /// values held), where a slot per id would cost more than it saves.
    init?(
        range: ClosedRange<Int64>?, count: Int,
        values: @escaping @Sendable (_ body: (Item) -> Void) -> Void
    ) {
        guard let range, count > 0 else { return nil }
        let (width, overflow) = range.upperBound.subtractingReportingOverflow(range.lowerBound)
        guard !overflow, width < Int64(2 * count + 1_024) else { return nil }
        base = range.lowerBound
        slots = .allocate(capacity: Int(width) + 1)
        laidOut.enter()
        DispatchQueue(label: "strata.results.held-values").async { [self] in
            // Initialized here too: the pages are first touched on this thread.
            slots.initialize(repeating: nil)
            values { item in
                let offset = item.objectID.rawValue &- base
                if offset >= 0 && offset < Int64(slots.count) { slots[Int(offset)] = item }
            }
            laidOut.leave()
        }
    }

    deinit {
        // The values may still be laid out (a refetch that failed early).
        laidOut.wait()
        slots.deinitialize()
        slots.deallocate()
    }

    /// Whether the values are laid out; never waits. Once true, stays true.
    var isReady: Bool {
        if !ready { ready = laidOut.wait(timeout: .now()) == .success }
        return ready
    }

    /// Waits until the values are laid out (tests: every row then takes its value).
    func waitUntilLaidOut() {
        laidOut.wait()
        ready = true
    }

    /// The value of the item `id`, taken out (a second call returns nil); nil when none was
    /// held. Only once ``isReady`` returned true.
    func take(_ id: Int64) -> Item? {
        precondition(ready, "values taken before they were laid out")
        let offset = id &- base
        guard offset >= 0 && offset < Int64(slots.count) else { return nil }
        var item: Item?
        swap(&item, &slots[Int(offset)])
        return item
    }
}
