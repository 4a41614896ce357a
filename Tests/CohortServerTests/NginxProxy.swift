import CohortTestSupport
import Foundation

/// nginx from Debian in front of several `cohort serve` instances, round-robin, on a loopback port:
/// the configuration Scripts/two-instances.sh writes for people (Docs/Server.md).
final class NginxProxy: @unchecked Sendable {
    static let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool { binary != nil }
    static let missing = "nginx is not installed (make deps installs it): the tests through nginx are skipped"

    /// The address nginx connects to the instances from (`--trusted-proxy`): not the one the tests'
    /// own clients use, so that a client talking to an instance directly is not taken for the proxy.
    static let proxyAddress = "127.0.0.2"

    let directory: URL
    let port: Int
    private let process = Process()

    /// `upstreams`: `127.0.0.1:PORT` of each instance.
    init(port: Int, upstreams: [String]) throws {
        guard let binary = Self.binary else { throw ServerFailure(description: Self.missing) }
        self.port = port
        // Not a TemporaryDirectory: nginx's workers (nobody) must be able to enter it.
        directory = URL(fileURLWithPath: "/tmp/cohort-nginx-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = directory.appendingPathComponent("nginx.conf")
        try Data(try Self.configuration(port: port, upstreams: upstreams, directory: directory).utf8).write(to: configuration)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", directory.path, "-c", configuration.path, "-e", directory.appendingPathComponent("error.log").path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: { () -> URL in
            let url = directory.appendingPathComponent("stderr.log")
            FileManager.default.createFile(atPath: url.path, contents: nil)
            return url
        }())
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if process.isRunning, acceptsConnections(port) { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw ServerFailure(description: "nginx did not start: \(log())")
    }

    func log() -> String {
        ["stderr.log", "error.log"].map { (try? String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)) ?? "" }.joined()
    }

    /// The configuration Scripts/two-instances.sh gives nginx: round-robin over the instances, the
    /// client's Host and address passed on, no buffering either way.
    static func configuration(port: Int, upstreams: [String], directory: URL) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let result = try run("/bin/bash", [root.appendingPathComponent("Scripts/two-instances.sh").path, "nginx-config", directory.path, "\(port)", proxyAddress]
                             + upstreams, in: directory)
        guard result.status == 0 else { throw ServerFailure(description: "nginx-config: \(result.stderr)") }
        return result.stdout
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGQUIT)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
