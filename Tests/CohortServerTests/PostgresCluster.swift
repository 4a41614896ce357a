import CohortTestSupport
import Foundation

/// A PostgreSQL server of the tests' own: a fresh cluster in a folder under /tmp, password
/// authentication on loopback, started by the tests and stopped when they end (a watchdog stops it if
/// the test process dies). Never run as root: as root, the cluster belongs to the `postgres` user.
final class PostgresCluster: @unchecked Sendable {
    /// Debian's server binaries, the newest version installed; nil when PostgreSQL is not installed.
    static let binaries: URL? = {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let bin = root.appendingPathComponent("\(version)/bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("postgres").path) { return bin }
        }
        return nil
    }()

    static var available: Bool { binaries != nil }
    static let missing = "PostgreSQL is not installed (make deps installs it): the shared-state tests are skipped"

    /// One cluster for the tests that only need a database of their own.
    nonisolated(unsafe) private static var sharedCluster: PostgresCluster?
    private static let lock = NSLock()

    static func shared() throws -> PostgresCluster {
        lock.lock()
        defer { lock.unlock() }
        if let sharedCluster, sharedCluster.isRunning { return sharedCluster }
        let cluster = try PostgresCluster()
        sharedCluster = cluster
        return cluster
    }

    let directory: URL
    let port: Int
    let password = "pw-" + UUID().uuidString.prefix(12).lowercased()
    let user = "cohort"
    private var watchdog: Process?
    private var databases = 0

    init() throws {
        guard let bin = Self.binaries else { throw ServerFailure(description: Self.missing) }
        directory = URL(fileURLWithPath: "/tmp/cohort-pg-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try freePort()
        let passwordFile = directory.appendingPathComponent("password")
        try Data((password + "\n").utf8).write(to: passwordFile)
        try Self.giveToServerUser(directory)
        let initdb = try run("/bin/sh", ["-c", Self.asServerUser("\(bin.path)/initdb -D \(directory.path)/data -A scram-sha-256 -U \(user) --pwfile=\(passwordFile.path) -E UTF8 --no-locale")],
                             in: directory)
        guard initdb.status == 0 else { throw ServerFailure(description: "initdb failed: \(initdb.stderr)") }
        try start()
    }

    var isRunning: Bool { watchdog?.isRunning == true }

    /// `postgres://cohort@127.0.0.1:PORT/NAME` (the password goes in `PGPASSWORD`).
    func url(_ database: String) -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)?sslmode=disable" }

    var environment: [String: String] { ["PGPASSWORD": password] }

    /// A new, empty database; returns its URL.
    func createDatabase() throws -> String {
        let name = "cohort_\(UUID().uuidString.prefix(8).lowercased())"
        try psql("postgres", "CREATE DATABASE \(name)")
        return url(name)
    }

    /// Runs `sql` with psql; returns what it printed (unaligned, tuples only).
    @discardableResult
    func psql(_ database: String, _ sql: String) throws -> String {
        guard let bin = Self.binaries else { throw ServerFailure(description: Self.missing) }
        let name = database.hasPrefix("postgres://") ? String(database.split(separator: "/").last!.split(separator: "?")[0]) : database
        let result = try run(bin.appendingPathComponent("psql").path,
                             ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", name, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                             in: directory, environment: environment)
        guard result.status == 0 else { throw ServerFailure(description: "psql \(sql.prefix(80)): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts the server (again) on the same port and data; returns once it accepts connections.
    func start() throws {
        guard let bin = Self.binaries else { throw ServerFailure(description: Self.missing) }
        let log = directory.appendingPathComponent("postgres.log")
        let postgres = "\(bin.path)/postgres -D \(directory.path)/data -p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        // The watchdog ends the server (a fast shutdown) when the test process goes or the stop file
        // appears. Not by a signal: a child of the tests' threads inherits a mask that blocks them.
        let stopFile = directory.appendingPathComponent("stop")
        try? FileManager.default.removeItem(at: stopFile)
        let script = """
            \(Self.asServerUser("exec " + postgres)) >>\(log.path) 2>&1 &
            server=$!
            while kill -0 \(getpid()) 2>/dev/null && kill -0 $server 2>/dev/null && [ ! -e \(stopFile.path) ]; do sleep 0.1; done
            kill -INT $server 2>/dev/null; wait $server
            kill -0 \(getpid()) 2>/dev/null || rm -rf \(directory.path)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        watchdog = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? run(bin.appendingPathComponent("pg_isready").path, ["-h", "127.0.0.1", "-p", "\(port)", "-q"], in: directory).status) == 0 { return }
            guard process.isRunning else { break }
            usleep(100_000)
        }
        throw ServerFailure(description: "PostgreSQL did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// A fast shutdown; returns once the server has gone.
    func stop() {
        guard let watchdog, watchdog.isRunning else { return }
        FileManager.default.createFile(atPath: directory.appendingPathComponent("stop").path, contents: nil)
        watchdog.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private static var isRoot: Bool { geteuid() == 0 }

    private static func asServerUser(_ command: String) -> String {
        isRoot ? "setpriv --reuid=postgres --regid=postgres --init-groups -- /bin/sh -c '\(command)'" : command
    }

    private static func giveToServerUser(_ directory: URL) throws {
        guard isRoot else { return }
        let result = try run("/bin/chown", ["-R", "postgres:postgres", directory.path], in: URL(fileURLWithPath: "/"))
        guard result.status == 0 else { throw ServerFailure(description: "chown: \(result.stderr)") }
    }
}
