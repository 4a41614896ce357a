import CohortBase
import Foundation

/// Whether `cohort serve` can listen where it was told, checked with a socket of its own before
/// anything is created on disk, and its failures in one line.
enum ListenProbe {
    static func check(host: String, port: Int, as text: String) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw CohortError(.network, "cannot listen on \(text): \(String(cString: gai_strerror(status)))",
                              hint: "give an address of this machine, e.g. 127.0.0.1:8377 or :8377")
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0 {
            throw failure(errno: errno, listening: text)
        }
    }

    static func failure(errno code: Int32, listening text: String) -> CohortError {
        switch code {
        case EADDRINUSE:
            return CohortError(.network, "cannot listen on \(text): the port is already in use",
                               hint: "stop what listens there, or choose another port with --listen")
        case EACCES:
            return CohortError(.network, "cannot listen on \(text): permission denied",
                               hint: "ports below 1024 need privileges: use a port above 1024 behind a reverse proxy")
        case EADDRNOTAVAIL:
            return CohortError(.network, "cannot listen on \(text): no such address on this machine",
                               hint: "give an address of this machine, e.g. 127.0.0.1:8377 or :8377")
        default:
            return CohortError(.network, "cannot listen on \(text): \(String(cString: strerror(code)))",
                               hint: "check --listen, e.g. 127.0.0.1:8377 or :8377")
        }
    }

    /// An error from the server's own start (after the check, something took the port).
    static func failure(_ error: Error, listening text: String) -> CohortError {
        let description = String(describing: error)
        if description.contains("Address already in use") { return failure(errno: EADDRINUSE, listening: text) }
        if description.contains("Permission denied") { return failure(errno: EACCES, listening: text) }
        return CohortError(.network, "cannot serve on \(text): \(description.prefix(200))",
                           hint: "check --listen and the TLS files; the log on standard error says more")
    }
}
