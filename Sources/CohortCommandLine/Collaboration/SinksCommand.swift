import ArgumentParser
import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortNotices
import CohortPostReceive
import CohortWorkspace
import Foundation

struct SinksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sinks",
        abstract: "List the configured notice sinks, send them a test notice, or deliver again what one gave up on.",
        subcommands: [SinksList.self, SinksTest.self, SinksReplay.self]
    )
}

/// The configuration files in effect (the user's, and the workspace's when run inside one), and where
/// their sinks keep state.
private func configurationFiles(_ options: WorkspaceOptions) -> [URL] {
    if let workspace = try? options.open() { return workspace.configurationFiles }
    return [options.home.home.directory.appendingPathComponent("config.toml")]
}

private func stateDirectory(_ options: WorkspaceOptions) -> URL {
    if let workspace = try? options.open() { return workspace.sinkStateDirectory }
    return options.home.home.directory.appendingPathComponent("sinks")
}

struct SinksList: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "The sinks in effect here, where each is configured."
    )

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let files = configurationFiles(workspace)
        let specs = try SinkConfiguration.load(files, registry: CohortCommandLine.sinks)
        if specs.isEmpty {
            Terminal.print("no sinks configured (looked in \(files.map(\.path).joined(separator: ", ")))")
        }
        for spec in specs {
            let from = spec.history == .all ? "every notice, history included" : "notices from when it was added"
            Terminal.print("\(spec.name)  \(spec.type)  \(from)  \(spec.location)")
        }
    }
}

struct SinksTest: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Send a test notice to every configured sink, or to the one named.",
        discussion: "The test notice is not part of any collaboration: type content.edited, collaboration \"cohort-sinks-test\", data {\"path\": \"cohort-sinks-test\", \"test\": \"true\"}, signed by this device."
    )

    @Argument(help: ArgumentHelp("The sink's name (see `cohort sinks list`).", valueName: "NAME"))
    var name: String?

    @OptionGroup var workspace: WorkspaceOptions

    func execute() async throws {
        let specs = try SinkConfiguration.load(configurationFiles(workspace), registry: CohortCommandLine.sinks).filter { name == nil || $0.name == name }
        guard !specs.isEmpty else {
            throw CohortError(.malformed, name.map { "no sink is named '\($0)'" } ?? "no sinks configured", hint: "see `cohort sinks list`")
        }
        let home = workspace.home.home
        let context = try CollaborationContext(identifier: "cohort-sinks-test", salt: Data(count: 16))
        let signer = try CollaborationSigner(home: home, context: context)
        let notice = Notice(type: .contentEdited, collaboration: context.identifier, actor: signer.root,
                            data: ["path": "cohort-sinks-test", "test": "true"], signer: signer.signer)
        let delivery = NoticeDelivery(notice: notice, envelope: try Envelope.seal(notice, by: signer), salt: context.salt)
        var failed = false
        for spec in specs {
            let sink = try spec.make(stateDirectory: stateDirectory(workspace))
            do {
                try await sink.deliver(delivery)
                Terminal.note("\(spec.name): delivered")
            } catch {
                failed = true
                Terminal.note("\(spec.name): failed: \(error)")
            }
            await sink.shutdown()
        }
        if failed { throw ExitCode(1) }
    }
}

struct SinksReplay: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Deliver again the notices a sink gave up on (and re-enable a disabled webhook).",
        discussion: "In a workspace, or on a hooked repository with --repository (its <git dir>/cohort/config.toml, and the server's sinks file when COHORT_SERVER_SINKS names it). The notices come from the outbox's failures.jsonl; those that go through are struck from it."
    )

    @Argument(help: ArgumentHelp("The sink's name (see `cohort sinks list`).", valueName: "NAME"))
    var name: String

    @Option(help: ArgumentHelp("A repository with Cohort's hooks, instead of the workspace.", valueName: "DIR"))
    var repository: String?

    @OptionGroup var workspace: WorkspaceOptions

    func execute() async throws {
        let files: [URL]
        let base: CohortDirectory
        if let repository {
            let hooked = try Repository(at: URL(fileURLWithPath: repository))
            base = hooked.cohortDirectory
            files = PostReceiveHook.sinkFiles(of: hooked)
        } else {
            let workspace = try workspace.open()
            base = workspace.repository.cohortDirectory
            files = workspace.configurationFiles
        }
        guard let spec = try SinkConfiguration.load(files, registry: CohortCommandLine.sinks).first(where: { $0.name == name }) else {
            throw CohortError(.malformed, "no sink is named '\(name)' in \(files.map(\.path).joined(separator: ", "))",
                              hint: repository == nil ? "`cohort sinks list` names the workspace's sinks"
                                  : "name one of those files' sinks; a server-wide sink needs COHORT_SERVER_SINKS set to the server's sinks.toml")
        }
        let sink = try spec.make(stateDirectory: base.sinkState)
        let report = try await NoticeOutbox(directory: base.outbox).replay(sink)
        await sink.shutdown()
        Terminal.print("\(name): \(report.delivered) delivered again" + (report.gaveUp > 0 ? ", \(report.gaveUp) still failing" : ""))
    }
}
