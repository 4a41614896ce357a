import AsyncHTTPClient
import CohortBase
import Foundation
import NIOCore
import NIOSSL

/// Why a request to a server never got an answer, in words a user can act on, from the errors of
/// AsyncHTTPClient, NIO and BoringSSL (whose own descriptions are library dumps).
enum NetworkFailure {
    /// How every such error starts: what `CohortError.isUnreachedServer` recognises.
    static let lead = "cannot reach "

    static func error(_ error: any Error, url: String) -> CohortError {
        let address = URLComponents(string: url).flatMap { parts in parts.host.map { host in
            parts.port.map { "\(host):\($0)" } ?? host
        } } ?? url
        let (reason, hint) = describe(error, address: address, https: url.lowercased().hasPrefix("https:"))
        return CohortError(.network, "\(lead)\(url): \(reason)", hint: hint)
    }

    static func describe(_ error: any Error, address: String, https: Bool) -> (String, String) {
        let running = "check the address, and that the server runs and this machine can reach it"
        if let io = error as? IOError {
            return describe(errno: io.errnoCode, address: address) ?? ("\(address): \(String(cString: strerror(io.errnoCode)))", running)
        }
        if error is NIOSSLError || error is BoringSSLError {
            let text = String(describing: error).lowercased()
            if text.contains("wrong_version_number") || text.contains("http_request") {
                return ("\(address) does not speak HTTPS", "try the link with http:// instead of https://")
            }
            if text.contains("certificate") {
                return ("the certificate of \(address) is not trusted here",
                        "check the address; a server with its own certificate authority needs it installed on this machine")
            }
            return ("the secure connection to \(address) failed", running)
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .connectTimeout: return ("\(address) did not answer in time", running)
            case .deadlineExceeded, .readTimeout, .writeTimeout: return ("\(address) stopped answering", "try again; \(running)")
            case .tlsHandshakeTimeout: return ("the secure connection to \(address) timed out", running)
            case .remoteConnectionClosed:
                return https ? ("\(address) closed the connection", running)
                    : ("\(address) closed the connection", "if the server uses TLS, try the link with https://")
            default: break
            }
        }
        let text = String(describing: error)
        if text.contains("UnknownHost") || text.localizedCaseInsensitiveContains("name or service not known")
            || text.localizedCaseInsensitiveContains("temporary failure in name resolution") {
            let host = address.split(separator: ":").first.map(String.init) ?? address
            return ("the name \(host) does not resolve", "check the spelling of the address, and this machine's network")
        }
        for code in [ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH] where text.contains("errno: \(code))") {
            if let described = describe(errno: code, address: address) { return described }
        }
        return (String(text.prefix(160)).replacingOccurrences(of: "\n", with: " "), running)
    }

    private static func describe(errno code: Int32, address: String) -> (String, String)? {
        switch code {
        case ECONNREFUSED: ("nothing is listening at \(address) (connection refused)", "check the address and that the server runs")
        case ECONNRESET: ("\(address) reset the connection", "try again; if the server uses TLS, try the link with https://")
        case ETIMEDOUT: ("\(address) did not answer in time", "check the address, and that this machine can reach it")
        case EHOSTUNREACH, ENETUNREACH: ("no route to \(address)", "check this machine's network")
        default: nil
        }
    }
}

extension CohortError {
    /// Whether this is a server that never answered (`NetworkFailure`), as opposed to one that
    /// answered, but not in Cohort's API (also `E_NETWORK`).
    public var isUnreachedServer: Bool {
        code == .network && reason.hasPrefix(NetworkFailure.lead)
    }
}
