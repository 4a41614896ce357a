import Foundation
import Testing

/// A real receiver on loopback, in Python, verifying signatures with the reference package.
public final class Receiver {
    let process = Process()
    let input = Pipe()
    public let records: URL
    public let port: Int

    public init(temp: TemporaryDirectory, secret: String, port: Int = 0, script: String = "[]", name: String = "receiver") throws {
        records = temp.path("\(name).jsonl")
        let portFile = temp.path("\(name).port")
        try? FileManager.default.removeItem(at: portFile)
        let receiver = testScript("webhook_receiver.py")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", receiver.path, secret, records.path, portFile.path, String(port), script]
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
        try process.run()
        var found: Int?
        for _ in 0..<200 {
            if let text = try? String(decoding: Data(contentsOf: portFile), as: UTF8.self), let value = Int(text) {
                found = value
                break
            }
            usleep(50_000)
        }
        self.port = try #require(found, "the receiver did not start")
    }

    public var url: String { "http://127.0.0.1:\(port)/hooks" }

    public var received: [[String: Any]] {
        let text = (try? String(decoding: Data(contentsOf: records), as: UTF8.self)) ?? ""
        return jsonLines(text)
    }

    /// Stops the receiver (it exits when its standard input closes) and waits until its port is free.
    public func stop() {
        try? input.fileHandleForWriting.close()
        for _ in 0..<500 where acceptsConnections(port) { usleep(10_000) }
    }

    deinit { stop() }
}
