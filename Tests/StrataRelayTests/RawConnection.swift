import Foundation

#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private func closeDescriptor(_ descriptor: Int32) { _ = Glibc.close(descriptor) }
private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    Glibc.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
}
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
private func closeDescriptor(_ descriptor: Int32) { _ = Darwin.close(descriptor) }
private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { Darwin.send(descriptor, bytes, count, 0) }
#endif

/// A TCP connection to a relay, byte for byte, for what `URLSession` never sends: half a
/// request, a body shorter than its `Content-Length`, a connection left open and silent.
/// Every call blocks (with a deadline): use it inside `offThePool`.
final class RawConnection: @unchecked Sendable {
    private var descriptor: Int32

    /// Connects to `url`'s host (an IPv4 address) and port.
    init(_ url: URL) throws {
        descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { throw RawConnectionError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(url.port ?? 80).bigEndian)
        guard inet_pton(AF_INET, url.host ?? "127.0.0.1", &address.sin_addr) == 1 else {
            closeDescriptor(descriptor)
            throw RawConnectionError("not an IPv4 address: \(url.host ?? "")")
        }
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let descriptor = descriptor
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            closeDescriptor(descriptor)
            throw RawConnectionError("connect: errno \(code)")
        }
    }

    deinit { close() }

    /// Sends every byte; false when the relay closed the connection (or reset it) first.
    @discardableResult
    func send(_ data: Data) -> Bool {
        guard descriptor >= 0 else { return false }
        return data.withUnsafeBytes { buffer in
            var sent = 0
            while sent < buffer.count {
                let count = sendBytes(descriptor, buffer.baseAddress! + sent, buffer.count - sent)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Data(text.utf8)) }

    /// Whether the relay has sent something (or closed) within `timeout`.
    func isReadable(within timeout: Duration) -> Bool {
        guard descriptor >= 0 else { return true }
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return poll(&ready, 1, milliseconds) > 0
    }

    /// Ends the sending side (the relay reads the end of the stream), keeping the reading side.
    func shutdownWrite() { if descriptor >= 0 { shutdown(descriptor, Int32(SHUT_WR)) } }

    func close() {
        if descriptor >= 0 { closeDescriptor(descriptor) }
        descriptor = -1
    }

    /// What the relay sends until it closes the connection, or until `timeout`; `closed` says
    /// whether it closed it (an end of stream, or a reset).
    func readUntilClosed(timeout: Duration) -> (data: Data, closed: Bool) { read(timeout: timeout) { _ in false } }

    /// What the relay sends until `done` says what came suffices, it closes the connection, or
    /// `timeout`; `closed` says whether it closed it (an end of stream, or a reset).
    func read(timeout: Duration, until done: (Data) -> Bool) -> (data: Data, closed: Bool) {
        var data = Data()
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while descriptor >= 0 {
            if done(data) { return (data, false) }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, isReadable(within: left) else { return (data, false) }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return (data, true) }
            data.append(contentsOf: buffer[..<count])
        }
        return (data, true)
    }

    /// Reads one HTTP answer (its head, then its body by `Content-Length` or chunks), within
    /// `timeout`; nil when the connection closed or the time ran out before a whole answer.
    func readAnswer(timeout: Duration) -> HTTPAnswer? {
        var data = Data()
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while descriptor >= 0 {
            if let answer = Self.parse(data) { return answer }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, isReadable(within: left) else { return nil }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return Self.parse(data) }
            data.append(contentsOf: buffer[..<count])
        }
        return nil
    }

    /// The head of an answer whose body does not end (a signals stream), and its body as far
    /// as it came (de-chunked), once `enough` says that body suffices, or at `timeout`; nil
    /// when no whole head came.
    func readStreamingAnswer(timeout: Duration, until enough: (Data) -> Bool) -> HTTPAnswer? {
        var data = Data()
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while descriptor >= 0 {
            let answer = Self.parseStart(data)
            if let answer, enough(answer.body) { return answer }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, isReadable(within: left) else { return answer }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return Self.parseStart(data) }
            data.append(contentsOf: buffer[..<count])
        }
        return nil
    }

    /// A whole HTTP/1.1 answer at the start of `data`, or nil while it is incomplete.
    static func parse(_ data: Data) -> HTTPAnswer? {
        guard case let (status, headers, rest)? = parseHead(data) else { return nil }
        if let length = headers["content-length"].flatMap(Int.init) {
            guard rest.count >= length else { return nil }
            return HTTPAnswer(status: status, headers: headers, body: rest.prefix(length))
        }
        guard headers["transfer-encoding"]?.lowercased() == "chunked" else {
            return HTTPAnswer(status: status, headers: headers, body: Data())
        }
        guard let chunks = dechunk(rest), chunks.ended else { return nil }
        return HTTPAnswer(status: status, headers: headers, body: chunks.body)
    }

    /// The head at the start of `data`, and its body as far as it came (its whole chunks, for
    /// a chunked one); nil while the head is incomplete.
    static func parseStart(_ data: Data) -> HTTPAnswer? {
        guard case let (status, headers, rest)? = parseHead(data) else { return nil }
        if let length = headers["content-length"].flatMap(Int.init) {
            return HTTPAnswer(status: status, headers: headers, body: rest.prefix(length))
        }
        guard headers["transfer-encoding"]?.lowercased() == "chunked" else { return HTTPAnswer(status: status, headers: headers, body: rest) }
        return HTTPAnswer(status: status, headers: headers, body: dechunk(rest)?.body ?? Data())
    }

    /// The status line and headers (names in lower case) at the start of `data`, and the bytes
    /// after them; nil while the head is incomplete.
    static func parseHead(_ data: Data) -> (status: Int, headers: [String: String], rest: Data)? {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, Data(data[end.upperBound...]))
    }

    /// The payload of the whole chunks at the start of `data`, and whether the last chunk (of
    /// size 0) was among them; nil when a chunk's size line is not one.
    static func dechunk(_ data: Data) -> (body: Data, ended: Bool)? {
        var rest = data
        var body = Data()
        while true {
            guard let lineEnd = rest.firstRange(of: Data("\r\n".utf8)) else { return (body, false) }
            guard let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16) else { return nil }
            let start = lineEnd.upperBound
            guard rest.count >= start + size + 2 else { return (body, false) }
            if size == 0 { return (body, true) }
            body.append(rest[start..<(start + size)])
            rest = Data(rest[(start + size + 2)...])
        }
    }

    /// The head of a request to the relay at `path`, signed with `token` (its `Host` is the
    /// relay's); `headers` adds lines ("Content-Length: 10").
    static func head(_ method: String, _ path: String, token: String?, headers: [String]) -> String {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1"]
        if let token { lines.append("Authorization: Bearer \(token)") }
        lines += headers
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }
}

struct RawConnectionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
