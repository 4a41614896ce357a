import CohortBase
import CohortGit
import Foundation

/// `cohort-bench objects REPOSITORY IDS THREADS [own]`: reads every object named in the file IDS (one
/// id per line) through Cohort's git layer (`Repository.rawObject`, its size read first, as
/// verification reads commits and notices), split between THREADS threads, each with its own repository handle (with
/// `own`, each through Cohort's own pack reader, as verification's workers read); prints one line: the objects,
/// the wall-clock and the CPU seconds. Two processes given half each have no lock in common:
/// `Scripts/bench-objects.sh` runs every way side by side.
func objectsBenchmark(repository path: String, ids file: String, threads: Int, ownPacks: Bool) throws {
    let ids = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { try ObjectID(hex: String($0)) }
    let origin = Repository.Origin.path(URL(fileURLWithPath: path))
    let handles = try (0..<threads).map { _ in try Repository.reopen(origin, ownPacks: ownPacks) }
    let cpuBefore = cpuSeconds()
    let clock = ContinuousClock()
    let start = clock.now
    nonisolated(unsafe) let shared = handles
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        let repository = shared[thread]
        for index in stride(from: ids.count * thread / threads, to: ids.count * (thread + 1) / threads, by: 1) {
            precondition((try? repository.rawObject(ids[index], maxBytes: 1 << 30)) != nil, "cannot read \(ids[index].hex)")
        }
    }
    let wall = seconds(start.duration(to: clock.now))
    print(String(format: "%d %.4f %.4f", ids.count, wall, cpuSeconds() - cpuBefore))
}

/// This process's user and system CPU time so far, in seconds.
private func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
