import CohortCollaboration
import CohortBase
import CohortGit
@testable import CohortHooks
import CohortIdentity
import CohortServer
import CohortServerAPI
import CohortVerification
import Crypto
import Foundation

/// Genuine inputs for every target, made with a throwaway identity, so fuzzing starts from what the
/// parsers really see.
enum Seeds {
    static func write(into directory: URL) throws {
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-seeds-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: temp) }
        let home = IdentityHome(directory: temp)
        _ = try home.initialise(handle: "ann@example.com", name: "Ann", deviceName: "laptop")
        let card = try home.requireCard()
        let identifier = "3d65a2b4-6a0c-4f0e-9d55-3b7a2f1c9e10"
        let context = try CollaborationContext(identifier: identifier, salt: Data(repeating: 1, count: 16))
        let signer = try CollaborationSigner(home: home, context: context)
        var seeds: [FuzzTarget: [Data]] = [:]

        let notice = Notice(type: .contentCommented, collaboration: identifier, actor: signer.root,
                            data: ["path": "bread.md", "text": "more salt"], signer: signer.signer)
        let participant = Participant(root: signer.root, handle: card.handle, name: card.name, permission: .readWrite, mentions: true,
                                      comments: true, addedBy: signer.root.hex, addedAt: Date(timeIntervalSince1970: 0))
        let members = Membership(collaboration: identifier, version: 1, previous: nil, participants: [participant], removed: [], signer: signer.signer)
        let file = CollaborationFile(identifier: identifier, localIdentifier: identifier, title: "Baking Recipes",
                                     initiator: .init(handle: card.handle, name: card.name), salt: context.salt, owner: signer.root,
                                     shareOptions: .defaults(), createdAt: Date(timeIntervalSince1970: 0), signer: signer.signer)
        let sealedNotice = try Envelope.seal(notice, by: signer)
        seeds[.envelope] = [sealedNotice.fileData(), try Envelope.seal(members, by: signer).fileData(),
                            try Envelope.seal(file, by: signer).fileData()]
        seeds[.json] = [Data(base64Encoded: sealedNotice.payload) ?? Data(), sealedNotice.fileData()]

        let message = CommitTrailer.append(to: "Add bread", scheme: signer.root.scheme, proof: signer.proof)
        let unsigned = Data(("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
            + "author Ann <ann@example.com> 1700000000 +0000\ncommitter Ann <ann@example.com> 1700000000 +0000\n\n" + message).utf8)
        let armored = try SSHSignature.sign(unsigned, with: signer.key)
        seeds[.sshsig] = [Data(armored.utf8)]
        let text = String(decoding: unsigned, as: UTF8.self)
        let headerEnd = text.range(of: "\n\n")?.lowerBound ?? text.endIndex
        let signed = String(text[..<headerEnd]) + "\ngpgsig " + armored.replacingOccurrences(of: "\n", with: "\n ") + String(text[headerEnd...])
        seeds[.commit] = [Data(signed.utf8), unsigned]
        seeds[.trailer] = [Data(message.utf8)]

        seeds[.card] = [card.jsonData()]
        seeds[.enrollment] = [try EnrollmentRequest(handle: "ann@example.com", deviceName: "phone", key: DeviceKey()).jsonData()]
        let authority = try ChallengeAuthority(server: "http://127.0.0.1:8377", key: FuzzTarget.challengeKey, spent: MemorySpentChallenges())
        let challenge = try authority.issue(collaboration: "c", operation: .pull)
        let proof = try SignedIdentityProof(signing: challenge.bytes, with: signer.key, scheme: signer.root.scheme, proof: signer.proof)
        seeds[.proof] = [proof.jsonData()]
        seeds[.challenge] = [challenge.bytes]
        let tokens = try TokenAuthority(server: "http://127.0.0.1:8377", key: FuzzTarget.tokenKey, lifetime: 600)
        seeds[.token] = [Data(tokens.issue(collaboration: identifier, root: signer.root, access: .readWrite).token.utf8)]
        seeds[.serverJSON] = [
            ServerAPI.encode(ServerAPI.ChallengeRequest(operation: .push)),
            ServerAPI.encode(ServerAPI.TokenRequest(operation: .pull, proof: proof)),
            ServerAPI.encode(ServerAPI.PublishRequest(collaboration: try Envelope.seal(file, by: signer).fileData(), genesis: String(repeating: "0", count: 40), proof: proof)),
        ]
        seeds[.p256] = try FuzzTarget.signingKeys.enumerated().map { index, key in
            Data([UInt8(index)]) + (try key.signature(for: Data("notice \(index)".utf8)).rawRepresentation) + Data("notice \(index)".utf8)
        }
        // No damage; one byte of the pack's first entry; one of its 40th byte; one deep in the pack.
        seeds[.pack] = [Data(), Data([12, 0, 0, 0, 0x10]), Data([40, 0, 0, 0, 1]), Data([0x00, 0x08, 0, 0, 0x5a])]
        seeds[.gzip] = [try gzip(Data("0014command=ls-refs\n0000".utf8))]
        let update = Data("\(String(repeating: "1", count: 40)) \(String(repeating: "2", count: 40)) refs/heads/main\n".utf8)
        seeds[.hookRequest] = [HookWire.encode([HookWire.requestMagic, CohortVersion.text, "/srv/git/bread.git", ".",
                                                "/srv/git/bread.git/./objects/tmp_objdir-incoming-X1", "/srv/git/bread.git/./objects",
                                                "/home/git", ""].map { Data($0.utf8) } + [update])]
        seeds[.path] = [".git", "README.md", ".GIT.", "git~1", ".g\u{200C}it", ".gitmodules", "docs", "a\\b", ".cohort"].map { Data($0.utf8) }

        for (target, inputs) in seeds {
            let folder = directory.appendingPathComponent(target.rawValue)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (index, input) in inputs.enumerated() {
                try input.write(to: folder.appendingPathComponent("seed-\(index)"))
            }
        }
        print("wrote seeds for \(seeds.count) targets into \(directory.path)")
    }

    /// `data` compressed by the system's gzip, as a client would send a request body.
    static func gzip(_ data: Data) throws -> Data {
        try Process.output(of: "/usr/bin/env", ["gzip", "-c"], input: data)
    }
}
