import ArgumentParser
import CohortBase
import CohortCollaboration
import CohortIdentity
import CohortSync
import CohortWorkspace
import Foundation

struct ParticipantsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "participants",
        abstract: "List, add or remove the people who take part, or rotate your own root.",
        subcommands: [ParticipantsList.self, ParticipantsAdd.self, ParticipantsRemove.self, ParticipantsRotate.self]
    )
}

struct ParticipantsAdd: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add people from their identity cards (owner only).",
        discussion: "Each card is verified, the person's root computed for this collaboration and recorded in the next signed membership version, with a membership.added notice."
    )

    @Argument(help: ArgumentHelp("Identity cards (JSON files from `cohort id card`).", valueName: "CARD"))
    var cards: [String]

    @Flag(name: .customLong("read-only"), help: "Read-only permission (default: the collaboration's default).")
    var readOnly = false

    @Flag(name: .customLong("read-write"), help: "Permission to make changes (default: the collaboration's default).")
    var readWrite = false

    @Flag(name: .customLong("no-mentions"), help: "They may not mention others.")
    var noMentions = false

    @Flag(name: .customLong("no-comments"), help: "They may not comment.")
    var noComments = false

    @OptionGroup var publishing: MembershipPublishing

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard !cards.isEmpty else { throw ValidationError("give at least one CARD") }
        guard !(readOnly && readWrite) else { throw ValidationError("--read-only and --read-write exclude each other") }
    }

    func execute() async throws {
        let identities = try cards.map { try IdentityCard(json: Files.read($0, maxBytes: IdentityCard.maxJSONBytes, what: "card")) }
        let permission: Permission? = readOnly ? .readOnly : readWrite ? .readWrite : nil
        let opened = try workspace.open()
        try publishing.check(opened)
        let added = try opened.addParticipants(identities, settings: ParticipantSettings(
            permission: permission, mentions: !noMentions, comments: !noComments))
        for participant in added {
            Terminal.print("added \(participant.label) (\(participant.permission.rawValue)) root \(participant.root.prefix(16))")
        }
        let names = added.map(\.label).joined(separator: ", ")
        try await publishing.publish(opened, until: "\(names) cannot pull or push on the server")
    }
}

struct ParticipantsRemove: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove people by handle or root (owner only); they are refused from then on."
    )

    @Argument(help: ArgumentHelp("Handles, or roots (64 hex digits, or a unique prefix of 8 or more).", valueName: "HANDLE|ROOTHEX"))
    var people: [String]

    @OptionGroup var publishing: MembershipPublishing

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard !people.isEmpty else { throw ValidationError("name at least one person") }
    }

    func execute() async throws {
        let opened = try workspace.open()
        try publishing.check(opened)
        let removed = try opened.removeParticipants(people)
        for participant in removed {
            Terminal.print("removed \(participant.label) root \(participant.root.prefix(16))")
        }
        let names = removed.map(\.label).joined(separator: ", ")
        try await publishing.publish(opened, until: "the server still lets \(names) pull and push")
    }
}

struct ParticipantsList: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the participants as of the current commit."
    )

    @Flag(help: "Print JSON.")
    var json = false

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let state = try workspace.open().state()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            Terminal.write(try encoder.encode(state.membership.participants) + Data("\n".utf8))
            return
        }
        let participants = state.membership.participants
        Terminal.print("\(state.collaboration.title) (\(state.collaboration.identifier)): "
            + "\(Terminal.count(participants.count, "participant")), membership version \(state.membership.version)")
        let rows = participants.map { participant in
            [participant.handle ?? "(no handle)", participant.name ?? "",
             participant.root == state.owner.hex ? "owner" : participant.permission.rawValue,
             String(participant.root.prefix(12)),
             [participant.mentions ? nil : "no mentions", participant.comments ? nil : "no comments"].compactMap { $0 }.joined(separator: ", ")]
        }
        for line in Terminal.columns(rows) { Terminal.print("  " + line) }
        if !state.membership.removed.isEmpty {
            Terminal.print("removed: " + state.membership.removed.map { $0.handle ?? String($0.root.prefix(12)) }.joined(separator: ", "))
        }
    }
}

struct ParticipantsRotate: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Replace your own root with the one of your current card (after adding or losing a device).",
        discussion: "Signed by this device under your old root, which must still be a participant. Only your root changes."
    )

    @OptionGroup var publishing: MembershipPublishing

    @OptionGroup var workspace: WorkspaceOptions

    func execute() async throws {
        let opened = try workspace.open()
        try publishing.check(opened, rotating: true)
        let root = try opened.rotate()
        Terminal.print("your root is now \(root.hex)")
        try await publishing.publish(opened, until: "the server knows you by your old root", rotating: true)
    }
}

/// `--push` for membership changes, which a server only goes by once they reach it.
struct MembershipPublishing: ParsableArguments {
    @Flag(help: "Push the change now: a sync that shares committed work only, leaving the folder's edits for later.")
    var push = false

    @Option(help: ArgumentHelp("The remote to push to.", valueName: "NAME"))
    var remote = "origin"

    /// Before changing anything: a push needs a remote, and a participant who may push. Only a
    /// rotation can be made by a read-only participant (adding and removing are the owner's, who
    /// always has write permission, and refuse anyone else with their own reason).
    func check(_ workspace: Workspace, rotating: Bool = false) throws {
        guard push else { return }
        guard try workspace.repository.remoteURL(remote) != nil else {
            throw CohortError(.git, "--push: this workspace has no remote '\(remote)', so nothing was changed",
                              hint: "publish it first with `cohort publish URL`, or leave out --push")
        }
        guard try !rotating || !Self.readOnly(workspace) else {
            throw CohortError(.notPermitted, "--push: you take part read-only, so nothing you commit can be pushed; nothing was changed",
                              hint: "without --push the change is made here only; ask the owner to remove you and add your new card")
        }
    }

    static func readOnly(_ workspace: Workspace) throws -> Bool {
        let state = try workspace.state()
        return try workspace.me(in: state, signer: workspace.signer(for: state)).permission == .readOnly
    }

    /// After the change: pushes it, or says that it is only here and what that means.
    func publish(_ workspace: Workspace, until consequence: String, rotating: Bool = false) async throws {
        guard push else {
            if try rotating && Self.readOnly(workspace) {
                Terminal.print("only here: you take part read-only, so it cannot be pushed; ask the owner to remove you and add your new card")
            } else if try workspace.repository.remoteURL(remote) != nil {
                Terminal.print("only here until pushed: \(consequence) until `cohort sync` (or --push) sends this to \(remote)")
            } else {
                Terminal.print("this collaboration has no remote yet: the change travels with it when you publish it")
            }
            return
        }
        var options = SyncOptions()
        options.remote = remote
        options.commitLocalChanges = false
        options.progress = TerminalProgress.make()
        var report = try await SyncRun.run(workspace, options: options)
        TerminalProgress.finish()
        let delivered = await SyncRun.deliver(workspace, report: &report)
        for line in SyncRun.lines(report, delivered: delivered) { Terminal.print(line) }
        if report.pushed { Terminal.print("\(remote) now has this membership change") }
        if let error = SyncRun.error(report) {
            Terminal.error(CohortError(error.code, "\(error.reason); the membership change is committed here and goes out at the next `cohort sync`",
                                       hint: error.hint).description)
            throw ExitCode(SyncRun.exitStatus(report))
        }
    }
}
