import ArgumentParser
import CohortCollaboration
import CohortWorkspace
import Foundation

struct StartCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start a collaboration in DIR (new, or a folder whose files become its first content).",
        discussion: "Creates the repository, the signed collaboration file and membership with you as owner, and the signed genesis commit. Prints the collaboration identifier. If any step fails, nothing is left behind."
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
        Terminal.note("started '\(collaboration.title)' in \(workspace.directory.path); add people with `cohort participants add CARD`")
    }
}
