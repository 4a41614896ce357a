import CohortBase
import CohortServerAPI
import Hummingbird
import Logging

extension CohortError {
    /// The HTTP status this error is answered with.
    var httpStatus: HTTPResponse.Status {
        switch code {
        case .malformed: .badRequest
        case .unauthorized, .challengeForged, .challengeExpired, .challengeScope, .challengeReplayed, .badKey, .badSignature, .badProof:
            .unauthorized
        case .unknownRoot, .revoked, .notPermitted: .forbidden
        case .notFound: .notFound
        case .tooLarge: .contentTooLarge
        case .busy: .tooManyRequests
        case .unavailable: .serviceUnavailable
        default: .internalServerError
        }
    }
}

/// Error responses: JSON for the identity API and links, plain text for git's endpoints (git prints a
/// `text/plain` error body to the user as `remote: …` lines).
enum ErrorResponses {
    static let realm = "Basic realm=\"Cohort\", charset=\"UTF-8\""

    static func json(_ error: CohortError) -> Response {
        var body = ServerAPI.encode(ServerAPI.ErrorBody(error))
        body.append(0x0A)
        return response(error, contentType: "application/json", body: ByteBuffer(bytes: body))
    }

    static func text(_ error: CohortError) -> Response {
        response(error, contentType: "text/plain; charset=utf-8", body: ByteBuffer(string: "cohort: \(error.description)\n"))
    }

    private static func response(_ error: CohortError, contentType: String, body: ByteBuffer) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .cacheControl: "no-store"]
        if error.httpStatus == .unauthorized {
            headers[.wwwAuthenticate] = realm
        }
        if error.code == .busy || error.code == .unavailable {
            headers[.retryAfter] = "5"
        }
        return Response(status: error.httpStatus, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// Any error as a `CohortError`: ours pass through; anything else is an internal failure, whose
    /// details go to the log, not to the client.
    static func cohortError(_ error: any Error, logger: Logger) -> CohortError {
        if let error = error as? CohortError { return error }
        logger.error("internal error", metadata: ["error": "\(String(describing: error).prefix(300))"])
        return CohortError(.io, "the server failed to handle the request", hint: "try again; the server's log has the details")
    }
}
