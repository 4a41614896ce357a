import Foundation
import Hummingbird
import Logging

/// One structured log line per request: method, path (never a query's secrets: git's only query is
/// `service`), status, duration and client. Authorization headers are never logged.
struct AccessLog: RouterMiddleware {
    typealias Context = ServerContext
    let logger: Logger
    let clients: ClientAddress

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        context.clientAddress = clients.resolve(peer: context.remoteAddress?.ipAddress, headers: request.headers)
        var metadata: Logger.Metadata = [
            "http.method": "\(request.method.rawValue)",
            "http.path": "\(request.uri.path.prefix(300))",
            "client": "\(context.clientAddress)",
        ]
        do {
            let response = try await next(request, context)
            metadata["http.status"] = "\(response.status.code)"
            metadata["duration_ms"] = "\(Self.milliseconds(since: start))"
            logger.info("request", metadata: metadata)
            return response
        } catch {
            metadata["duration_ms"] = "\(Self.milliseconds(since: start))"
            metadata["error"] = "\(String(describing: error).prefix(300))"
            logger.warning("request failed", metadata: metadata)
            throw error
        }
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}
