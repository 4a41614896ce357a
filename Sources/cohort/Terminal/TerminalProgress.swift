import CohortGit
import Foundation
import Synchronization

/// Transfer progress on standard error, only when it is a terminal, at most ten updates a second.
enum TerminalProgress {
    private static let last = Mutex<(time: UInt64, shown: Bool)>((0, false))

    static func make(label: String) -> (@Sendable (TransferProgress) -> Void)? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        return { progress in
            let now = DispatchTime.now().uptimeNanoseconds
            let due = last.withLock { state -> Bool in
                let done = progress.totalObjects > 0 && progress.receivedObjects == progress.totalObjects
                guard done || now - state.time > 100_000_000 else { return false }
                state = (now, true)
                return true
            }
            guard due, progress.totalObjects > 0 else { return }
            let percent = progress.receivedObjects * 100 / progress.totalObjects
            let size = ByteCountFormatter.string(fromByteCount: Int64(progress.receivedBytes), countStyle: .binary)
            FileHandle.standardError.write(Data("\r\(label): \(percent)% (\(progress.receivedObjects)/\(progress.totalObjects)), \(size)   ".utf8))
        }
    }

    /// Ends the progress line, if one was drawn.
    static func finish() {
        if last.withLock({ $0.shown }) { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
