import AQSession
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `--osc PORT`: a UDP socket bound to one address (default 127.0.0.1, `--osc-host`), read by a
/// thread that hands every OSC message (``OSCMessage/parse(_:)``) to the handler
/// (docs/control.md).
///
/// Thread safety: `init` and `stop` from the main thread; the handler runs on the reader thread.
final class OSCServer: @unchecked Sendable {
    private let fd: Int32
    private let done = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds `host:port` and starts reading.
    /// - Throws: a message: the address is not IPv4, or the port is in use (or refused).
    init(host: String, port: Int, handler: @escaping @Sendable (OSCMessage, OSCPeer) -> Void) throws(OSCServerError) {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else {
            throw OSCServerError(message: "--osc-host '\(host)' is not an IPv4 address (e.g. 127.0.0.1)")
        }
        let sock = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard sock >= 0 else { throw OSCServerError(message: "--osc \(port): cannot make a UDP socket: \(String(cString: strerror(errno)))") }
        let bound = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            let why = String(cString: strerror(code))
            close(sock)
            throw OSCServerError(message: "--osc \(port): cannot listen on \(host):\(port) (\(why))\(code == EADDRINUSE ? ": the port is in use" : "")")
        }
        fd = sock
        let thread = Thread { [self] in
            var buf = [UInt8](repeating: 0, count: 65536)
            while !done.load(ordering: .relaxed) {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 100) > 0 else { continue }
                var from = sockaddr_in()
                var fromLength = socklen_t(MemoryLayout<sockaddr_in>.size)
                let n = withUnsafeMutablePointer(to: &from) { a in
                    a.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buf, buf.count, 0, $0, &fromLength) }
                }
                guard n > 0 else { continue }
                let peer = OSCPeer(address: from)
                if let messages = OSCMessage.parse(Array(buf[0..<n])) {
                    for m in messages { handler(m, peer) }
                } else {
                    handler(OSCMessage(address: "?", arguments: [.int(Int32(n))]), peer)
                }
            }
            finished.signal()
        }
        thread.name = "aqsync-osc"
        thread.start()
    }

    /// Sends `message` to `peer` from the server's own port (a UDP datagram; never blocks for
    /// long). Any thread; false when the socket is closed or the send failed.
    @discardableResult
    func send(_ message: OSCMessage, to peer: OSCPeer) -> Bool {
        guard !done.load(ordering: .relaxed) else { return false }
        let bytes = message.encoded()
        var to = peer.address
        let sent = withUnsafePointer(to: &to) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return sent == bytes.count
    }

    /// Stops the thread and closes the socket. Idempotent.
    func stop() {
        if done.exchange(true, ordering: .relaxed) { return }
        finished.wait()
        close(fd)
    }

    deinit { stop() }
}

/// Where an OSC message came from, or where one goes: an IPv4 address and UDP port.
///
/// Thread safety: a plain value; any thread.
struct OSCPeer: Sendable, Equatable {
    var address: sockaddr_in

    /// The sender's address with another port (a subscription's `port` argument).
    func with(port: Int) -> OSCPeer {
        var a = address
        a.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        return OSCPeer(address: a)
    }

    var port: Int { Int(UInt16(bigEndian: address.sin_port)) }

    var description: String {
        var a = address.sin_addr
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &a, &text, socklen_t(INET_ADDRSTRLEN))
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(host):\(port)"
    }

    static func == (a: OSCPeer, b: OSCPeer) -> Bool {
        a.address.sin_addr.s_addr == b.address.sin_addr.s_addr && a.address.sin_port == b.address.sin_port
    }
}

/// Why the OSC socket could not be opened.
struct OSCServerError: Error {
    var message: String
}
