import ArgumentParser
import CohortGit
import CohortNotices
import CohortVerification
import CohortWorkspace
import Foundation

struct NoticesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notices",
        abstract: "Show the collaboration's notices, or deliver new ones to the configured sinks.",
        subcommands: [NoticesList.self, NoticesDeliver.self],
        defaultSubcommand: NoticesList.self
    )
}

struct NoticesList: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "The collaboration's notices, oldest first, from verified history.",
        discussion: "With --follow, keeps watching the branch and prints notices as commits arrive (stop with Ctrl-C)."
    )

    @Flag(help: "JSON Lines, as the sinks write them: {\"actor\", \"collaboration\", \"data\", \"id\", \"signed\", \"time\", \"type\"} per notice.")
    var json = false

    @Flag(help: "Keep printing new notices as commits arrive.")
    var follow = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between checks with --follow.", valueName: "S"))
    var interval = Seconds(2)

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard interval.value > 0, interval.value <= 3600 else { throw ValidationError("--interval must be more than 0 and at most 3600 seconds") }
    }

    func execute() async throws {
        let workspace = try workspace.open()
        var last: ObjectID?
        repeat {
            let head = try workspace.head().commit
            if head != last {
                let state = try workspace.state()
                let handles = state.membership.everyHandle
                for signed in try workspace.signedNotices(since: last) {
                    let delivery = NoticeDelivery(signed, handles: handles, salt: state.context.salt)
                    Terminal.write(json ? delivery.json() + Data("\n".utf8) : Data((delivery.summary + "\n").utf8))
                }
                last = head
            }
            if follow { try await Task.sleep(for: .seconds(interval.value)) }
        } while follow
    }
}

struct NoticesDeliver: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliver",
        abstract: "Deliver the notices that arrived since the last delivery to the configured sinks.",
        discussion: "Sinks come from $COHORT_HOME/config.toml and .git/cohort/config.toml. Notices wait in .git/cohort/outbox until each sink has them; a mention reaches these sinks only if it mentions you."
    )

    @OptionGroup var workspace: WorkspaceOptions

    func execute() async throws {
        let workspace = try workspace.open()
        guard let reports = try await WorkspaceSinks.deliver(workspace) else {
            Terminal.note("no sinks configured: add [[sinks]] to \(workspace.configurationFiles.map(\.path).joined(separator: " or ")) (a sink with history = \"all\" also gets the notices from before it)")
            return
        }
        for report in reports {
            Terminal.note("\(report.sink): \(report.delivered) delivered" + report.trouble())
        }
    }
}
