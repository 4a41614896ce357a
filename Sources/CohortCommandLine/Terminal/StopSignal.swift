import Dispatch
import Foundation
import Synchronization

/// SIGINT and SIGTERM, turned into a flag a loop checks between its rounds, and into `onSignal` for a
/// command that must be woken (the sources only keep the handlers alive; the flag is behind a lock).
final class StopSignal: @unchecked Sendable {
    private let flag = Mutex(false)
    private var sources: [any DispatchSourceSignal] = []

    init(onSignal: (@Sendable () -> Void)? = nil) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [weak self] in
                self?.flag.withLock { $0 = true }
                onSignal?()
            }
            source.resume()
            sources.append(source)
        }
    }

    var requested: Bool { flag.withLock { $0 } }
}
