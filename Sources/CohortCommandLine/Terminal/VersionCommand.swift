import ArgumentParser
import CohortBase
import CohortGit
import CohortIdentity

struct VersionCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print Cohort's version and the versions of the libraries it links."
    )

    func execute() throws {
        Terminal.print("cohort \(CohortVersion.text)")
        Terminal.print("libgit2 \(GitRuntime.version)")
        Terminal.print(Libraries.libcryptoVersion)
    }
}
