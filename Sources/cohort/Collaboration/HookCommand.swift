import ArgumentParser
import CohortHooks
import CohortIdentity
import Foundation

struct HookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hook",
        abstract: "The verification hook for any git server.",
        subcommands: [HookInstall.self, HookPreReceive.self]
    )
}

struct HookInstall: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install Cohort's pre-receive hook into a repository (usually bare, on the server).",
        discussion: "The hook calls this cohort binary by absolute path. Installing again updates it. An existing hook that is not Cohort's is refused unless --chain, which keeps it as pre-receive.chained and runs it after Cohort's checks."
    )

    @Argument(help: ArgumentHelp("The repository.", valueName: "BARE_REPO"))
    var repository: String

    @Flag(help: "Keep an existing pre-receive hook and run it after Cohort's checks.")
    var chain = false

    func execute() throws {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let (outcome, hook) = try HookInstaller.install(into: URL(fileURLWithPath: repository), binary: binary, chain: chain)
        switch outcome {
        case .installed: Terminal.print("installed \(hook.path) (calls \(binary.path))")
        case .updated: Terminal.print("updated \(hook.path) (calls \(binary.path))")
        case .chained: Terminal.print("installed \(hook.path); the existing hook runs after it as \(HookInstaller.chainedName)")
        }
    }
}

struct HookPreReceive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pre-receive",
        abstract: "Run by git's pre-receive hook: verify the pushed refs read from standard input.",
        discussion: "Prints one `cohort: rejected SHA (REF): CODE: reason` line per refused update (git shows them to the pusher) and exits 1 if there is any."
    )

    func run() throws {
        do {
            let input = try Files.readStandardInput(maxBytes: PreReceiveHook.maxInputBytes, what: "pre-receive input")
            let rejections = try PreReceiveHook.run(input: input)
            for rejection in rejections {
                Terminal.note("cohort: \(rejection)")
            }
            guard rejections.isEmpty else { throw ExitCode(1) }
        } catch let error as CohortError {
            Terminal.note("cohort: error: \(error)")
            throw ExitCode(1)
        }
    }
}
