import CohortBase
import Foundation
import Testing

/// The shared test vectors, found through `COHORT_TEST_VECTORS`.
public enum Vectors {
    public static let directory: URL? = ProcessInfo.processInfo.environment["COHORT_TEST_VECTORS"]
        .flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }

    public static var available: Bool { directory != nil }

    /// Shown when a conformance suite is skipped.
    public static let unsetReason: Comment = "COHORT_TEST_VECTORS is unset: conformance vectors skipped (CI sets it to ../shared/vectors)"

    public static func url(_ relative: String) throws -> URL {
        let directory = try #require(directory, "COHORT_TEST_VECTORS is unset")
        return directory.appendingPathComponent(relative)
    }

    public static func json(_ relative: String) throws -> [String: Any] {
        let data = try Data(contentsOf: url(relative))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

/// A directory that exists for one test and is removed afterwards.
public final class TemporaryDirectory {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Asserts that `body` throws a `CohortError` with `code`.
public func expectCode<T>(_ code: CohortError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) {
    do {
        _ = try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CohortError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Asserts that `body` throws a `CohortError` with `code`.
public func expectCode<T>(_ code: CohortError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async {
    do {
        _ = try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CohortError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// What a child process printed and how it ended.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

/// Runs `executable` (a path, or a name looked up on PATH) with `arguments` in `directory`.
@discardableResult
public func run(_ executable: String, _ arguments: [String], in directory: URL, environment: [String: String] = [:], stdin: Data? = nil) throws -> ProcessResult {
    let process = Process()
    if executable.hasPrefix("/") {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
    }
    process.currentDirectoryURL = directory
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    let errors = Pipe()
    let input = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(stdin) }
    try input.fileHandleForWriting.close()
    // Drain stdout on another thread so that neither pipe can fill up and block the child.
    let collected = OutputBox()
    let reader = Thread { collected.set(output.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let errData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let outData = collected.wait()
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
}

private final class OutputBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}

/// The `cohort` executable built beside the test bundle (or `$COHORT_BINARY`).
public let cohortBinary: URL = {
    if let path = ProcessInfo.processInfo.environment["COHORT_BINARY"] {
        return URL(fileURLWithPath: path)
    }
    let beside = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("cohort")
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/cohort")
}()

/// A TCP socket bound to a free port on 127.0.0.1 (listening when asked); the caller closes it.
public func loopbackSocket(listening: Bool = false) throws -> (socket: Int32, port: Int) {
    let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard handle >= 0 else { throw CohortError(.io, "socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(handle, $0, length) == 0 && (!listening || listen(handle, 1) == 0) && getsockname(handle, $0, &length) == 0
        }
    }
    guard bound else {
        close(handle)
        throw CohortError(.io, "bind: errno \(errno)")
    }
    return (handle, Int(UInt16(bigEndian: address.sin_port)))
}

/// A TCP port on loopback that nothing listens on right now.
public func freePort() throws -> Int {
    let (handle, port) = try loopbackSocket()
    close(handle)
    return port
}

/// Whether something accepts connections on 127.0.0.1:`port`.
public func acceptsConnections(_ port: Int) -> Bool {
    let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard handle >= 0 else { return false }
    defer { close(handle) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// A script of Tests/Scripts (independent checkers and receivers, in Python).
public func testScript(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/\(name)")
}

/// The JSON objects of a JSON-lines text (a sink's file, `--json` output), skipping lines that are not.
public func jsonLines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}
