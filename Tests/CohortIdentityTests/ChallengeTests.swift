import Crypto
import CohortTestSupport
import Foundation
import Synchronization
import Testing
@testable import CohortIdentity

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let time = Mutex<Date>(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

@Suite struct ChallengeTests {
    let key = SymmetricKey(size: .bits256)
    let clock = TestClock()
    let device: DeviceKey
    let tree: IdentityTree
    let roots: KnownRoots

    init() throws {
        let master = DeviceKey()
        tree = try IdentityTree(masterKeys: [master.publicKey], context: testContext)
        device = try master.diversified(for: testContext)
        roots = KnownRoots(active: [tree.root])
    }

    func authority(server: String = "https://cohort.example", key: SymmetricKey? = nil, spent: any SpentChallengeStore = MemorySpentChallenges()) throws -> ChallengeAuthority {
        let clock = clock
        return try ChallengeAuthority(server: server, key: key ?? self.key, spent: spent, lifetime: 120, now: { clock.now })
    }

    func answer(_ message: Data) throws -> SignedIdentityProof {
        try SignedIdentityProof(signing: message, with: device, in: tree)
    }

    @Test func issuedChallengeIsAcceptedOnce() async throws {
        let authority = try authority()
        let challenge = try authority.issue(collaboration: testContext.identifier, operation: .pull)
        #expect(try Challenge(bytes: challenge.bytes) == challenge)
        let proof = try answer(challenge.bytes)
        #expect(try await authority.verify(proof, collaboration: testContext.identifier, operation: .pull, against: roots) == tree.root)
        await expectCode(.challengeReplayed) { try await authority.verify(proof, collaboration: testContext.identifier, operation: .pull, against: roots) }
        // A new challenge gets in again.
        let next = try authority.issue(collaboration: testContext.identifier, operation: .pull)
        #expect(next.nonce != challenge.nonce)
        #expect(try await authority.verify(answer(next.bytes), collaboration: testContext.identifier, operation: .pull, against: roots) == tree.root)
    }

    @Test func forgedChallenges() async throws {
        let authority = try authority()
        let challenge = try authority.issue(collaboration: testContext.identifier, operation: .push)
        func check(_ bytes: Data) async {
            await expectCode(.challengeForged) { try await authority.verify(answer(bytes), collaboration: testContext.identifier, operation: .push, against: roots) }
        }
        // Any changed byte: the tag no longer matches (or the layout breaks).
        for offset in [0, 19, 51, 59, 61, challenge.bytes.count - 1] {
            var bytes = challenge.bytes
            bytes[offset] ^= 0x01
            await check(bytes)
        }
        await check(challenge.bytes.dropLast())
        await check(challenge.bytes + Data([0]))
        await check(Data("not a challenge at all".utf8))
        // Issued by another server's key, or by this key under another server name.
        await check(try self.authority(key: SymmetricKey(size: .bits256)).issue(collaboration: testContext.identifier, operation: .push).bytes)
        await check(try self.authority(server: "https://elsewhere.example").issue(collaboration: testContext.identifier, operation: .push).bytes)
    }

    @Test func expiredChallenge() async throws {
        let authority = try authority()
        let challenge = try authority.issue(collaboration: testContext.identifier, operation: .pull)
        clock.advance(120)
        let early = try answer(challenge.bytes)
        clock.advance(1)
        await expectCode(.challengeExpired) { try await authority.verify(early, collaboration: testContext.identifier, operation: .pull, against: roots) }
    }

    @Test func challengeOutOfScope() async throws {
        let authority = try authority()
        let pull = try authority.issue(collaboration: testContext.identifier, operation: .pull)
        await expectCode(.challengeScope) { try await authority.verify(answer(pull.bytes), collaboration: testContext.identifier, operation: .push, against: roots) }
        let other = try authority.issue(collaboration: "another-collaboration", operation: .pull)
        await expectCode(.challengeScope) { try await authority.verify(answer(other.bytes), collaboration: testContext.identifier, operation: .pull, against: roots) }
        // A refused attempt does not spend the challenge.
        #expect(try await authority.verify(answer(pull.bytes), collaboration: testContext.identifier, operation: .pull, against: roots) == tree.root)
    }

    @Test func challengeIsCheckedBeforeTheSignatureAndSpentAfterIt() async throws {
        let authority = try authority()
        let challenge = try authority.issue(collaboration: testContext.identifier, operation: .pull)
        let good = try answer(challenge.bytes)
        let badSignature = SignedIdentityProof(scheme: .cohortV1, proof: good.proof, signature: Data(count: 8), message: good.message)
        await expectCode(.badSignature) { try await authority.verify(badSignature, collaboration: testContext.identifier, operation: .pull, against: roots) }
        await expectCode(.unknownRoot) { try await authority.verify(good, collaboration: testContext.identifier, operation: .pull, against: KnownRoots()) }
        // Neither failure spent it.
        #expect(try await authority.verify(good, collaboration: testContext.identifier, operation: .pull, against: roots) == tree.root)
        clock.advance(500)
        await expectCode(.challengeExpired) { try await authority.verify(badSignature, collaboration: testContext.identifier, operation: .pull, against: roots) }
    }

    @Test func concurrentAnswersSpendOnce() async throws {
        let authority = try authority()
        let challenge = try authority.issue(collaboration: testContext.identifier, operation: .pull)
        let proof = try answer(challenge.bytes)
        let roots = roots
        let successes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    (try? await authority.verify(proof, collaboration: testContext.identifier, operation: .pull, against: roots)) != nil
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(successes == 1)
    }

    @Test func spentChallengesSurviveARestart() async throws {
        let temp = try TemporaryDirectory()
        let log = temp.path("spent-challenges")
        let now = UInt64(clock.now.timeIntervalSince1970)
        let before = try authority(spent: FileSpentChallenges(url: log, now: now))
        let spentOne = try before.issue(collaboration: testContext.identifier, operation: .pull)
        let unspent = try before.issue(collaboration: testContext.identifier, operation: .pull)
        let proof = try answer(spentOne.bytes)
        _ = try await before.verify(proof, collaboration: testContext.identifier, operation: .pull, against: roots)

        // "Restart": a new authority over the same key and log.
        let after = try authority(spent: FileSpentChallenges(url: log, now: now))
        await expectCode(.challengeReplayed) { try await after.verify(proof, collaboration: testContext.identifier, operation: .pull, against: roots) }
        #expect(try await after.verify(answer(unspent.bytes), collaboration: testContext.identifier, operation: .pull, against: roots) == tree.root)

        // A torn last line from a crash is cut off, and the spend after it survives the next restart.
        let handle = try FileHandle(forWritingTo: log)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("abcdef".utf8))
        try handle.close()
        let again = try authority(spent: FileSpentChallenges(url: log, now: now))
        await expectCode(.challengeReplayed) { try await again.verify(proof, collaboration: testContext.identifier, operation: .pull, against: roots) }
        let afterCrash = try again.issue(collaboration: testContext.identifier, operation: .pull)
        let afterCrashProof = try answer(afterCrash.bytes)
        _ = try await again.verify(afterCrashProof, collaboration: testContext.identifier, operation: .pull, against: roots)
        let last = try authority(spent: FileSpentChallenges(url: log, now: now))
        await expectCode(.challengeReplayed) { try await last.verify(afterCrashProof, collaboration: testContext.identifier, operation: .pull, against: roots) }
        #expect(try String(decoding: Data(contentsOf: log), as: UTF8.self).split(separator: "\n").allSatisfy { $0.count == 64 + 1 + 10 })
        #expect(try FileManager.default.attributesOfItem(atPath: log.path)[.posixPermissions] as? Int == 0o600)
    }

    @Test func logForgetsExpiredNoncesAndStaysSmall() async throws {
        let temp = try TemporaryDirectory()
        let log = temp.path("spent")
        let store = try FileSpentChallenges(url: log, now: 1000)
        for i in 0..<5000 {
            let nonce = Data((0..<32).map { UInt8(truncatingIfNeeded: i >> ($0 % 4 * 8)) ^ UInt8($0) })
            // Each nonce lives 10 seconds; time moves one second per spend.
            #expect(try store.spend(nonce, expiresAt: UInt64(1000 + i + 10), now: UInt64(1000 + i)))
        }
        let lines = try String(decoding: Data(contentsOf: log), as: UTF8.self).split(separator: "\n").count
        #expect(lines < 2100, "log kept \(lines) lines for at most 11 live nonces")
        // What is still live survives a reload.
        let reloaded = try FileSpentChallenges(url: log, now: 5990)
        let liveNonce = Data((0..<32).map { UInt8(truncatingIfNeeded: 4999 >> ($0 % 4 * 8)) ^ UInt8($0) })
        #expect(reloaded.contains(liveNonce))
    }

    @Test func authorityRefusesUnsafeSettings() {
        expectCode(.malformed) { try ChallengeAuthority(server: "s", key: SymmetricKey(size: .bits128), spent: MemorySpentChallenges()) }
        expectCode(.malformed) { try ChallengeAuthority(server: "s", key: key, spent: MemorySpentChallenges(), lifetime: 301) }
        expectCode(.malformed) { try ChallengeAuthority(server: "", key: key, spent: MemorySpentChallenges()) }
    }
}

@Suite struct ChallengeKeyFileTests {
    @Test func keyIsCreatedOnceAndReused() async throws {
        let temp = try TemporaryDirectory()
        let url = temp.path("challenge.key")
        let first = try ChallengeKeyFile.loadOrCreate(at: url)
        let second = try ChallengeKeyFile.loadOrCreate(at: url)
        #expect(first == second)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int == 0o600)

        // A challenge issued before a "restart" verifies after it with the reloaded key.
        let master = DeviceKey()
        let tree = try IdentityTree(masterKeys: [master.publicKey], context: testContext)
        let log = temp.path("spent")
        let before = try ChallengeAuthority(server: "s", key: first, spent: FileSpentChallenges(url: log))
        let challenge = try before.issue(collaboration: testContext.identifier, operation: .push)
        let after = try ChallengeAuthority(server: "s", key: second, spent: FileSpentChallenges(url: log))
        let proof = try SignedIdentityProof(signing: challenge.bytes, with: master.diversified(for: testContext), in: tree)
        let roots = KnownRoots(active: [tree.root])
        #expect(try await after.verify(proof, collaboration: testContext.identifier, operation: .push, against: roots) == tree.root)

        // With spent nonces only in memory, a challenge cannot outlive its authority, even with the same key.
        let volatile = try ChallengeAuthority(server: "s", key: first, spent: MemorySpentChallenges())
        let bound = try volatile.issue(collaboration: testContext.identifier, operation: .push)
        let boundProof = try SignedIdentityProof(signing: bound.bytes, with: master.diversified(for: testContext), in: tree)
        let restarted = try ChallengeAuthority(server: "s", key: first, spent: MemorySpentChallenges())
        await expectCode(.challengeForged) { try await restarted.verify(boundProof, collaboration: testContext.identifier, operation: .push, against: roots) }
        #expect(try await volatile.verify(boundProof, collaboration: testContext.identifier, operation: .push, against: roots) == tree.root)
    }

    @Test func damagedKeyIsRefused() async throws {
        let temp = try TemporaryDirectory()
        let url = temp.path("challenge.key")
        try Data("abcd\n".utf8).write(to: url)
        expectCode(.malformed) { try ChallengeKeyFile.loadOrCreate(at: url) }
        #expect(try String(decoding: Data(contentsOf: url), as: UTF8.self) == "abcd\n", "a damaged key is never replaced silently")
    }
}
