import CohortGit
import CohortVerification
import Foundation

/// The hook's verification of one push run again and again in one process, as a verifier that stays
/// running would pay for each push (no process to start, libgit2 initialised, keys' tables made):
/// the refs reset and the verified-commits file restored before each round, neither timed. The
/// first round is the cold one; the median of the others is printed last.
///   cohort-bench hook-warm GIT_DIR UPDATES VERIFIED ROUNDS
/// (UPDATES: the hook's `OLD NEW REF` lines, each ref reset to OLD before a round;
/// VERIFIED: a copy of the repository's `cohort/verified` from before the push.)
func warmHookBenchmark(gitDir: String, updatesFile: String, verifiedFile: String, rounds: Int) throws {
    let input = try String(contentsOfFile: updatesFile, encoding: .utf8)
    let updates = try input.split(separator: "\n").map { try RefUpdate(line: $0) }
    guard rounds > 1, !updates.isEmpty, !updates.contains(where: { $0.isCreation || $0.isDeletion }) else {
        FileHandle.standardError.write(Data("error: E_USAGE: hook-warm takes at least 2 rounds and updates of existing refs (give each ref's value before the push as OLD)\n".utf8))
        exit(64)
    }
    let memory = URL(fileURLWithPath: gitDir).appendingPathComponent("cohort/verified")
    var times: [Double] = []
    for round in 0..<rounds {
        _ = try? FileManager.default.removeItem(at: memory)
        try FileManager.default.copyItem(at: URL(fileURLWithPath: verifiedFile), to: memory)
        let handle = try Repository.reopen(.path(URL(fileURLWithPath: gitDir)))
        for update in updates {
            try handle.updateReference(update.name, to: update.old, expected: handle.referenceTips()[update.name], message: "cohort-bench hook-warm")
        }
        let clock = ContinuousClock()
        let start = clock.now
        let repository = try Repository.reopen(.path(URL(fileURLWithPath: gitDir)), ownPacks: true)
        let rejections = try PushVerifier(repository: repository).verify(updates)
        let elapsed = seconds(start.duration(to: clock.now))
        guard rejections.isEmpty else {
            FileHandle.standardError.write(Data("error: E_NOT_PERMITTED: the push was refused: \(rejections[0]) (give a push the hook accepts)\n".utf8))
            exit(1)
        }
        if round > 0 { times.append(elapsed) }
        print(String(format: "round %d: %.2f ms", round, elapsed * 1000))
    }
    print(String(format: "median of the warm rounds: %.2f ms", median(times) * 1000))
}
