import CohortBase
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
/// verifies its push itself. It reads its standard input until it ends, so it stops with the server,
/// however the server ends.
struct ResidentVerifierService: Service {
    /// The `cohort` binary the hooks call.
    let program: URL
    let socket: URL
    let logger: Logger
    /// How long a verifier told to stop may take before it is killed.
    static let stopSeconds = 10
    /// The longest pause before starting again; a verifier that ran longer starts again after a second.
    static let longestPause = 60

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var pause = 1
            while !Task.isCancelled {
                let started = ContinuousClock.now
                let ended = await runOnce()
                guard !Task.isCancelled else { return }
                if ContinuousClock.now - started > .seconds(Self.longestPause) { pause = 1 }
                // Another instance on this data directory verifies at the socket: it is theirs until it ends.
                let busy = ended.contains(CohortError.Code.busy.rawValue)
                logger.log(level: busy ? .info : .warning,
                           "\(busy ? "another verifier answers at the resident verifier's socket" : "the resident verifier ended"); pushes are verified by a hook program started for each until it runs again",
                           metadata: ["verifier.socket": "\(socket.path)", "verifier.ended": "\(ended.prefix(500))", "verifier.retry_seconds": "\(pause)"])
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
            if line.count > 4 << 10 { line.removeAll() }
        }
    }

    /// Runs the verifier until it ends or the task is cancelled (then it is sent SIGTERM); returns how
    /// it ended: its status and what it wrote to standard error.
    private func runOnce() async -> String {
        do {
            // Cancelled (the server stops): SIGTERM, and SIGKILL if it has not stopped within 10 s.
            var options = PlatformOptions()
            options.teardownSequence = [.gracefulShutDown(allowedDurationToNextStep: .seconds(Self.stopSeconds))]
            let result = try await Subprocess.run(
                .path(FilePath(program.path)), arguments: ["hook", "serve", "--socket", socket.path, "--until-stdin-closes"],
                environment: .inherit, platformOptions: options, input: .inputWriter, output: .sequence, error: .string(limit: 4 << 10)
            ) { execution in
                // Its standard input stays open, unwritten, while this runs: a server that dies closes it.
                let stdin = execution.standardInputWriter
                // Read to the end even once the server stops, so that its last line (how many pushes it
                // verified) reaches the log: the reading is not cancelled with this task.
                let reading = Task { try await log(execution.standardOutput) }
                _ = await reading.result
                try? await stdin.finish()
            }
            return "\(result.terminationStatus): \(result.standardError)"
        } catch {
            return "could not start \(program.path): \(error)"
        }
    }
}
