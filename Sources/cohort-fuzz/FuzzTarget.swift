import CohortBase
@testable import CohortCollaboration
import CohortGit
@testable import CohortHooks
@testable import CohortIdentity
@testable import CohortServer
import CohortServerAPI
import CohortVerification
import Crypto
import Foundation

/// One parser of bytes from outside, driven with arbitrary input: it may refuse (throw), never crash,
/// hang or read out of bounds.
enum FuzzTarget: String, CaseIterable {
    case envelope, sshsig, commit, trailer, card, enrollment, proof, challenge, token
    case serverJSON = "server-json"
    case gzip, path
    /// The JSON reader of envelopes and signed files, and a notice's, a membership's and a collaboration file's fields read from it.
    case json
    /// A key's table of multiples (`CP256`) against swift-crypto: key number, r ‖ s, then the message.
    case p256
    /// Cohort's pack reader and its indexer of a clone's pack against libgit2's, on a genuine pack damaged as
    /// the input says (`PackFuzz`).
    case pack
    /// A request to the resident verifier (`HookWire`), its folders (`HookObjects`) and git's ref updates in it.
    case hookRequest = "hook-request"

    static let tokenKey = SymmetricKey(data: Data(repeating: 7, count: 32))
    static let challengeKey = SymmetricKey(data: Data(repeating: 9, count: 32))
    /// Four fixed signing keys, and their tables (`p256`): small for the first and third, large for the others.
    static let signingKeys = (1...4).map { try! P256.Signing.PrivateKey(rawRepresentation: Data(repeating: UInt8($0), count: 32)) }
    static let tables = signingKeys.enumerated().map { index, key in
        let publicKey = P256Key(key.publicKey)
        let size: P256KeyTable.Size = index.isMultiple(of: 2) ? .small : .large
        return (publicKey, P256KeyTable.make(x963: publicKey.x963, size: size, budget: .init(limit: 1))!)
    }

    func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        switch self {
        case .envelope:
            _ = try? Envelope.open(data, as: Notice.self, path: "notice")
            _ = try? Envelope.open(data, as: Membership.self, path: "members")
            if let opened = try? Envelope.open(data, as: CollaborationFile.self, path: "collaboration") {
                _ = try? opened.value.validate()
            }
        case .json:
            if let value = try? JSONValue.parse(data), case .object(let fields) = value {
                _ = try? Notice(json: fields)
                _ = try? Membership(json: fields)
                _ = try? CollaborationFile(json: fields)
            }
        case .sshsig:
            _ = try? SSHSignature.verify(text, message: Data("message".utf8))
        case .commit:
            _ = try? Commit.parse(data, id: .zero)
            if let split = try? CommitSignature.split(data) {
                _ = try? SSHSignature.verify(split.armored, message: split.signedData)
            }
            if let (scheme, proof) = try? CommitTrailer.parse(text) { _ = try? proof.root(under: scheme) }
        case .trailer:
            if let (scheme, proof) = try? CommitTrailer.parse(text) { _ = try? proof.root(under: scheme) }
        case .card:
            if let card = try? IdentityCard(json: data) { _ = try? card.verify() }
        case .enrollment:
            if let request = try? EnrollmentRequest(json: data) { _ = try? request.verify() }
        case .proof:
            if let proof = try? SignedIdentityProof(json: data) { _ = try? proof.verify(against: KnownRoots(active: [])) }
        case .challenge:
            _ = try? Challenge(bytes: data)
            if let authority = try? ChallengeAuthority(server: "http://127.0.0.1:8377", key: Self.challengeKey, spent: MemorySpentChallenges()) {
                let proof = SignedIdentityProof(scheme: .cohortV1, proof: InclusionProof(publicKey: Data(), publicKeyIndex: 0, inclusionHashes: []),
                                                signature: Data(), message: data)
                if (try? authority.challenge(answeredBy: proof, collaboration: "c", operation: .pull)) != nil {
                    _ = try? proof.verify(against: KnownRoots(active: []))
                }
            }
        case .token:
            if let tokens = try? TokenAuthority(server: "http://127.0.0.1:8377", key: Self.tokenKey, lifetime: 600) {
                _ = try? tokens.verify(text, collaboration: "3d65a2b4-6a0c-4f0e-9d55-3b7a2f1c9e10")
            }
        case .serverJSON:
            _ = try? ServerAPI.decode(ServerAPI.ChallengeRequest.self, from: data, what: "challenge request")
            _ = try? ServerAPI.decode(ServerAPI.TokenRequest.self, from: data, what: "token request")
            if let publish = try? ServerAPI.decode(ServerAPI.PublishRequest.self, from: data, what: "publish request"),
               let file = Data(base64Encoded: publish.collaboration) {
                _ = try? Envelope.open(file, as: CollaborationFile.self, path: "collaboration")
            }
        case .gzip:
            guard let inflater = try? GzipInflater(limit: 1 << 20) else { return }
            data.withUnsafeBytes { bytes in
                guard (try? inflater.feed(bytes)) != nil else { return }
                var rounds = 0
                while rounds < 100_000, (try? inflater.next()) != nil { rounds += 1 }
                _ = try? inflater.finish()
            }
        case .p256:
            guard data.count >= 65, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: data[1..<65]) else { return }
            let (key, table) = Self.tables[Int(data[0]) % Self.tables.count]
            let digest = SHA256.hash(data: data[65...])
            let verdict = table.verdict(signature, digest: digest)
            let reference = key.signingKey.isValidSignature(signature, for: digest)
            precondition(verdict == -1 || (verdict == 1) == reference, "the table says \(verdict), swift-crypto \(reference)")
        case .pack:
            PackFuzz.run(data)
        case .hookRequest:
            var offset = data.startIndex
            let fields = try? HookWire.decodeRequest { count in
                guard data.endIndex - offset >= count else { throw CohortError(.malformed, "short", hint: "") }
                defer { offset += count }
                return data[offset..<offset + count]
            }
            guard let fields else { return }
            let words = fields.dropLast().map { String(decoding: $0, as: UTF8.self) }
            _ = try? HookObjects(workingDirectory: words[2], gitDirectory: words[3], objectDirectory: words[4], alternates: words[5])
            _ = try? PreReceiveHook.updates(from: fields[fields.count - 1])
        case .path:
            for mode: UInt32 in [0o100644, 0o120000, 0o040000] { _ = GitPath.refusal(component: text, mode: mode) }
            _ = CohortLayout.isLookAlike(text)
        }
    }
}
