// Measures Cohort's identity core against raw ECDSA P-256 verification with the same library
// (swift-crypto), in one process, rounds interleaved so that both sides see the same machine.
//
// Built as the scripts build it: bin=$(bash Scripts/build-release.sh cohort-bench), then
//   $bin/cohort-bench identity [--seconds S] [--roots N] [--rounds R]
//   $bin/cohort-bench history DIR COMMITS     (input for Scripts/bench-verify.sh)
//   $bin/cohort-bench floor [SECONDS]         (raw ECDSA verifications/s on every core)
//   $bin/cohort-bench hook-warm GIT_DIR UPDATES VERIFIED ROUNDS   (one push verified again and again in one process)
//   $bin/cohort-bench table [SECONDS]         (the same through keys' tables of multiples)
//   $bin/cohort-bench exchanges LINK SECONDS CONCURRENCY [--addresses]   (Scripts/bench-instances.sh)
import CohortIdentity
import Crypto
import Foundation

struct Settings {
    var seconds = 1.0
    var roots = 100_000
    var rounds = 5

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { break }
            switch flag {
            case "--seconds": seconds = Double(value) ?? seconds
            case "--roots": roots = Int(value) ?? roots
            case "--rounds": rounds = Int(value) ?? rounds
            default: break
            }
        }
    }
}

/// `duration` in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Runs `body` repeatedly for about `seconds`; returns operations per second.
func rate(seconds: Double, batch: Int, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    var operations = 0
    while true {
        for _ in 0..<batch { try body() }
        operations += batch
        let secs = cohort_bench.seconds(start.duration(to: clock.now))
        if secs >= seconds { return Double(operations) / secs }
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var bytes = [UInt8]()
    while bytes.count < count {
        withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
    }
    return Data(bytes.prefix(count))
}

func identityBenchmark(_ settings: Settings) throws {
    let context = try CollaborationContext(identifier: "6f1c2a9e-3b7d-4c55-9a0e-2d8f4b1e7c30", salt: randomBytes(16))

    // 64 people with 1 to 3 devices each; every device signs a 128-byte challenge-sized message.
    var roots = KnownRoots()
    var proofs: [SignedIdentityProof] = []
    var raw: [(P256.Signing.PublicKey, P256.Signing.ECDSASignature, Data)] = []
    var threeDeviceKeys: [P256Key] = []
    for person in 0..<64 {
        let keys = (0...(person % 3)).map { _ in DeviceKey() }
        let tree = try IdentityTree(masterKeys: keys.map(\.publicKey), context: context)
        roots.insert(tree.root)
        if keys.count == 3 { threeDeviceKeys = keys.map(\.publicKey) }
        for key in keys {
            let message = randomBytes(128)
            let proof = try SignedIdentityProof(signing: message, with: key.diversified(for: context), in: tree)
            proofs.append(proof)
            raw.append((
                try P256.Signing.PublicKey(x963Representation: proof.proof.publicKey),
                try P256.Signing.ECDSASignature(derRepresentation: proof.signature),
                // What the signature covers: the identity-proof domain tag, then the message.
                SignedIdentityProof.signedBytes(of: message, scheme: .cohortV1)
            ))
        }
    }
    // Proofs by devices seen once each, as a server meets most of them (the 127 above sign over and
    // over, so their keys soon check through tables of multiples: `P256KeyTable`).
    let firstSignatures = 1_500
    var fresh: [SignedIdentityProof] = []
    var freshRaw: [(P256.Signing.PublicKey, P256.Signing.ECDSASignature, Data)] = []
    for _ in 0..<(firstSignatures * settings.rounds) {
        let key = DeviceKey()
        let tree = try IdentityTree(masterKeys: [key.publicKey], context: context)
        roots.insert(tree.root)
        let proof = try SignedIdentityProof(signing: randomBytes(128), with: key.diversified(for: context), in: tree)
        fresh.append(proof)
        freshRaw.append((try P256.Signing.PublicKey(x963Representation: proof.proof.publicKey),
                         try P256.Signing.ECDSASignature(derRepresentation: proof.signature),
                         SignedIdentityProof.signedBytes(of: proof.message, scheme: .cohortV1)))
    }
    for _ in 0..<settings.roots {
        roots.insert(try RootHash(scheme: .cohortV1, bytes: randomBytes(32)))
    }
    print("identity benchmark: \(proofs.count) signed proofs signed over and over, \(fresh.count) by keys seen once, \(roots.count) known roots, \(settings.rounds) rounds of \(settings.seconds) s each")

    var rawRates: [Double] = []
    var rawParsedRates: [Double] = []
    var proofRates: [Double] = []
    var firstProofRates: [Double] = []
    var firstRawRates: [Double] = []
    var rootRates: [Double] = []
    var oneDeviceRootRates: [Double] = []
    var index = 0
    for round in 1...settings.rounds {
        rawRates.append(rate(seconds: settings.seconds, batch: 64) {
            let (key, signature, message) = raw[index % raw.count]
            index += 1
            precondition(key.isValidSignature(signature, for: message))
        })
        rawParsedRates.append(try rate(seconds: settings.seconds, batch: 64) {
            let proof = proofs[index % proofs.count]
            index += 1
            let key = try P256.Signing.PublicKey(x963Representation: proof.proof.publicKey)
            let signature = try P256.Signing.ECDSASignature(derRepresentation: proof.signature)
            precondition(key.isValidSignature(signature, for: SignedIdentityProof.signedBytes(of: proof.message, scheme: proof.scheme)))
        })
        proofRates.append(try rate(seconds: settings.seconds, batch: 64) {
            let proof = proofs[index % proofs.count]
            index += 1
            _ = try proof.verify(against: roots)
        })
        // Each of this round's first-seen signatures checked raw, then (other ones, as fresh) as proofs.
        let clock = ContinuousClock()
        let half = firstSignatures / 2
        let slice = ((round - 1) * firstSignatures)..<(round * firstSignatures)
        var started = clock.now
        for (key, signature, message) in freshRaw[slice.lowerBound..<(slice.lowerBound + half)] {
            precondition(key.isValidSignature(signature, for: message))
        }
        firstRawRates.append(Double(half) / seconds(started.duration(to: clock.now)))
        started = clock.now
        for proof in fresh[(slice.lowerBound + half)..<slice.upperBound] { _ = try proof.verify(against: roots) }
        firstProofRates.append(Double(slice.count - half) / seconds(started.duration(to: clock.now)))
        rootRates.append(try rate(seconds: settings.seconds, batch: 8) {
            _ = try IdentityTree(masterKeys: threeDeviceKeys, context: context).root
        })
        oneDeviceRootRates.append(try rate(seconds: settings.seconds, batch: 8) {
            _ = try IdentityTree(masterKeys: [threeDeviceKeys[0]], context: context).root
        })
        print(String(format: "round %d: raw %.0f/s, raw+parse %.0f/s, proof %.0f/s, raw seen once %.0f/s, proof by a key seen once %.0f/s, root(3 devices) %.0f/s, root(1 device) %.0f/s",
                     round, rawRates.last!, rawParsedRates.last!, proofRates.last!, firstRawRates.last!, firstProofRates.last!, rootRates.last!,
                     oneDeviceRootRates.last!))
    }

    let rawMedian = median(rawRates)
    let proofMedian = median(proofRates)
    print("")
    print("| measurement (median of \(settings.rounds) rounds) | per second | vs raw verify |")
    print("|---|---:|---:|")
    print(String(format: "| raw ECDSA P-256 verify (swift-crypto, key and signature pre-parsed) | %.0f | 1.00× |", rawMedian))
    print(String(format: "| raw ECDSA P-256 verify, parsing key and DER signature each time | %.0f | %.2f× |", median(rawParsedRates), median(rawParsedRates) / rawMedian))
    let firstMedian = median(firstProofRates)
    let firstRawMedian = median(firstRawRates)
    print(String(format: "| raw ECDSA P-256 verify, each signature seen once (pre-parsed) | %.0f | %.2f× |", firstRawMedian, firstRawMedian / rawMedian))
    print(String(format: "| signed identity proof verify (key, signature, fold, lookup among %d roots), a key seen once | %.0f | %.2f× (%.2f× of the row above) |",
                 roots.count, firstMedian, firstMedian / rawMedian, firstMedian / firstRawMedian))
    print(String(format: "| the same, keys that sign over and over (checked through their tables of multiples) | %.0f | %.2f× |",
                 proofMedian, proofMedian / rawMedian))
    print(String(format: "| cohort-v1 root computation, 3-device card | %.0f | — |", median(rootRates)))
    print(String(format: "| cohort-v1 root computation, 1-device card | %.0f | — |", median(oneDeviceRootRates)))
    print(String(format: "\nproof verification by a key seen once / raw verify of signatures seen once = %.2f (goal ≥ 0.90)", firstMedian / firstRawMedian))

    // Where a proof verification's time goes, stage by stage, on one proof.
    let sample = proofs[0]
    let key = try P256Key(x963: sample.proof.publicKey)
    let signed = SignedIdentityProof.signedBytes(of: sample.message, scheme: sample.scheme)
    let root = try sample.proof.root(under: .cohortV1)
    let stages: [(String, Double)] = [
        ("parse and check the public key", try rate(seconds: settings.seconds, batch: 256) { _ = try P256Key(x963: sample.proof.publicKey) }),
        ("parse DER and verify the signature", try rate(seconds: settings.seconds, batch: 64) { try key.verifySignature(sample.signature, for: signed) }),
        ("fold the proof (5 SHA-256)", try rate(seconds: settings.seconds, batch: 256) { _ = try sample.proof.root(under: .cohortV1) }),
        ("look the root up among \(roots.count)", rate(seconds: settings.seconds, batch: 1024) { _ = roots.status(of: root) }),
    ]
    // The same stages for proofs seen once, each memo missing: the first round's first half was only
    // verified raw (swift-crypto, no memo), so its keys and proofs are new to the memos; the bare
    // fold (no memo) on the second half.
    let clock = ContinuousClock()
    func perOne(_ proofs: ArraySlice<SignedIdentityProof>, _ body: (SignedIdentityProof) throws -> Void) rethrows -> Double {
        let started = clock.now
        for proof in proofs { try body(proof) }
        return seconds(started.duration(to: clock.now)) * 1e6 / Double(proofs.count)
    }
    let unseen = fresh[0..<(firstSignatures / 2)]
    print("\n| stage, for a proof by a key seen once (microseconds, \(unseen.count) proofs) | parse and check the key | fold the proof |")
    print("|---|---:|---:|")
    let parseOnce = try perOne(unseen) { _ = try P256Key(x963: $0.proof.publicKey) }
    let verifiedAsProofs = fresh[(firstSignatures / 2)..<firstSignatures]
    let foldBare = try perOne(verifiedAsProofs) { proof in
        _ = try MerkleInclusion.root(leafHash: RootScheme.cohortV1.leaf(proof.proof.publicKey), index: UInt64(proof.proof.publicKeyIndex),
                                     treeSize: 16, path: proof.proof.inclusionHashes, scheme: .cohortV1)
    }
    let foldOnce = try perOne(unseen) { _ = try $0.proof.root(under: .cohortV1) }
    print(String(format: "| first use | %.2f | %.2f (%.2f without the memo) |", parseOnce, foldOnce, foldBare))
    print("\n| stage of one verification | microseconds |")
    print("|---|---:|")
    for (name, perSecond) in stages {
        print(String(format: "| %@ | %.2f |", name, 1e6 / perSecond))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "identity":
    try identityBenchmark(Settings(Array(arguments.dropFirst())))
case "sinks" where arguments.count >= 5:
    try await sinkBenchmark(directory: URL(fileURLWithPath: arguments[1]), count: Int(arguments[2]) ?? 2000,
                            webhook: arguments[3], secret: arguments[4])
case "history" where arguments.count >= 3:
    // cohort-bench history DIR COMMITS: a collaboration in DIR with COMMITS signed commits
    // (identity in $COHORT_HOME, created if missing).
    try generateHistory(at: URL(fileURLWithPath: arguments[1]), home: .fromEnvironment(), commits: Int(arguments[2]) ?? 10_000)
case "exchanges" where arguments.count >= 4:
    // cohort-bench exchanges LINK SECONDS CONCURRENCY [--addresses]: challenge + token exchanges per
    // second against a server, CONCURRENCY at once (identity in $COHORT_HOME, a participant of LINK);
    // with --addresses each from a client address of its own, through X-Forwarded-For.
    try await exchangeBenchmark(link: arguments[1], seconds: Double(arguments[2]) ?? 10, concurrency: Int(arguments[3]) ?? 8,
                                addresses: arguments.dropFirst(4).contains("--addresses"))
case "notice" where arguments.count >= 2:
    // cohort-bench notice FILE [SECONDS]: the stages of opening one notice envelope.
    try noticeBenchmark(file: URL(fileURLWithPath: arguments[1]), seconds: arguments.count > 2 ? Double(arguments[2]) ?? 1 : 1)
case "objects" where arguments.count >= 4:
    // cohort-bench objects REPOSITORY IDS THREADS [own]: the objects named in IDS read through libgit2 (or, with `own`, Cohort's pack reader) on THREADS threads.
    try objectsBenchmark(repository: arguments[1], ids: arguments[2], threads: max(1, Int(arguments[3]) ?? 1),
                         ownPacks: arguments.dropFirst(4).first == "own")
case "hook-warm" where arguments.count >= 5:
    try warmHookBenchmark(gitDir: arguments[1], updatesFile: arguments[2], verifiedFile: arguments[3], rounds: Int(arguments[4]) ?? 0)
case "floor":
    // cohort-bench floor [SECONDS]: one number, raw verifications per second on every core.
    let seconds = arguments.count > 1 ? Double(arguments[1]) ?? 1 : 1
    print(String(format: "%.0f", ecdsaFloor(seconds: seconds, threads: ProcessInfo.processInfo.activeProcessorCount)))
case "table":
    // cohort-bench table [SECONDS]: one number, verifications per second on every core through keys' tables.
    let seconds = arguments.count > 1 ? Double(arguments[1]) ?? 1 : 1
    print(String(format: "%.0f", try tableRate(seconds: seconds, threads: ProcessInfo.processInfo.activeProcessorCount)))
default:
    FileHandle.standardError.write(Data("usage: cohort-bench identity [--seconds S] [--roots N] [--rounds R]\n       cohort-bench floor [SECONDS]\n       cohort-bench table [SECONDS]\n       cohort-bench hook-warm GIT_DIR UPDATES VERIFIED ROUNDS\n       cohort-bench notice FILE [SECONDS]\n       cohort-bench objects REPOSITORY IDS THREADS [own]\n       cohort-bench history DIR COMMITS\n       cohort-bench sinks DIR COUNT WEBHOOK_URL SECRET\n       cohort-bench exchanges LINK SECONDS CONCURRENCY [--addresses]\n".utf8))
    exit(64)
}
