import ArgumentParser
import CohortCollaboration
import CohortIdentity
import CohortWorkspace
import Foundation

struct ParticipantsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "participants",
        abstract: "List, add or remove the people who take part, or rotate your own root.",
        subcommands: [ParticipantsList.self, ParticipantsAdd.self, ParticipantsRemove.self, ParticipantsRotate.self]
    )
}

struct ParticipantsAdd: CohortCommand {
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

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard !cards.isEmpty else { throw ValidationError("give at least one CARD") }
        guard !(readOnly && readWrite) else { throw ValidationError("--read-only and --read-write exclude each other") }
    }

    func execute() throws {
        let identities = try cards.map { try IdentityCard(json: Files.read($0, maxBytes: IdentityCard.maxJSONBytes, what: "card")) }
        let permission: Permission? = readOnly ? .readOnly : readWrite ? .readWrite : nil
        let added = try workspace.open().addParticipants(identities, settings: ParticipantSettings(
            permission: permission, mentions: !noMentions, comments: !noComments))
        for participant in added {
            Terminal.print("added \(participant.label) (\(participant.permission.rawValue)) root \(participant.root)")
        }
    }
}

struct ParticipantsRemove: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove people by handle or root (owner only); they are refused from then on."
    )

    @Argument(help: ArgumentHelp("Handles, or roots (64 hex digits, or a unique prefix of 8 or more).", valueName: "HANDLE|ROOTHEX"))
    var people: [String]

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard !people.isEmpty else { throw ValidationError("name at least one person") }
    }

    func execute() throws {
        for participant in try workspace.open().removeParticipants(people) {
            Terminal.print("removed \(participant.label) root \(participant.root)")
        }
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
        Terminal.print("\(state.collaboration.title) (\(state.collaboration.identifier)), membership version \(state.membership.version)")
        for participant in state.membership.participants {
            let role = participant.root == state.owner.hex ? "owner" : participant.permission.rawValue
            let switches = [participant.mentions ? nil : "no mentions", participant.comments ? nil : "no comments"].compactMap { $0 }
            Terminal.print("  \(participant.label)  \(role)\(switches.isEmpty ? "" : " (" + switches.joined(separator: ", ") + ")")  \(participant.root)")
        }
        if !state.membership.removed.isEmpty {
            Terminal.print("removed: " + state.membership.removed.map { $0.handle ?? String($0.root.prefix(16)) }.joined(separator: ", "))
        }
    }
}

struct ParticipantsRotate: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Replace your own root with the one of your current card (after adding or losing a device).",
        discussion: "Signed by this device under your old root, which must still be a participant. Only your root changes."
    )

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let root = try workspace.open().rotate()
        Terminal.print("your root is now \(root.hex)")
    }
}
