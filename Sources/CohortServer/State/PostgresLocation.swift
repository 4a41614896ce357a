import CohortBase
import Foundation

/// Where a server's shared state lives: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, with
/// `?sslmode=disable|prefer|require` (default `require`, or `prefer` on loopback and a socket) and `?host=/run/postgresql` for a Unix socket
/// folder instead of TCP. A password may come from the URL or from `PGPASSWORD`; it is never shown:
/// `description` leaves it out.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public var user: String
    public var password: String?
    /// A host name or address, or nil with `socketDirectory`.
    public var host: String?
    public var port: Int
    public var socketDirectory: String?
    public var database: String
    public var tls: TLSMode

    /// Parses `text`; `environmentPassword` (`PGPASSWORD`) is used when the URL carries none.
    public init(_ text: String, environmentPassword: String? = ProcessInfo.processInfo.environment["PGPASSWORD"]) throws {
        let shape = "use postgres://USER@HOST[:PORT]/DATABASE (the password in PGPASSWORD or after USER:)"
        guard text.utf8.count <= 1024, let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? "") else {
            throw CohortError(.malformed, "the state store is not a postgres:// URL", hint: shape)
        }
        guard let user = url.user, !user.isEmpty else {
            throw CohortError(.malformed, "the state store URL names no user", hint: shape)
        }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw CohortError(.malformed, "the state store URL names no database", hint: shape)
        }
        var tls: TLSMode?
        var socketDirectory: String?
        for item in url.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw CohortError(.malformed, "sslmode must be disable, prefer or require",
                                      hint: "e.g. postgres://cohort@db.example.org/cohort?sslmode=require")
                }
                tls = mode
            case "host":
                guard let value = item.value, value.hasPrefix("/") else {
                    throw CohortError(.malformed, "the state store URL's host= must be a socket folder's absolute path",
                                      hint: "e.g. ?host=/run/postgresql, or put a TCP host after the @")
                }
                socketDirectory = value
            default:
                throw CohortError(.malformed, "the state store URL has an unknown parameter '\(item.name.prefix(32))'",
                                  hint: "only sslmode and host (a socket folder) are understood")
            }
        }
        let host = url.host.flatMap { $0.isEmpty ? nil : $0 }
        guard host != nil || socketDirectory != nil else {
            throw CohortError(.malformed, "the state store URL names no host", hint: shape)
        }
        self.user = user
        password = url.password ?? environmentPassword.flatMap { $0.isEmpty ? nil : $0 }
        self.host = socketDirectory == nil ? host : nil
        port = url.port ?? 5432
        self.socketDirectory = socketDirectory
        self.database = database
        // Off loopback, a connection that would fall back to plain text could be stripped of TLS and
        // have its answers forged: require it unless told otherwise.
        self.tls = tls ?? ((self.host.map { ServerConfiguration.isLoopback($0) } ?? true) ? .prefer : .require)
    }

    /// The socket's path, with `socketDirectory`.
    var socketPath: String? {
        socketDirectory.map { "\($0)/.s.PGSQL.\(port)" }
    }

    /// The URL without its password, for logs and messages.
    public var description: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = user
        components.host = host ?? ""
        if host != nil { components.port = port }
        components.path = "/" + database
        // A socket is never encrypted, whatever sslmode says: only a TCP connection shows one.
        components.queryItems = socketDirectory.map { [URLQueryItem(name: "host", value: $0)] }
            ?? [URLQueryItem(name: "sslmode", value: tls.rawValue)]
        return components.string ?? "postgres://\(user)@…/\(database)"
    }
}
