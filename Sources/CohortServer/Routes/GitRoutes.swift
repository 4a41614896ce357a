import CohortBase
import CohortServerAPI
import Foundation
import HTTPTypes
import Hummingbird

/// git's smart HTTP under `/c/<id>`: `info/refs`, `git-upload-pack`, `git-receive-pack`. Pull needs a
/// read token, push a read-write token, and the token's root must be an active participant (with
/// write permission to push) at the moment of the request.
extension CohortServer {
    func addGitRoutes(to router: Router<ServerContext>) {
        router.get("/c/:id/info/refs") { [self] request, context in
            await answerText(context) {
                guard let name = request.uri.queryParameters.get("service"), let service = GitTransfer.Service(rawValue: name) else {
                    throw CohortError(.notPermitted, "only git's smart HTTP protocol is served", hint: "use git 1.6.6 or later")
                }
                let repository = try authorize(request, context, for: service)
                let slot = try limiter.transferSlot()
                return transfer.advertisement(service, repository: repository, protocolHeader: request.headers[GitTransfer.protocolHeaderName],
                                              logger: context.logger, finished: { slot.release() })
            }
        }
        for service in [GitTransfer.Service.uploadPack, .receivePack] {
            router.post("/c/:id/\(service.rawValue)") { [self] request, context in
                await answerText(context) {
                    let repository = try authorize(request, context, for: service)
                    let slot = try limiter.transferSlot()
                    let identifier = context.parameters.get("id") ?? ""
                    return try transfer.rpc(service, repository: repository, request: request, logger: context.logger,
                                            finished: { [state] in
                                                slot.release()
                                                if service == .receivePack { state.pushed(identifier) }
                                            })
                }
            }
        }
    }

    /// Runs `body`, turning any error into a plain-text error response git shows its user.
    func answerText(_ context: ServerContext, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            return ErrorResponses.text(ErrorResponses.cohortError(error, logger: context.logger))
        }
    }

    /// Checks the request's token against the collaboration's current membership; returns the
    /// repository to serve.
    func authorize(_ request: Request, _ context: ServerContext, for service: GitTransfer.Service) throws -> URL {
        let identifier = context.parameters.get("id") ?? ""
        guard (try? ServerAPI.checkHostable(identifier)) != nil else {
            throw CohortError(.notFound, "no collaboration is hosted at this address")
        }
        guard let presented = Self.presentedToken(request.headers) else {
            // Existence is not revealed before authentication.
            throw CohortError(.unauthorized, "authentication required",
                              hint: "git config --global credential.helper cohort (see Docs/Server.md), or use `cohort clone`")
        }
        let token = try tokens.verify(presented, collaboration: identifier)
        let membership = try members.current(identifier)
        let permission = try membership.permission(of: token.root)
        if service == .receivePack {
            // The participant's permission first: it is the cause whenever it forbids the push.
            guard permission == .readWrite else {
                throw CohortError(.notPermitted, "you take part in this collaboration read-only, so you cannot push to it",
                                  hint: "ask its owner for permission to make changes; you can still pull")
            }
            guard token.access == .readWrite else {
                throw CohortError(.notPermitted, "this token was bought for pulling only, before you could push",
                                  hint: "`cohort sync` pushes with a new token; git-credential-cohort buys one once this one expires")
            }
        }
        context.logger.debug("authorized", metadata: ["collaboration": "\(identifier)", "root": "\(token.root.hex.prefix(16))"])
        return store.repositoryURL(identifier)
    }

    /// The token of `Authorization: Bearer T` or of HTTP Basic (the password; git's credential
    /// helpers answer with a username and a password).
    static func presentedToken(_ headers: HTTPFields) -> String? {
        guard let value = headers[.authorization], value.utf8.count <= 4096 else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        switch parts[0].lowercased() {
        case "bearer":
            return String(parts[1])
        case "basic":
            guard let decoded = Data(base64Encoded: String(parts[1])), let text = String(data: decoded, encoding: .utf8),
                  let colon = text.firstIndex(of: ":")
            else { return nil }
            return String(text[text.index(after: colon)...])
        default:
            return nil
        }
    }
}
