import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// Objects an attacker writes by hand, past every check libgit2's builders make: trees with names git
/// refuses, commits whose signature sits where it should not.
public enum Attacks {
    /// Writes `data` as an object of `type` with `git hash-object --literally` (no validation at all).
    public static func writeObject(_ data: Data, type: String, in workspace: Workspace) throws -> ObjectID {
        try writeObject(data, type: type, inRepositoryAt: workspace.directory)
    }

    /// `writeObject` into the repository at `directory`.
    public static func writeObject(_ data: Data, type: String, inRepositoryAt directory: URL) throws -> ObjectID {
        let result = try run("git", ["hash-object", "--literally", "-t", type, "-w", "--stdin"], in: directory, stdin: data)
        guard result.status == 0 else { throw CohortError(.git, "hash-object: \(result.stderr)") }
        return try ObjectID(hex: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A tree of `entries` (mode, name, id) in git's order (a tree's name sorts as if it ended in '/').
    public static func tree(_ entries: [(mode: UInt32, name: String, id: ObjectID)], in workspace: Workspace) throws -> ObjectID {
        let sorted = entries.sorted { a, b in
            let left = Array(a.name.utf8) + (a.mode == 0o040000 ? [0x2F] : [])
            let right = Array(b.name.utf8) + (b.mode == 0o040000 ? [0x2F] : [])
            return left.lexicographicallyPrecedes(right)
        }
        var data = Data()
        for entry in sorted {
            data += Data("\(String(entry.mode, radix: 8)) \(entry.name)".utf8) + Data([0]) + Data(hex: entry.id.hex)!
        }
        return try writeObject(data, type: "tree", in: workspace)
    }

    /// HEAD's tree with one more file at `components` (each a raw name, folders made as needed).
    public static func treeAdding(_ components: [String], content: Data, to workspace: Workspace) throws -> ObjectID {
        let repository = workspace.repository
        let root = try repository.tree(ofCommit: workspace.head().commit)
        var id = try repository.writeBlob(content)
        var mode: UInt32 = 0o100644
        for name in components.dropFirst().reversed() {
            id = try tree([(mode, name, id)], in: workspace)
            mode = 0o040000
        }
        let existing = try repository.entries(ofTree: root).filter { $0.name != components[0] }.map { ($0.mode, $0.name, $0.id) }
        return try tree(existing + [(mode, components[0], id)], in: workspace)
    }

    /// The bytes of a commit of `tree` and `parents` as `cohort commit` would make them, unsigned, and
    /// the armored signature `signer` makes over them.
    public static func unsignedCommit(tree: ObjectID, parents: [ObjectID], message: String, signer: CollaborationSigner,
                                      in workspace: Workspace) throws -> (bytes: Data, armored: String) {
        var captured = Data()
        var armor = ""
        _ = try workspace.repository.createCommit(
            tree: tree, parents: parents, message: CommitTrailer.append(to: message, scheme: signer.root.scheme, proof: signer.proof),
            author: Person(name: "Forger", email: "forger@example.com"),
            sign: { data in
                captured = data
                armor = try SSHSignature.sign(data, with: signer.key)
                return armor
            })
        return (captured, armor)
    }

    /// The unsigned commit `bytes` with a header per signature (`gpgsig` and the armor, say) placed
    /// before its message, as git places one: signatures set by hand, outside `createCommit`.
    public static func signedCommit(_ bytes: Data, signatures: [(header: String, armored: String)]) throws -> Data {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\n\n") else { throw CohortError(.malformed, "the commit has no message") }
        let headers = signatures.map { "\n\($0.header) " + $0.armored.trimmingCharacters(in: .newlines).replacingOccurrences(of: "\n", with: "\n ") }
        return Data((String(text[..<split.lowerBound]) + headers.joined() + String(text[split.lowerBound...])).utf8)
    }

    /// Enough valid signatures by `signer` for its key to get its table of multiples (three commits of
    /// 100 of its notices), then a commit carrying `signer`'s real signature made over another commit's
    /// bytes; the branch is moved to it, which is returned.
    public static func transplantedSignatureAfterManyValid(_ workspace: Workspace, signer: CollaborationSigner, in collaboration: String) throws -> ObjectID {
        for _ in 0..<3 { try forge(workspace, signer: signer, files: noticeFiles(100, by: signer, in: collaboration)) }
        let tip = try workspace.head().commit
        let tree = try workspace.repository.tree(ofCommit: tip)
        let donor = try unsignedCommit(tree: tree, parents: [tip], message: "donor", signer: signer, in: workspace)
        let victim = try unsignedCommit(tree: tree, parents: [tip], message: "victim", signer: signer, in: workspace)
        let id = try writeObject(signedCommit(victim.bytes, signatures: [("gpgsig", donor.armored)]), type: "commit", in: workspace)
        try point(workspace, at: id)
        return id
    }

    /// `envelope` with one byte of its first signature changed (inside the DER signature's values):
    /// still a well-formed envelope, no longer signed by anyone.
    public static func signatureByteChanged(_ envelope: Data) throws -> Data {
        guard let object = try JSONSerialization.jsonObject(with: envelope) as? [String: Any],
              let signatures = object["signatures"] as? [[String: Any]], let encoded = signatures.first?["sig"] as? String,
              var signature = Data(base64Encoded: encoded), signature.count > 40,
              let range = envelope.range(of: Data(encoded.utf8))
        else {
            throw CohortError(.malformed, "not an envelope with a base64 signature")
        }
        signature[signature.startIndex + 40] ^= 0x01
        var changed = envelope
        changed.replaceSubrange(range, with: Data(signature.base64EncodedString().utf8))
        return changed
    }

    /// Moves `workspace`'s branch to `commit`, whatever it is.
    public static func point(_ workspace: Workspace, at commit: ObjectID) throws {
        let (branch, head) = try workspace.head()
        try workspace.repository.updateReference(branch, to: commit, expected: head, message: "attack")
    }

    /// An envelope file of `type` whose payload is exactly `payload`, signed over the DSSE encoding
    /// with `signer`'s real key, outside `Envelope.seal` (whose JSON is always well-formed).
    public static func envelope(payload: Data, type: String = Notice.payloadType, by signer: CollaborationSigner) throws -> Data {
        let signature = try signer.key.signature(for: Envelope.pae(type: type, payload: payload))
        let object: [String: Any] = [
            "payload": payload.base64EncodedString(), "payloadType": type,
            "signatures": [["keyid": "", "sig": signature.base64EncodedString()]],
        ]
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    }

    /// The signed payload of `notice` by `signer`, with `"type"` named a second time as `second`
    /// (`JSONDecoder` keeps the first value, most other readers the last).
    public static func noticePayloadNamingTypeTwice(_ notice: Notice, second: NoticeType, by signer: CollaborationSigner) throws -> Data {
        try payload(notice, by: signer, namingAgain: "type", as: "\"\(second.rawValue)\"")
    }

    /// The payload of `value` signed by `signer`, with `key` named a second time, its value the JSON
    /// text `json`.
    public static func payload<P: SignedPayload>(_ value: P, by signer: CollaborationSigner, namingAgain key: String, as json: String) throws -> Data {
        var text = try payloadText(value, by: signer)
        text.removeLast()
        return Data((text + ",\"\(key)\":\(json)}").utf8)
    }

    /// The payload of `value` signed by `signer`, with the whole number at top-level `key` spelled as
    /// the JSON text `json` instead (`1e16`, `4.0`): what another JSON reader could read differently.
    public static func payload<P: SignedPayload>(_ value: P, by signer: CollaborationSigner, spelling key: String, as json: String) throws -> Data {
        var text = try payloadText(value, by: signer)
        guard let number = text.firstRange(of: try Regex("\"\(key)\":-?[0-9]+")) else {
            throw CohortError(.malformed, "the payload has no whole number at '\(key)'")
        }
        text.replaceSubrange(number, with: "\"\(key)\":\(json)")
        return Data(text.utf8)
    }

    /// `value`'s payload as `Envelope.seal` writes it, signed by `signer`.
    private static func payloadText<P: SignedPayload>(_ value: P, by signer: CollaborationSigner) throws -> String {
        var signed = value
        signed.signer = signer.signer
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(signed), as: UTF8.self)
    }

    /// `noticeFiles` with, at `index`, `signer`'s well-formed notice padded past the largest notice
    /// envelope Cohort reads (`Notice.maxEnvelopeBytes`).
    public static func noticeFiles(_ count: Int, by signer: CollaborationSigner, in collaboration: String, oversizedAt index: Int) throws -> [String: Data] {
        try noticeFiles(count, by: signer, in: collaboration, odd: (index, { notice in
            let file = try Envelope.seal(notice, by: signer).fileData()
            return (notice.path, file + Data(repeating: 0x20, count: Notice.maxEnvelopeBytes + 1 - file.count))
        }))
    }

    /// `noticeFiles` with, at `index`, a well-formed notice of `signer`'s carrying `signer`'s real
    /// signature made over another notice (the envelope's signature moved from one file to another).
    public static func noticeFiles(_ count: Int, by signer: CollaborationSigner, in collaboration: String, transplantedAt index: Int) throws -> [String: Data] {
        let donor = Notice(type: .contentEdited, collaboration: collaboration, actor: signer.root, data: ["path": "donor.md"], signer: signer.signer)
        let donorFile = try JSONSerialization.jsonObject(with: Envelope.seal(donor, by: signer).fileData()) as? [String: Any]
        return try noticeFiles(count, by: signer, in: collaboration, odd: (index, { notice in
            var victim = try JSONSerialization.jsonObject(with: Envelope.seal(notice, by: signer).fileData()) as? [String: Any] ?? [:]
            victim["signatures"] = donorFile?["signatures"]
            return (notice.path, try JSONSerialization.data(withJSONObject: victim, options: [.prettyPrinted, .sortedKeys]))
        }))
    }

    /// The files of `count` content.edited notices signed by `signer` (a sync of that many edits, made
    /// outside `cohort commit`), keyed by path; at `odd.index`, `odd.file` gives the path and bytes
    /// written instead of that notice's.
    public static func noticeFiles(_ count: Int, by signer: CollaborationSigner, in collaboration: String,
                                   odd: (index: Int, file: (Notice) throws -> (path: String, data: Data))? = nil) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for index in 0..<count {
            let notice = Notice(type: .contentEdited, collaboration: collaboration, actor: signer.root,
                                data: ["path": "file-\(index).md"], signer: signer.signer)
            let (path, data) = try odd?.index == index ? odd!.file(notice) : (notice.path, Envelope.seal(notice, by: signer).fileData())
            files[path] = data
        }
        return files
    }

    /// One folder of `count` notice-shaped paths (`.cohort/notices/00/00…json`), every one holding the
    /// same real notice signed by `signer`: more changes in one tree than verification lists.
    public static func oneFolderOfNotices(_ count: Int, by signer: CollaborationSigner, in collaboration: String) throws -> [String: Data] {
        let notice = Notice(type: .contentEdited, collaboration: collaboration, actor: signer.root,
                            data: ["path": "file.md"], signer: signer.signer)
        let file = try Envelope.seal(notice, by: signer).fileData()
        var files: [String: Data] = [:]
        for index in 0..<count { files[String(format: "\(CohortLayout.notices)/00/00%030x.json", index)] = file }
        return files
    }

    /// Commits `range` of a push long enough for verification's pipeline, forged in `workspace` with
    /// `signer`'s real key outside `cohort commit`: each adds one file, except the 50th, which adds 600
    /// notices (more than a worker opens ahead), the 590th signed by `foreign`. Returns that commit.
    public static func longPush(_ range: Range<Int>, in workspace: Workspace, by signer: CollaborationSigner, in collaboration: String,
                                foreign: CollaborationSigner) throws -> ObjectID {
        var bad: ObjectID?
        for index in range {
            if index == 50 {
                bad = try forge(workspace, signer: signer, files: noticeFiles(600, by: signer, in: collaboration, foreign: foreign, at: 590))
            } else {
                try forge(workspace, signer: signer, files: ["long-\(index).md": Data("\(index)\n".utf8)])
            }
        }
        return try #require(bad)
    }

    /// `noticeFiles` with, at `index`, a well-formed content.edited notice signed by `foreign` (another
    /// participant's real key) instead of `signer`'s.
    public static func noticeFiles(_ count: Int, by signer: CollaborationSigner, in collaboration: String,
                                   foreign: CollaborationSigner, at index: Int) throws -> [String: Data] {
        try noticeFiles(count, by: signer, in: collaboration, odd: (index, { _ in
            let notice = Notice(type: .contentEdited, collaboration: collaboration, actor: foreign.root, data: ["path": "x.md"], signer: foreign.signer)
            return (notice.path, try Envelope.seal(notice, by: foreign).fileData())
        }))
    }
}
