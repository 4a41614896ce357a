import CohortBase
import Foundation
import Hummingbird
import Logging
import Subprocess
import SystemPackage
import HTTPTypes

/// git's smart HTTP, served by spawning `git upload-pack` / `git receive-pack` with `--stateless-rpc`
/// and streaming the request into the process and its output into the response. Protocol v2 passes
/// through `GIT_PROTOCOL`; gzip request bodies are inflated on the way in.
struct GitTransfer: Sendable {
    enum Service: String, Sendable {
        case uploadPack = "git-upload-pack"
        case receivePack = "git-receive-pack"

        var command: String { String(rawValue.dropFirst(4)) }
    }

    static let protocolHeaderName = HTTPField.Name("Git-Protocol")!
    static let pragmaHeaderName = HTTPField.Name("Pragma")!

    let git: String
    let limits: ServerLimits
    /// Added to git's environment (the server's sinks file, for the post-receive hook).
    let environment: [String: String]

    /// `GET info/refs?service=…`: the ref advertisement, after the `# service=` line that v0 and v1
    /// clients expect (v2 clients get the capability advertisement alone).
    func advertisement(_ service: Service, repository: URL, protocolHeader: String?, logger: Logger,
                       finished: @escaping @Sendable () -> Void) -> Response {
        let version2 = protocolHeader?.contains("version=2") ?? false
        let line = "# service=\(service.rawValue)\n"
        let preamble = ByteBuffer(string: version2 ? "" : String(format: "%04x", line.utf8.count + 4) + line + "0000")
        let arguments = [service.command, "--stateless-rpc", "--advertise-refs", repository.path]
        let body = ResponseBody { [self] writer in
            defer { finished() }
            try await writer.write(preamble)
            try await run(arguments, protocolHeader: protocolHeader, input: nil, writer: &writer, logger: logger)
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers("application/x-\(service.rawValue)-advertisement"), body: body)
    }

    /// `POST /git-upload-pack` or `/git-receive-pack`: the request body into the service, its answer back.
    /// `finished` runs once the response is written (or the transfer failed).
    func rpc(_ service: Service, repository: URL, request: Request, logger: Logger,
             finished: @escaping @Sendable () -> Void) throws -> Response {
        guard request.headers[.contentType] == "application/x-\(service.rawValue)-request" else {
            throw CohortError(.malformed, "a \(service.rawValue) request must have Content-Type application/x-\(service.rawValue)-request")
        }
        let maxBytes = service == .receivePack ? limits.maxPushBytes : limits.maxFetchRequestBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBytes {
            throw CohortError(.tooLarge, "the request is \(length) bytes; this server accepts at most \(maxBytes)",
                              hint: "push in smaller parts, or ask the server's operator to raise the limit")
        }
        let encoding = request.headers[.contentEncoding]?.lowercased()
        guard encoding == nil || encoding == "gzip" || encoding == "x-gzip" || encoding == "identity" else {
            throw CohortError(.malformed, "Content-Encoding \(encoding ?? "") is not supported; use gzip or none")
        }
        let input = RequestInput(body: request.body, gzip: encoding == "gzip" || encoding == "x-gzip", maxBytes: maxBytes)
        // git itself refuses an oversized pack, with a message the client shows.
        let arguments = (service == .receivePack ? ["-c", "receive.maxInputSize=\(limits.maxPushBytes)"] : [])
            + [service.command, "--stateless-rpc", repository.path]
        let protocolHeader = request.headers[GitTransfer.protocolHeaderName]
        let body = ResponseBody { [self] writer in
            defer { finished() }
            try await run(arguments, protocolHeader: protocolHeader, input: input, writer: &writer, logger: logger)
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers("application/x-\(service.rawValue)-result"), body: body)
    }

    private func headers(_ contentType: String) -> HTTPFields {
        [.contentType: contentType, .cacheControl: "no-cache, max-age=0, must-revalidate", .expires: "Fri, 01 Jan 1980 00:00:00 GMT",
         GitTransfer.pragmaHeaderName: "no-cache"]
    }

    /// Runs git, feeding `input` (if any) to its standard input while its standard output streams
    /// into `writer`; the whole transfer is bounded in time.
    private func run(_ arguments: [String], protocolHeader: String?, input: RequestInput?,
                     writer: inout any ResponseBodyWriter, logger: Logger) async throws {
        var variables: [Subprocess.Environment.Key: String?] = [:]
        for (name, value) in environment {
            if let key = Subprocess.Environment.Key(rawValue: name) { variables[key] = value }
        }
        if let protocolHeader, Self.isSafeProtocolHeader(protocolHeader) {
            variables["GIT_PROTOCOL"] = protocolHeader
        }
        let deadline = ContinuousClock.now + .seconds(limits.maxTransferSeconds)
        let result = try await Subprocess.run(
            .path(FilePath(git)), arguments: Arguments(arguments), environment: .inherit.updating(variables),
            input: .inputWriter, output: .sequence, error: .string(limit: 64 << 10)
        ) { execution in
            try await withThrowingTaskGroup(of: Void.self) { group in
                let stdin = execution.standardInputWriter
                group.addTask {
                    do {
                        if let input { try await input.copy(into: stdin) }
                        try await stdin.finish()
                    } catch {
                        // git must not wait for input that will never come: end it, then stop git.
                        try? await stdin.finish()
                        try? execution.send(signal: .kill)
                        throw error
                    }
                }
                group.addTask {
                    try await Task.sleep(until: deadline)
                    try? execution.send(signal: .kill)
                    throw CohortError(.busy, "the transfer took longer than \(limits.maxTransferSeconds) s")
                }
                for try await chunk in execution.standardOutput {
                    try await writer.write(chunk.withUnsafeBytes { ByteBuffer(bytes: $0) })
                }
                // Output ended: git is done (or was stopped). The deadline is no longer needed.
                group.cancelAll()
                while let next = await group.nextResult() {
                    if case .failure(let error) = next, !(error is CancellationError) { throw error }
                }
            }
        }
        if !result.terminationStatus.isSuccess {
            logger.notice("git exited with a failure", metadata: [
                "git.command": "\(arguments.first(where: { !$0.hasPrefix("-") && !$0.contains("=") }) ?? "git")",
                "git.status": "\(result.terminationStatus)",
                "git.stderr": "\(result.standardError.prefix(500))",
            ])
        }
    }

    /// `version=2`, `version=1:other=x` and the like; anything else never reaches git's environment.
    static func isSafeProtocolHeader(_ value: String) -> Bool {
        value.utf8.count <= 256 && value.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x3A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x3D || byte == 0x2D || byte == 0x2E || byte == 0x5F
        }
    }
}

/// A request body on its way into git: inflated when gzip, counted against a limit.
struct RequestInput: Sendable {
    let body: RequestBody
    let gzip: Bool
    let maxBytes: Int

    func copy(into writer: StandardInputWriter) async throws {
        let inflater = gzip ? try GzipInflater(limit: maxBytes) : nil
        var total = 0
        for try await buffer in body {
            if let inflater {
                // At most 64 KiB inflated at a time: a small body that inflates a lot is never held whole.
                try buffer.withUnsafeReadableBytes { try inflater.feed($0) }
                while let chunk = try inflater.next() {
                    if !chunk.isEmpty { _ = try await writer.write(chunk) }
                }
            } else {
                total += buffer.readableBytes
                guard total <= maxBytes else {
                    throw CohortError(.tooLarge, "the request is larger than the \(maxBytes) bytes this server accepts")
                }
                _ = try await writer.write(Array(buffer.readableBytesView))
            }
        }
        try inflater?.finish()
    }
}
