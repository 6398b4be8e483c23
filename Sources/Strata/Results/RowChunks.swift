/// A random-access sequence stored as consecutive chunks of at most ``maximumChunk``
/// elements: the storage of ``ResultsRows`` (eager rows, batched ids) and of the sectioned
/// index's ids.
///
/// Snapshots are values that share their rows, and every change makes a new snapshot from the
/// last one. With one flat array per section, inserting, removing or moving one row of a
/// 100,000-row section copied the whole array (and retained every item in it) because the
/// previous snapshot still held it. Here a change copies the chunk it touches and the small
/// array of chunk references (each retained): its cost grows with the chunk size and the
/// number of chunks, not with n. 256 puts both near √n for the sections that matter (at
/// 100,000 rows, 256 and 391; at 2,000, one chunk copy of 256 instead of 1,024 cut a
/// one-row commit at 100,000 notes in 50 sections by about a sixth, one run each on a busy
/// machine). Reading element `i` finds its
/// chunk by binary search over the chunks' cumulative ends.
///
/// Chunks are never empty; a chunk that grows past twice the maximum is split in two.
struct RowChunks<Element>: RandomAccessCollection {
    /// The most elements a chunk is filled with when built or appended to.
    static var maximumChunk: Int { 256 }

    private(set) var chunks: [[Element]] = []
    /// `ends[c]`: the number of elements in chunks `0...c`.
    private(set) var ends: [Int] = []

    init() {}

    init(_ elements: some Sequence<Element>) {
        append(contentsOf: elements)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { ends.last ?? 0 }

    // The index arithmetic of `RandomAccessCollection`, written out: the defaults reach it
    // through the protocol's generic code, which in code not specialized for the element
    // type (a client's item) looks up type metadata at every call — `count` in a loop that
    // rebuilt a section's rows was a fifth of a 10,000-row commit.
    var count: Int { ends.last ?? 0 }
    var isEmpty: Bool { count == 0 }
    var indices: Range<Int> { 0..<count }
    func index(after i: Int) -> Int { i + 1 }
    func index(before i: Int) -> Int { i - 1 }
    func index(_ i: Int, offsetBy distance: Int) -> Int { i + distance }
    func distance(from start: Int, to end: Int) -> Int { end - start }

    /// The chunk holding element `position`, and the element's offset in it.
    @inline(__always)
    private func locate(_ position: Int) -> (chunk: Int, offset: Int) {
        precondition(position >= 0 && position < endIndex, "index out of range")
        var low = 0, high = ends.count - 1
        while low < high {
            let mid = (low + high) / 2
            if ends[mid] <= position { low = mid + 1 } else { high = mid }
        }
        return (low, position - (low == 0 ? 0 : ends[low - 1]))
    }

    subscript(position: Int) -> Element {
        let (chunk, offset) = locate(position)
        return chunks[chunk][offset]
    }

    func makeIterator() -> Iterator { Iterator(chunks: chunks) }

    /// The elements in one array, chunk by chunk: `Array(chunks)` would copy them one at a
    /// time through the iterator, which for a client's item type runs as unspecialized
    /// generic code (the identity difference flattens the sections it compares).
    var flattened: [Element] {
        guard chunks.count > 1 else { return chunks.first ?? [] }
        var elements: [Element] = []
        elements.reserveCapacity(endIndex)
        for chunk in chunks { elements.append(contentsOf: chunk) }
        return elements
    }

    /// Walks the chunks without locating each element.
    struct Iterator: IteratorProtocol {
        let chunks: [[Element]]
        var chunk = 0, offset = 0

        init(chunks: [[Element]]) { self.chunks = chunks }

        mutating func next() -> Element? {
            while chunk < chunks.count {
                if offset < chunks[chunk].count {
                    defer { offset += 1 }
                    return chunks[chunk][offset]
                }
                chunk += 1
                offset = 0
            }
            return nil
        }
    }

    // MARK: - Changes

    mutating func append(_ element: Element) {
        if chunks.isEmpty || chunks[chunks.count - 1].count >= Self.maximumChunk {
            // Not reserved: a section of three rows must not hold room for a thousand.
            chunks.append([])
            ends.append(endIndex)
        }
        chunks[chunks.count - 1].append(element)
        ends[ends.count - 1] += 1
    }

    mutating func append(contentsOf elements: some Sequence<Element>) {
        for element in elements { append(element) }
    }

    /// Appends the elements of `other` in `range`; whole chunks of `other` are shared, not
    /// copied, when they line up with this sequence's own chunks.
    mutating func append(from other: RowChunks, _ range: Range<Int>) {
        var position = range.lowerBound
        while position < range.upperBound {
            let (chunk, offset) = other.locate(position)
            let source = other.chunks[chunk]
            let take = Swift.min(source.count - offset, range.upperBound - position)
            if offset == 0 && take == source.count && (chunks.isEmpty || chunks[chunks.count - 1].count >= Self.maximumChunk / 2) {
                chunks.append(source)
                ends.append(endIndex + take)
            } else {
                // In runs that fill the last chunk, as appending one element at a time would:
                // one copy of each run (element by element, unspecialized code looks up type
                // metadata at every step; a 10,000-row commit spent a sixth of its time there).
                var copied = offset
                while copied < offset + take {
                    if chunks.isEmpty || chunks[chunks.count - 1].count >= Self.maximumChunk {
                        chunks.append([])
                        ends.append(endIndex)
                    }
                    let run = Swift.min(Self.maximumChunk - chunks[chunks.count - 1].count, offset + take - copied)
                    chunks[chunks.count - 1].append(contentsOf: source[copied..<(copied + run)])
                    ends[ends.count - 1] += run
                    copied += run
                }
            }
            position += take
        }
    }

    mutating func insert(_ element: Element, at position: Int) {
        precondition(position >= 0 && position <= endIndex, "index out of range")
        if position == endIndex {
            append(element)
            return
        }
        let (chunk, offset) = locate(position)
        chunks[chunk].insert(element, at: offset)
        for c in chunk..<ends.count { ends[c] += 1 }
        if chunks[chunk].count > 2 * Self.maximumChunk { split(chunk) }
    }

    @discardableResult
    mutating func remove(at position: Int) -> Element {
        let (chunk, offset) = locate(position)
        let element = chunks[chunk].remove(at: offset)
        for c in chunk..<ends.count { ends[c] -= 1 }
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            ends.remove(at: chunk)
        }
        return element
    }

    mutating func replace(at position: Int, with element: Element) {
        let (chunk, offset) = locate(position)
        chunks[chunk][offset] = element
    }

    private mutating func split(_ chunk: Int) {
        let half = chunks[chunk].count / 2
        let tail = Array(chunks[chunk][half...])
        chunks[chunk].removeSubrange(half...)
        chunks.insert(tail, at: chunk + 1)
        ends.insert(ends[chunk], at: chunk + 1)
        ends[chunk] -= tail.count
    }

    /// Whether the two hold the same chunk buffers: then their elements are the same, without
    /// comparing them (a snapshot and the next one share every chunk a change did not touch).
    func sharesStorage(with other: RowChunks) -> Bool {
        guard chunks.count == other.chunks.count, ends == other.ends else { return false }
        for (a, b) in zip(chunks, other.chunks) where !Self.sameBuffer(a, b) { return false }
        return true
    }

    /// Whether chunk `index` of both is one buffer.
    func sharesChunk(_ index: Int, with other: RowChunks) -> Bool { Self.sameBuffer(chunks[index], other.chunks[index]) }

    private static func sameBuffer(_ a: [Element], _ b: [Element]) -> Bool {
        a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress && x.count == y.count } }
    }

    /// Checks the chunks and their ends (debug builds only).
    func _checkInvariants() {
        #if DEBUG
        precondition(chunks.count == ends.count, "one end per chunk")
        var total = 0
        for (chunk, end) in zip(chunks, ends) {
            precondition(!chunk.isEmpty, "an empty chunk")
            precondition(chunk.count <= 2 * Self.maximumChunk, "a chunk past twice the maximum")
            total += chunk.count
            precondition(end == total, "ends out of date")
        }
        #endif
    }
}

extension RowChunks: Sendable where Element: Sendable {}

extension RowChunks: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension RowChunks where Element: Equatable {
    /// The first position of `element`: a search of each chunk's array in turn (the
    /// collection's default locates every position by binary search).
    func firstIndex(of element: Element) -> Int? {
        var start = 0
        for (chunk, end) in zip(chunks, ends) {
            if let offset = chunk.firstIndex(of: element) { return start + offset }
            start = end
        }
        return nil
    }

    func contains(_ element: Element) -> Bool { firstIndex(of: element) != nil }
}

extension RowChunks where Element == Int64 {
    /// The first position of the id `element`: each chunk scanned eight ids at a time (a
    /// batched index finds a changed item's old place this way, its old keys being gone).
    func firstIndex(of element: Int64) -> Int? {
        var start = 0
        for (chunk, end) in zip(chunks, ends) {
            if let offset = Self.firstOffset(of: element, in: chunk) { return start + offset }
            start = end
        }
        return nil
    }

    func contains(_ element: Int64) -> Bool { firstIndex(of: element) != nil }

    private static func firstOffset(of element: Int64, in chunk: [Int64]) -> Int? {
        chunk.withUnsafeBufferPointer { buffer in
            var index = 0
            if let base = buffer.baseAddress {
                let target = SIMD8<Int64>(repeating: element)
                let raw = UnsafeRawPointer(base)
                while index + 8 <= buffer.count {
                    if any(raw.loadUnaligned(fromByteOffset: index &* 8, as: SIMD8<Int64>.self) .== target) { break }
                    index &+= 8
                }
            }
            while index < buffer.count {
                if buffer[index] == element { return index }
                index += 1
            }
            return nil
        }
    }
}

extension RowChunks: Equatable where Element: Equatable {
    /// Element by element; chunks the two share are not compared.
    static func == (lhs: RowChunks, rhs: RowChunks) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.ends == rhs.ends {
            for index in lhs.chunks.indices where !lhs.sharesChunk(index, with: rhs) {
                if lhs.chunks[index] != rhs.chunks[index] { return false }
            }
            return true
        }
        return lhs.chunksEqual(rhs)
    }

    /// Element by element, walking the chunks of both in step (their boundaries differ): no
    /// element is located by a search of the chunks' ends.
    private func chunksEqual(_ other: RowChunks) -> Bool {
        var a = chunks.makeIterator(), b = other.chunks.makeIterator()
        var x = a.next()?[...] ?? [], y = b.next()?[...] ?? []
        while true {
            if x.isEmpty { guard let next = a.next() else { break }; x = next[...] }
            if y.isEmpty { guard let next = b.next() else { break }; y = next[...] }
            let count = Swift.min(x.count, y.count)
            guard x.prefix(count).elementsEqual(y.prefix(count)) else { return false }
            x = x.dropFirst(count)
            y = y.dropFirst(count)
        }
        return x.isEmpty && y.isEmpty && a.next() == nil && b.next() == nil
    }
}
