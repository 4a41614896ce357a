import ArgumentParser
import CohortVerification
import CohortWorkspace
import Foundation

struct VerifyCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Re-verify the whole history from the genesis commit by Cohort's rules.",
        discussion: "Incremental: commits verified before are remembered in .git/cohort/verified. Prints `ok: N commits`, or `error: CODE: commit SHA: reason` and exits 1."
    )

    @Flag(help: "Print JSON: {\"ok\", \"commits\", \"checkedNow\"} or {\"ok\": false, \"code\", \"commit\", \"reason\"}.")
    var json = false

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let workspace = try workspace.open()
        do {
            let report = try workspace.repository.verifyHistory(to: workspace.head().commit)
            if json {
                Terminal.printJSON(["ok": true, "commits": report.commits, "checkedNow": report.checkedNow] as [String: Any])
            } else {
                Terminal.print("ok: \(Terminal.count(report.commits, "commit"))")
            }
        } catch let violation as Violation where json {
            let object: [String: Any] = ["ok": false, "code": violation.error.code.rawValue, "commit": violation.commit.hex, "reason": violation.error.reason]
            Terminal.printJSON(object)
            throw ExitCode(1)
        }
    }
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export files for other tools.",
        subcommands: [ExportAllowedSigners.self]
    )
}

struct ExportAllowedSigners: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "allowed-signers",
        abstract: "Write an OpenSSH allowed-signers file for every key that signed this history.",
        discussion: "Use it with `git -c gpg.ssh.allowedSignersFile=FILE verify-commit` or `git log --show-signature`. Only keys of verified commits are listed."
    )

    @OptionGroup var output: OutputOptions

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let workspace = try workspace.open()
        let text = try workspace.repository.allowedSigners(for: workspace.head().commit)
        try output.emit(Data(text.utf8))
    }
}
