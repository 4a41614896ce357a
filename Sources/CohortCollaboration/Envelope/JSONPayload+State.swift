import CohortIdentity
import Foundation

// The collaboration file and the membership, read as `JSONPayload`s: every state a verifier reads
// (each push reads the branch's) then skips Foundation's decoder and the type lookups its first use
// costs in a fresh process. Fields, types, optionals (absent or `null`) and refusals are the
// synthesized `Codable` ones, with one refusal more: an integer field (`version`, `revision`) from
// 2^53 on, which `JSONDecoder` reads through `Decimal` (dropping any fraction), is refused as
// `JSONValue.integer` refuses it; no valid file comes near. `EnvelopeReadingTests` holds both
// readers to the same answers.

extension CollaborationFile: JSONPayload {
    init(json: JSONObject) throws(JSONFailure) {
        let initiator = try json.object("initiator")
        let owner = try json.object("owner")
        identifier = try json.string("identifier")
        localIdentifier = try json.string("localIdentifier")
        title = try json.string("title")
        self.initiator = Initiator(handle: try initiator.string("handle"), name: try initiator.string("name"))
        salt = try json.string("salt")
        self.owner = Owner(root: try owner.string("root"), scheme: try owner.value("scheme", as: RootScheme.self))
        shareOptions = try ShareOptions(json: json.object("shareOptions"))
        createdAt = try JSONDate.parse(json.string("createdAt"), field: "createdAt")
        revision = try json.optionalInteger("revision")
        signer = try Signer(json: json.object("signer"))
    }
}

extension ShareOptions {
    /// As decoded, not validated: `CollaborationFile.validate` checks the groups, as it does after `Codable`.
    init(json: JSONObject) throws(JSONFailure) {
        var groups: [OptionsGroup] = []
        for group in try json.objects("groups") {
            var options: [CollaborationOption] = []
            for option in try group.objects("options") {
                options.append(CollaborationOption(identifier: try option.string("identifier"), title: try option.string("title"),
                                                   isSelected: try option.bool("isSelected")))
            }
            groups.append(OptionsGroup(identifier: try group.string("identifier"), title: try group.string("title"),
                                       kind: try group.value("kind", as: OptionsGroup.Kind.self), options: options))
        }
        self.init(unchecked: groups, summary: try json.string("summary"))
    }
}

extension Membership: JSONPayload {
    init(json: JSONObject) throws(JSONFailure) {
        var participants: [Participant] = []
        for item in try json.objects("participants") {
            participants.append(try Participant(json: item))
        }
        var removed: [RemovedParticipant] = []
        for item in try json.objects("removed") {
            removed.append(try RemovedParticipant(json: item))
        }
        self.init(collaboration: try json.string("collaboration"), version: try json.integer("version"),
                  previous: try json.optionalString("previous"), participants: participants, removed: removed,
                  signer: try Signer(json: json.object("signer")))
    }
}

extension Participant {
    init(json: JSONObject) throws(JSONFailure) {
        root = try json.string("root")
        scheme = try json.value("scheme", as: RootScheme.self)
        handle = try json.optionalString("handle")
        name = try json.optionalString("name")
        permission = try json.value("permission", as: Permission.self)
        mentions = try json.bool("mentions")
        comments = try json.bool("comments")
        addedBy = try json.string("addedBy")
        addedAt = try JSONDate.parse(json.string("addedAt"), field: "addedAt")
    }
}

extension RemovedParticipant {
    init(json: JSONObject) throws(JSONFailure) {
        root = try json.string("root")
        scheme = try json.value("scheme", as: RootScheme.self)
        handle = try json.optionalString("handle")
        removedBy = try json.string("removedBy")
        removedAt = try JSONDate.parse(json.string("removedAt"), field: "removedAt")
    }
}
