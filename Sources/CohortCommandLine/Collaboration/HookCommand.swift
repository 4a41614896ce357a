import ArgumentParser
import CohortBase
import CohortHooks
import CohortPostReceive
import CohortVerification
import Foundation
import Synchronization

struct HookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hook",
        abstract: "The verification hook for any git server.",
        subcommands: [HookInstall.self, HookPreReceive.self, HookPostReceive.self, HookServe.self]
    )
}

struct HookInstall: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install Cohort's pre-receive and post-receive hooks into a repository (usually bare, on the server).",
        discussion: "The hooks call this cohort binary by absolute path (pre-receive calls cohort-hook instead when it sits beside it and answers with the same version: the same checks, a faster start). Installing again updates them. An existing hook that is not Cohort's is refused unless --chain, which keeps it as <hook>.chained and runs it after Cohort's. Branches and tags already in the repository are verified once, so the hook can count them as its own."
    )

    @Argument(help: ArgumentHelp("The repository.", valueName: "BARE_REPO"))
    var repository: String

    @Flag(help: "Keep an existing pre-receive hook and run it after Cohort's checks.")
    var chain = false

    @Option(help: ArgumentHelp("Ask the resident verifier listening at this socket (`cohort hook serve --socket`) first; the push is verified as without it when none answers.",
                               valueName: "SOCKET"))
    var resident: String?

    func execute() throws {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        if let resident, !resident.hasPrefix("/") {
            throw CohortError(.usage, "the resident verifier's socket \(resident) is not an absolute path",
                              hint: "give the path `cohort hook serve --socket` listens at, from /")
        }
        let socket = resident.map { URL(fileURLWithPath: $0) }
        for (hook, outcome, program) in try HookInstaller.install(into: URL(fileURLWithPath: repository), binary: binary, chain: chain, resident: socket) {
            switch outcome {
            case .installed: Terminal.print("installed \(hook.path) (calls \(program.path))")
            case .updated: Terminal.print("updated \(hook.path) (calls \(program.path))")
            case .chained:
                Terminal.print("installed \(hook.path) (calls \(program.path)); the existing hook runs after it as \(HookInstaller.chainedName(hook.lastPathComponent))")
            }
        }
        // The hook trusts only what it verified itself: check the history already there once, now.
        let adopted = try PreReceiveHook.adoptExisting(at: URL(fileURLWithPath: repository))
        if adopted.commits > 0 { Terminal.print("verified \(Terminal.count(adopted.commits, "commit")) already on branches and tags") }
        for rejection in adopted.rejections {
            Terminal.note("warning: \(rejection) (the hook counts branches and tags as verified: fix or delete this ref before anyone pushes)")
        }
    }
}

struct HookServe: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Keep the pre-receive verification running, for hooks installed with --resident.",
        discussion: "Listens at SOCKET (mode 0600) until SIGTERM or Ctrl-C, or until its socket or its own program file is replaced (then it exits with an error, to be started again), and verifies each push the installed pre-receive hands it with the same code as `cohort hook pre-receive`, without starting a program for each push. It answers only processes of its own user, and the hook only trusts a verifier of its own user; when none answers, or one of another version, the hook verifies the push itself."
    )

    @Option(help: ArgumentHelp("Where to listen (a path, at most 107 bytes).", valueName: "SOCKET"))
    var socket: String

    @Option(help: "Pushes verified at once; the hooks of any more verify their pushes themselves.")
    var concurrentPushes = 4

    @Flag(help: "Stop once standard input ends, and leave SIGINT and SIGTERM to the parent: how `cohort serve` starts its verifier, so that it never outlives the server.")
    var untilStdinCloses = false

    func validate() throws {
        guard (1...64).contains(concurrentPushes) else { throw ValidationError("--concurrent-pushes must be between 1 and 64") }
    }

    func execute() throws {
        if untilStdinCloses {
            // Its parent stops it by closing its input: a Ctrl-C or a service manager's SIGTERM meant
            // for the parent's whole group is the parent's to act on (ignored before the socket exists).
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
        }
        let verifier = try ResidentVerifier(socket: URL(fileURLWithPath: socket), concurrentPushes: concurrentPushes, program: Self.ownProgram())
        var signals: StopSignal?
        if untilStdinCloses {
            Terminal.print("verifying pushes for the hooks installed with --resident \(verifier.socket.path) (until standard input ends)")
            Self.whenStandardInputEnds { verifier.stop() }
        } else {
            Terminal.print("verifying pushes for the hooks installed with --resident \(verifier.socket.path) (SIGTERM or Ctrl-C stops)")
            signals = StopSignal { verifier.stop() }
        }
        verifier.run()
        withExtendedLifetime(signals) {}
        let count = verifier.answered.load(ordering: .relaxed)
        Terminal.print("stopped; \(count) \(count == 1 ? "push" : "pushes") verified")
        if let reason = verifier.endedBecause.withLock({ $0 }) {
            throw CohortError(.io, "the resident verifier ended: \(reason)", hint: "start it again; until then each hook verifies its push itself")
        }
    }

    /// The program file this process runs as (Linux: what /proc/self/exe names), for the verifier to
    /// notice its replacement; nil elsewhere. One already replaced since the start ("… (deleted)") is
    /// named as it is, which the verifier refuses (it cannot be read).
    static func ownProgram() -> URL? {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink("/proc/self/exe", &buffer, 4096)
        guard count > 0 else { return nil }
        return URL(fileURLWithPath: String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        #else
        return nil
        #endif
    }

    /// Calls `action` on a thread of its own once standard input ends or fails (what it reads is
    /// dropped): the end of a pipe whose other end the parent held, closed by the parent or by its death.
    static func whenStandardInputEnds(_ action: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count > 0 || (count < 0 && errno == EINTR) { continue }
                break
            }
            action()
        }
        thread.start()
    }
}

struct HookPreReceive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pre-receive",
        abstract: "Run by git's pre-receive hook: verify the pushed refs read from standard input.",
        discussion: "Prints one `cohort: rejected SHA (REF): CODE: reason` line per refused update (git shows them to the pusher) and exits 1 if there is any."
    )

    func run() throws {
        let status = PreReceiveHook.main()
        if status != 0 { throw ExitCode(status) }
    }
}

struct HookPostReceive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "post-receive",
        abstract: "Run by git's post-receive hook: deliver the notices of the accepted push to the repository's sinks.",
        discussion: "Sinks are configured in <git dir>/cohort/config.toml, and in the file COHORT_SERVER_SINKS names (cohort serve sets it to DATA/sinks.toml). Notices wait in <git dir>/cohort/outbox until each sink has them. Prints one `cohort: SINK: …` line per sink."
    )

    func run() async throws {
        do {
            let input = try AtomicFile.readStandardInput(maxBytes: PreReceiveHook.maxInputBytes, what: "post-receive input",
                                                     hint: PushLimits.tooManyUpdatesHint)
            let gitDirectory = FileManager.default.currentDirectoryPath
            for report in try await PostReceiveHook.run(input: input, registry: CohortCommandLine.sinks) {
                Terminal.note("cohort: \(report.sink): \(Terminal.count(report.delivered, "notice")) delivered" + report.trouble(repository: gitDirectory))
            }
        } catch {
            Terminal.note("cohort: error: \(CohortError(error, otherwise: .io))")
            throw ExitCode(1)
        }
    }
}
