import CohortTestSupport
import Foundation
import Testing

/// Runs the built `cohort` binary as a user would, in its own process.
struct CLI {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String

        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    static var binary: URL { cohortBinary }

    let home: URL
    let directory: URL
    /// The program run: Cohort's own `cohort`, or another built on its command line.
    var program: URL = CLI.binary

    /// Starts `cohort` with `arguments` in its own process and returns without waiting; standard
    /// output goes to `output` (nowhere by default), standard error nowhere.
    func start(_ arguments: [String], output: FileHandle = .nullDevice) throws -> Process {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(["COHORT_HOME": home.path]) { $1 }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @discardableResult
    func run(_ arguments: [String], stdin: Data? = nil, home: URL? = nil) throws -> Result {
        let result = try CohortTestSupport.run(program.path, arguments, in: directory,
                                               environment: ["COHORT_HOME": (home ?? self.home).path], stdin: stdin)
        return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }
}

/// A directory for one test, removed afterwards.
final class Sandbox {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// A CLI whose identity lives in `name` under this sandbox.
    func cli(_ name: String) -> CLI { CLI(home: path(name), directory: url) }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: path(name))
    }

    func read(_ name: String) throws -> String {
        try String(decoding: Data(contentsOf: path(name)), as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Asserts the one-line error contract: exit 1, nothing on stdout, one stderr line `error: CODE: …`.
func expectRefusal(_ result: CLI.Result, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 1, "exit \(result.status), stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "stdout: \(result.stdout)", sourceLocation: sourceLocation)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasPrefix("error: \(code): "), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
}

extension Sandbox {
    /// Ann's identity and a "Recipes" collaboration started from `files`; returns the CLI that runs
    /// inside it.
    func recipes(_ files: [String: String]) throws -> CLI {
        #expect(try cli("ann").run(["id", "init", "--handle", "ann@example.com", "--name", "Ann"]).status == 0)
        try FileManager.default.createDirectory(at: path("recipes"), withIntermediateDirectories: true)
        for (name, text) in files { try write("recipes/\(name)", text) }
        #expect(try cli("ann").run(["start", "recipes", "--title", "Recipes"]).status == 0)
        return CLI(home: path("ann"), directory: path("recipes"))
    }
}
