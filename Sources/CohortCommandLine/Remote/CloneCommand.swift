import ArgumentParser
import CohortGit
import CohortRemote
import CohortSync
import CohortWorkspace
import Foundation

struct CloneCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "clone",
        abstract: "Clone a collaboration from its link, proving your identity with this device's key, and verify it.",
        discussion: "LINK is a Cohort link (https://host/c/<identifier>), or any git URL or folder holding a collaboration. The clone is verified by the same rules as `cohort verify` before it is used; a history that fails is removed again. Progress goes to standard error on a terminal; the workspace's folder is printed on standard output."
    )

    @Argument(help: ArgumentHelp("The collaboration link (https://host/c/<identifier>), or a git URL or folder.", valueName: "LINK"))
    var link: String

    @Argument(help: ArgumentHelp("Where to put the workspace (default: a folder named after the title).", valueName: "DIR"))
    var directory: String?

    @Flag(help: "Print the outcome as JSON: {\"directory\", \"identifier\", \"title\", \"initiator\", \"participants\", \"commits\"}; no progress.")
    var json = false

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let outcome: CloneOutcome
        let progress = json ? nil : TerminalProgress.make()
        if let link = try? CollaborationLink(link) {
            let client = ServerClient()
            defer { try? Blocking.wait { await client.shutdown() } }
            let target: URL
            if let directory {
                target = URL(fileURLWithPath: directory, isDirectory: true)
            } else {
                let info = try Blocking.wait { try await client.linkInfo(link) }
                target = URL(fileURLWithPath: Self.folderName(for: info.title, fallback: link.identifier), isDirectory: true)
            }
            outcome = try Workspace.clone(link, into: target, home: home.home, client: client, progress: progress)
        } else {
            let name = URL(fileURLWithPath: link).deletingPathExtension().lastPathComponent
            let target = URL(fileURLWithPath: directory ?? (name.isEmpty ? "collaboration" : name), isDirectory: true)
            outcome = try Workspace.clone(from: link, into: target, home: home.home, callbacks: RemoteCallbacks(progress: progress))
        }
        TerminalProgress.finish()
        let folder = outcome.workspace.directory.standardizedFileURL.path.replacingOccurrences(of: "/$", with: "", options: .regularExpression)
        if json {
            Terminal.printJSON(["directory": folder, "identifier": outcome.identifier, "title": outcome.title, "initiator": outcome.initiator,
                                "participants": outcome.participants, "commits": outcome.report.commits])
            return
        }
        Terminal.note("cloned '\(outcome.title)' by \(outcome.initiator), \(Terminal.count(outcome.participants, "participant")); \(Terminal.count(outcome.report.commits, "commit")) verified")
        Terminal.print(folder)
    }

    /// A folder name from a title: letters, digits, '-', '_' and spaces turned into '-'.
    static func folderName(for title: String, fallback: String) -> String {
        let cleaned = title.lowercased().map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "-" }
        let name = String(cleaned).split(separator: "-").joined(separator: "-")
        return name.isEmpty || name.utf8.count > 100 ? fallback : name
    }
}
