import CohortTestSupport
import Foundation
import Testing

/// `cohort serve` running as its own process on a free loopback port, as an operator would run it.
final class ServerProcess {
    let process = Process()
    let data: URL
    let log: URL
    /// The base URL the server printed (`listening on URL`).
    private(set) var url = ""
    private let lines = LineCollector()

    init(data: URL, arguments: [String] = [], environment: [String: String] = [:], listen: String = "127.0.0.1:0") throws {
        self.data = data
        log = data.deletingLastPathComponent().appendingPathComponent("serve-\(UUID().uuidString.prefix(8)).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = cohortBinary
        process.arguments = ["serve", "--data", data.path, "--listen", listen] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let collector = lines
        Thread {
            let handle = output.fileHandleForReading
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                collector.append(chunk)
            }
            collector.close()
        }.start()
        guard let first = lines.firstLine(timeout: 120), first.hasPrefix("listening on ") else {
            process.terminate()
            throw ServerFailure(description: "cohort serve did not start; log: \(logText())")
        }
        url = String(first.dropFirst("listening on ".count).split(separator: " ")[0])
        // Pushes from the first on are verified by the resident verifier the server runs beside it, as
        // they are in use once it is up (the hooks verify a push themselves until it is).
        if let socket = verifierSocket {
            let deadline = Date().addingTimeInterval(60)
            while !Self.isSocket(socket.path), Date() < deadline { usleep(20_000) }
            guard Self.isSocket(socket.path) else {
                process.terminate()
                throw ServerFailure(description: "cohort serve started no resident verifier at \(socket.path); log: \(logText())")
            }
        }
    }

    /// Where the server's resident verifier listens (nil with `--no-resident-verifier`).
    var verifierSocket: URL? {
        let arguments = process.arguments ?? []
        if arguments.contains("--no-resident-verifier") { return nil }
        if let flag = arguments.firstIndex(of: "--verifier-socket"), flag + 1 < arguments.count {
            return URL(fileURLWithPath: arguments[flag + 1])
        }
        return data.appendingPathComponent("server/verifier.sock")
    }

    static func isSocket(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK
    }

    /// The server's resident verifier processes (its children running `hook serve`).
    func verifierProcesses() -> [pid_t] {
        var found: [pid_t] = []
        // Each thread's children: the thread that started the verifier may be any of the server's.
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? [] {
            let text = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(task)/children", encoding: .utf8)) ?? ""
            for word in text.split(separator: " ") {
                guard let pid = pid_t(word), !found.contains(pid),
                      let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")),
                      String(decoding: line, as: UTF8.self).contains("hook\0serve\0") else { continue }
                found.append(pid)
            }
        }
        return found
    }

    func logText() -> String {
        (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }

    /// Sends SIGTERM and waits (up to 60 s) for the exit; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { usleep(50_000) }
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }
}

struct ServerFailure: Error, CustomStringConvertible {
    let description: String
}

/// Collects a child's output and hands out its first line when it arrives.
private final class LineCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private var buffer = Data()
    private var closed = false

    func append(_ data: Data) {
        condition.lock()
        buffer.append(data)
        condition.broadcast()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func firstLine(timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            if closed || !condition.wait(until: deadline) { return nil }
        }
    }
}
