import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortServerAPI
import Foundation
import Hummingbird

/// The identity API: challenges, tokens for proofs over them, and publishing.
extension CohortServer {
    func addIdentityRoutes(to router: Router<ServerContext>) {
        router.post("/c/:id/challenge") { [self] request, context in
            await answerJSON(context) { try await challenge(request, context) }
        }
        router.post("/c/:id/token") { [self] request, context in
            await answerJSON(context) { try await token(request, context) }
        }
        router.put("/c/:id") { [self] request, context in
            await answerJSON(context) { try await publish(request, context) }
        }
    }

    /// Runs `body`, turning any error into its JSON error response.
    func answerJSON(_ context: ServerContext, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            return ErrorResponses.json(ErrorResponses.cohortError(error, logger: context.logger))
        }
    }

    private func identifier(_ context: ServerContext) throws -> String {
        let identifier = context.parameters.get("id") ?? ""
        try ServerAPI.checkHostable(identifier)
        return identifier
    }

    private func challenge(_ request: Request, _ context: ServerContext) async throws -> Response {
        try await state.admitIdentityRequest(from: context.clientAddress)
        let identifier = try identifier(context)
        let body = try ServerAPI.decode(ServerAPI.ChallengeRequest.self, from: await collectBody(request, what: "challenge request"),
                                        what: "challenge request")
        let operation = try ChallengeOperation(name: body.operation)
        var salt: String?
        if operation == .membership {
            salt = try store.registration(identifier)?.salt
        } else {
            salt = try members.current(identifier).registration.salt
        }
        let authority = try challenges()
        let challenge = try authority.issue(collaboration: identifier, operation: operation)
        return jsonResponse(ServerAPI.ChallengeResponse(
            challenge: challenge.bytes.base64EncodedString(), operation: operation.description,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(challenge.issuedAt + UInt64(challenge.lifetime))),
            server: authority.server, collaboration: .init(identifier: identifier, salt: salt)
        ))
    }

    private func token(_ request: Request, _ context: ServerContext) async throws -> Response {
        try await state.admitIdentityRequest(from: context.clientAddress)
        let identifier = try identifier(context)
        let body = try ServerAPI.decode(ServerAPI.TokenRequest.self, from: await collectBody(request, what: "token request"),
                                        what: "token request")
        let operation = try ChallengeOperation(name: body.operation)
        guard operation != .membership else {
            throw CohortError(.malformed, "tokens are for pull or push", hint: "publish with PUT /c/<id> instead")
        }
        let membership = try members.current(identifier)
        let root = try await challenges().verify(body.proof, collaboration: identifier, operation: operation, against: membership)
        let permission = try membership.permission(of: root)
        let access: ServerAPI.Access = operation == .push ? .readWrite : .read
        guard access == .read || permission == .readWrite else {
            throw CohortError(.notPermitted, "this participant may read but not push (read only)",
                              hint: "ask for a pull token, or ask the owner for write access")
        }
        let issued = tokens.issue(collaboration: identifier, root: root, access: access)
        context.logger.info("token issued", metadata: ["collaboration": "\(identifier)", "root": "\(root.hex.prefix(16))", "access": "\(access.rawValue)"])
        return jsonResponse(ServerAPI.TokenResponse(token: issued.token, access: access, expiresAt: issued.expiresAt, root: root))
    }

    private func publish(_ request: Request, _ context: ServerContext) async throws -> Response {
        try await state.admitIdentityRequest(from: context.clientAddress)
        let identifier = try identifier(context)
        let body = try ServerAPI.decode(ServerAPI.PublishRequest.self, from: await collectBody(request, what: "publish request"),
                                        what: "publish request")
        let fileBytes = try Base64Field.decode(body.collaboration, field: "collaboration", maxBytes: CollaborationFile.maxEnvelopeBytes)
        let file = try Envelope.open(fileBytes, as: CollaborationFile.self, path: CohortLayout.collaboration)
        try file.value.validate()
        guard file.value.identifier == identifier else {
            throw CohortError(.malformed, "the collaboration file is for \(file.value.identifier.prefix(64)), not \(identifier)")
        }
        let owner = try file.value.ownerRoot()
        guard file.signer == owner else {
            throw CohortError(.notPermitted, "the collaboration file is not signed by its owner")
        }
        let genesis = try ObjectID(hex: body.genesis)
        do {
            // The collaboration is recorded before the challenge is spent: if recording fails, the
            // same answer can be given again.
            _ = try await challenges().verify(body.proof, collaboration: identifier, operation: .membership, against: KnownRoots(active: [owner]),
                                              beforeSpending: { try await self.state.publishing(identifier) })
        } catch let error as CohortError where error.code == .unknownRoot {
            throw CohortError(.notPermitted, "only the collaboration's owner may publish it", hint: "publish from a device of the owner")
        }
        let created = try store.register(file, genesis: genesis)
        let issued = tokens.issue(collaboration: identifier, root: owner, access: .readWrite)
        context.logger.notice(created ? "collaboration published" : "collaboration published again",
                              metadata: ["collaboration": "\(identifier)", "owner": "\(owner.hex.prefix(16))"])
        let link = link(identifier)
        return jsonResponse(
            ServerAPI.PublishResponse(link: link, gitURL: link, created: created,
                                      token: .init(token: issued.token, access: .readWrite, expiresAt: issued.expiresAt, root: owner)),
            status: created ? .created : .ok
        )
    }
}
