import CohortBase
import Hummingbird

/// Refuses a request whose `Host` names another server than this one's configured name. Challenges
/// and links name the server from configuration, never from a request; a relay that forwards
/// requests with its own `Host` is answered 421, so it cannot collect proofs signed for it and spend
/// them here.
struct HostCheck: RouterMiddleware {
    typealias Context = ServerContext
    let server: CohortServer

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        let authority = request.head.authority ?? ""
        if !server.answers(to: authority) {
            let error = CohortError(.notPermitted, "this server is \(server.name), not '\(String(authority.prefix(80)))'",
                                    hint: "use the address in the collaboration's link; an operator behind a proxy sets --public-url")
            var response = request.uri.path.hasSuffix("/info/refs") || request.uri.path.contains("/git-")
                ? ErrorResponses.text(error) : ErrorResponses.json(error)
            response.status = .misdirectedRequest
            return response
        }
        return try await next(request, context)
    }
}
