import CohortBase
import CohortHooks
import Foundation
import Logging
import ServiceLifecycle
import Subprocess
import SystemPackage

/// Beside the HTTP server: `cohort hook serve` listening where the hosted repositories' `pre-receive`
/// hooks ask first (`ServerConfiguration.verifierSocket`), so that a push is verified without starting
/// a program for it (Docs/Hooks.md). A process of its own rather than a thread of the server: what it
/// tunes for itself (the allocator, the maps and trees it keeps) stays out of the server, and whatever
/// befalls it leaves the server answering. It is started again whenever it ends, after a pause that
/// grows to a minute; meanwhile, and while another instance's verifier holds the socket, each hook
/// verifies its push itself. It stops when its standard input ends (it leaves SIGINT and SIGTERM to
/// the server): closed by the server as it stops, or by the kernel when the server dies.
struct ResidentVerifierService: Service {
    /// The `cohort` binary the hooks call.
    let program: URL
    let socket: URL
    let logger: Logger
    /// How long a verifier told to stop may take before it is killed.
    static let stopSeconds = 10
    /// Restarts refused because another verifier answers before that is logged as a warning.
    static let busyBeforeWarning = 5
    /// How much of a line, or of standard error, is kept.
    static let kept = 4 << 10
    /// The longest pause before starting again; a verifier that ran longer starts again after a second.
    static let longestPause = 60

    func run() async throws {
        let unsent = ResidentVerifier.variablesLeftToTheHook.filter { ProcessInfo.processInfo.environment[$0] != nil }
        if !unsent.isEmpty {
            logger.warning("the server's environment sets variables a hook never hands the resident verifier, so every push is verified by the hook program (unset them where the server starts)",
                           metadata: ["variables": "\(unsent.joined(separator: " "))"])
        }
        await cancelWhenGracefulShutdown {
            var pause = 1
            var busyInARow = 0
            while !Task.isCancelled {
                let started = ContinuousClock.now
                let ended = await runOnce()
                guard !Task.isCancelled else { return }
                if ContinuousClock.now - started > .seconds(Self.longestPause) { pause = 1 }
                // Another instance on this data directory verifies at the socket: it is theirs until it
                // ends. Said louder once it has lasted: a verifier of another version there hands back every push.
                let busy = ended.contains(CohortError.Code.busy.rawValue)
                busyInARow = busy ? busyInARow + 1 : 0
                logger.log(level: busy && busyInARow < Self.busyBeforeWarning ? .info : .warning,
                           "\(busy ? "another verifier answers at the resident verifier's socket" : "the resident verifier ended"); pushes are verified by a hook program started for each until it runs again",
                           metadata: ["verifier.socket": "\(socket.path)", "verifier.ended": "\(ended.prefix(1000))", "verifier.retry_seconds": "\(pause)"])
                try? await Task.sleep(for: .seconds(pause))
                pause = min(2 * pause, Self.longestPause)
            }
        }
    }

    /// Logs each line of the verifier's output (it says when it listens and, when it stops, how many
    /// pushes it verified), each cut at 4 KiB.
    private func log(_ output: SubprocessOutputSequence) async throws {
        var line = Data()
        for try await chunk in output {
            line.append(contentsOf: chunk.withUnsafeBytes { Array($0) })
            while let end = line.firstIndex(of: 0x0A) {
                logger.info("resident verifier: \(String(decoding: line[..<end], as: UTF8.self))", metadata: ["verifier.socket": "\(socket.path)"])
                line.removeSubrange(...end)
            }
            if line.count > Self.kept { line.removeAll() }
        }
    }

    /// The last 4 KiB of the verifier's standard error (a crash's report is longer).
    private static func tail(_ output: SubprocessOutputSequence) async throws -> String {
        var tail = Data()
        for try await chunk in output {
            tail.append(contentsOf: chunk.withUnsafeBytes { Array($0) })
            if tail.count > 2 * kept { tail.removeFirst(tail.count - kept) }
        }
        return String(decoding: tail.suffix(kept), as: UTF8.self)
    }

    /// Runs the verifier until it ends or the task is cancelled (then its input is closed, which
    /// stops it); returns how it ended: its status and the end of what it wrote to standard error.
    private func runOnce() async -> String {
        do {
            // Its input closed, a verifier stops at once; SIGKILL if it has not within 10 s (frozen).
            var options = PlatformOptions()
            options.teardownSequence = [.gracefulShutDown(allowedDurationToNextStep: .seconds(Self.stopSeconds))]
            let result = try await Subprocess.run(
                .path(FilePath(program.path)), arguments: ["hook", "serve", "--socket", socket.path, "--until-stdin-closes"],
                environment: .inherit, platformOptions: options, input: .inputWriter, output: .sequence, error: .sequence
            ) { execution in
                // Its standard input stays open, unwritten, while this runs: a server that dies closes it.
                let stdin = execution.standardInputWriter
                // Both read to the end even once the server stops, so that the last line (how many
                // pushes it verified) reaches the log: the reading is not cancelled with this task.
                let reading = Task { try await log(execution.standardOutput) }
                let errors = Task { try await Self.tail(execution.standardError) }
                return await withTaskCancellationHandler {
                    _ = await reading.result
                    return (try? await errors.value) ?? ""
                } onCancel: {
                    Task { try? await stdin.finish() }
                }
            }
            return "\(result.terminationStatus): \(result.closureResult)"
        } catch {
            return "could not start \(program.path): \(error)"
        }
    }
}
