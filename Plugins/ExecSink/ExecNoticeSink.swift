import CohortNotices
import Foundation

/// Runs a program (any language) for every notice, with the notice as one JSON line on its standard
/// input. Exit 0: delivered. Exit 75 (`EX_TEMPFAIL`): try again later. Anything else, or a program
/// that cannot start: give up on that notice, recording the exit status and the end of its
/// standard error. A program that runs past `timeout` is stopped and the notice tried again later.
public struct ExecNoticeSink: NoticeSink {
    /// The exit status that means "retry later".
    public static let retryStatus: Int32 = 75
    /// How much of the program's standard error is kept for the record.
    static let maxErrorBytes = 2048

    public let name: String
    public let command: [String]
    public let directory: URL?
    public let timeout: Duration

    /// - Parameters:
    ///   - command: the program and its arguments; a bare name is looked up on `PATH`.
    ///   - directory: where it runs (default: the current directory).
    public init(name: String? = nil, command: [String], directory: URL? = nil, timeout: Duration = .seconds(30)) {
        self.name = name ?? "exec:\(command.joined(separator: " "))"
        self.command = command
        self.directory = directory
        self.timeout = timeout
        // A program that exits without reading its input closes the pipe: an error the write ignores,
        // not a signal that ends the whole process.
        signal(SIGPIPE, SIG_IGN)
    }

    public func deliver(_ delivery: NoticeDelivery) async throws {
        guard let program = command.first else { throw SinkFailure.giveUp("the exec sink has an empty command") }
        let process = Process()
        if program.contains("/") {
            process.executableURL = URL(fileURLWithPath: program, relativeTo: directory)
            process.arguments = Array(command.dropFirst())
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
        }
        if let directory { process.currentDirectoryURL = directory }
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        let finished = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { finished.continuation.yield($0.terminationStatus); finished.continuation.finish() }
        do {
            try process.run()
        } catch {
            throw SinkFailure.giveUp("cannot start \(program): \(error.localizedDescription)")
        }
        var line = delivery.json()
        line.append(UInt8(ascii: "\n"))
        // A program that does not read its input must not block the sink: write, then close.
        try? input.fileHandleForWriting.write(contentsOf: line)
        try? input.fileHandleForWriting.close()

        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await finished.stream.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let status else {
            process.terminate()
            try? await Task.sleep(for: .milliseconds(200))
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw SinkFailure.retryLater("\(program) ran longer than \(timeout)")
        }
        let stderr = errors.fileHandleForReading.availableData.suffix(Self.maxErrorBytes)
        let detail = String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        switch status {
        case 0:
            return
        case Self.retryStatus:
            throw SinkFailure.retryLater("\(program) asked to retry later (exit 75)" + (detail.isEmpty ? "" : ": \(detail)"))
        default:
            throw SinkFailure.giveUp("\(program) exited with status \(status)" + (detail.isEmpty ? "" : ": \(detail)"))
        }
    }
}

/// `type = "exec"`: `command` (the program and its arguments), `timeout` (seconds, default 30),
/// `directory` (where it runs; default the configuration file's folder).
public struct ExecSinkFactory: NoticeSinkFactory {
    public let type = "exec"
    public let keys: Set<String> = ["command", "timeout", "directory"]

    public init() {}

    public func configure(_ table: SinkTable) throws -> ConfiguredSink {
        guard let command = try table.strings("command") else { throw table.missing("command = [\"program\", \"argument\", …]") }
        let timeout = try table.integer("timeout", in: 1...3600, unit: "seconds") ?? 30
        let directory = try table.path("directory") ?? table.folder
        return ConfiguredSink(defaultName: "exec:\(command.joined(separator: " "))") {
            ExecNoticeSink(name: $0.name, command: command, directory: directory, timeout: .seconds(timeout))
        }
    }
}
