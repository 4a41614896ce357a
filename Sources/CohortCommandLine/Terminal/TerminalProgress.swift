import CohortGit
import Foundation
import Synchronization

/// Progress on standard error, only when it is a terminal: one line per phase (receiving, resolving,
/// sending, verifying, checking out), redrawn in place at most ten times a second and only when
/// what it says changed.
enum TerminalProgress {
    private struct Shown {
        var phase: TransferProgress.Phase?
        var text = ""
        var time: UInt64 = 0
    }

    private static let shown = Mutex(Shown())

    static func make() -> (@Sendable (TransferProgress) -> Void)? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        return { progress in
            let now = DispatchTime.now().uptimeNanoseconds
            let text = describe(progress)
            let output: String? = shown.withLock { state in
                let newPhase = state.phase != progress.phase
                let finished = progress.total > 0 && progress.current == progress.total
                guard text != state.text, newPhase || finished || now - state.time > 100_000_000 else { return nil }
                let start = newPhase && state.phase != nil ? "\n" : "\r"
                state = Shown(phase: progress.phase, text: text, time: now)
                return start + text + "   "
            }
            if let output { FileHandle.standardError.write(Data(output.utf8)) }
        }
    }

    static func describe(_ progress: TransferProgress) -> String {
        guard progress.total > 0 else {
            return progress.phase == .verifying && progress.current > 0
                ? "Verifying \(Terminal.count(progress.current, "commit"))…" : "\(progress.phase.rawValue)…"
        }
        var text = "\(progress.phase.rawValue): \(progress.current * 100 / progress.total)% (\(progress.current)/\(progress.total))"
        if progress.bytes > 0 { text += ", " + ByteCountFormatter.string(fromByteCount: Int64(progress.bytes), countStyle: .binary) }
        return text
    }

    /// Ends the progress line, if one was drawn.
    static func finish() {
        if shown.withLock({ state in defer { state = Shown() }; return state.phase != nil }) {
            FileHandle.standardError.write(Data("\n".utf8))
        }
    }
}
