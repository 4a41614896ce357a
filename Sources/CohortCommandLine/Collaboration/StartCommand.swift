import ArgumentParser
import CohortWorkspace
import Foundation

struct StartCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start a collaboration in DIR (new, or a folder whose files become its first content).",
        discussion: """
        Creates the repository, the signed collaboration file and membership with you as owner, and the \
        signed genesis commit. Prints the collaboration identifier. A git repository in DIR is adopted: \
        its files as they are become the first content, its branches move under pre-cohort/ and its \
        remotes are renamed pre-cohort-NAME, so the old history stays reachable. If any step fails, \
        nothing is left behind and an adopted repository is as it was.
        """
    )

    @Argument(help: ArgumentHelp("The folder for the collaboration.", valueName: "DIR"))
    var directory: String

    @Option(help: ArgumentHelp("The collaboration's title.", valueName: "TITLE"))
    var title: String

    @Option(name: .customLong("local-id"), help: ArgumentHelp("Your own identifier for it (default: the collaboration identifier).", valueName: "ID"))
    var localIdentifier: String?

    @Flag(name: .customLong("read-only"), help: "New participants get read-only permission unless told otherwise.")
    var readOnly = false

    @Flag(name: .customLong("no-mentions"), help: "Turn mentions off.")
    var noMentions = false

    @Flag(name: .customLong("no-comments"), help: "Turn comments off.")
    var noComments = false

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let request = StartRequest(
            directory: URL(fileURLWithPath: directory), title: title, localIdentifier: localIdentifier,
            options: .defaults(readOnly: readOnly, mentions: !noMentions, comments: !noComments))
        let (workspace, collaboration) = try Workspace.start(request, home: home.home)
        Terminal.print(collaboration.identifier)
        let kept = try workspace.keptFromBeforeCohort()
        if !kept.branches.isEmpty || !kept.remotes.isEmpty {
            Terminal.note("adopted the git repository: its files as they are became the first content; its history is kept "
                + (kept.branches.isEmpty ? "" : "on \(kept.branches.joined(separator: ", ")) (`git log \(kept.branches[0])`)")
                + (kept.remotes.isEmpty ? "" : "\(kept.branches.isEmpty ? "" : ", ")its remotes are now \(kept.remotes.joined(separator: ", ")), so sync never pushes there"))
        }
        Terminal.note("started '\(collaboration.title)' in \(workspace.directory.path); add people with `cohort participants add CARD`")
    }
}
