import CohortIdentity
import Crypto
import Foundation
import Synchronization

/// The physical floor for verification on this machine: raw ECDSA P-256 verifications per second
/// with every core busy (swift-crypto, key and signature parsed once: the strictest baseline), each
/// thread verifying its own signatures over 300-byte messages (about a commit's size).
func ecdsaFloor(seconds: Double, threads: Int) -> Double {
    let samples = (0..<16).map { _ -> (P256.Signing.PublicKey, P256.Signing.ECDSASignature, Data) in
        let key = P256.Signing.PrivateKey()
        let message = randomBytes(300)
        return (key.publicKey, try! key.signature(for: message), message)
    }
    return verificationsPerSecond(seconds: seconds, threads: threads, samples: samples.count) { index in
        let (key, signature, message) = samples[index]
        return key.isValidSignature(signature, for: message)
    }
}

/// The same signatures through `P256Key.verifySignature`, as commits and notices are checked, once
/// each key has verified enough signatures to have its large table of multiples (`P256KeyTable`).
func tableRate(seconds: Double, threads: Int) throws -> Double {
    let samples = try (0..<16).map { _ -> (P256Key, Data, Data) in
        let key = P256.Signing.PrivateKey()
        let message = randomBytes(300)
        return (try P256Key(x963: key.publicKey.x963Representation), try key.signature(for: message).derRepresentation, message)
    }
    for (key, signature, message) in samples {
        for _ in 0...P256Key.signaturesBeforeLargeTable { try key.verifySignature(signature, for: message) }
    }
    return verificationsPerSecond(seconds: seconds, threads: threads, samples: samples.count) { index in
        let (key, signature, message) = samples[index]
        return (try? key.verifySignature(signature, for: message)) != nil
    }
}

/// How many times per second `threads` threads together run `verify` over sample indices in turn
/// (each must hold) for `seconds`.
private func verificationsPerSecond(seconds: Double, threads: Int, samples: Int, verify: @Sendable (Int) -> Bool) -> Double {
    let total = Atomic<Int>(0)
    let clock = ContinuousClock()
    let start = clock.now
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        var done = 0
        var index = thread
        while clock.now - start < .seconds(seconds) {
            for _ in 0..<32 {
                precondition(verify(index % samples))
                index += 1
            }
            done += 32
        }
        total.add(done, ordering: .relaxed)
    }
    return Double(total.load(ordering: .relaxed)) / cohort_bench.seconds(start.duration(to: clock.now))
}
