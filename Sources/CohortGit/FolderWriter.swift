import CohortBase
import Foundation
import Synchronization

/// Calls `body` (a system call) with `name`'s bytes as a C string; its result, and `errno` as it was
/// right after it.
func withCName(_ name: some Collection<UInt8>, _ body: (UnsafePointer<CChar>) -> Int32) -> (result: Int32, error: Int32) {
    (Array(name) + [0]).withUnsafeBytes { bytes in
        let result = body(bytes.baseAddress!.assumingMemoryBound(to: CChar.self))
        return (result, errno)
    }
}

/// Writes the files and links of a checkout plan on several threads, each with a repository handle
/// of its own. Each thread opens the folder it writes in by name from the top, never following a
/// link, and creates every file and link in it exclusively.
final class FolderWriter: @unchecked Sendable {
    private let top: Int32
    private let plan: CheckoutPlan
    private let handles: [Repository]
    /// One slot per file, each filled by the one thread that wrote it.
    private let written: UnsafeMutableBufferPointer<stat>
    private let nextChunk = Atomic<Int>(0)
    private let failure = Mutex<(any Error)?>(nil)
    /// Files a thread takes at once: mostly one folder's, so that two threads seldom wait on one
    /// folder's lock to create their files.
    private static let chunk = 128

    init(top: Int32, plan: CheckoutPlan, origin: Repository.Origin, workers: Int) throws {
        self.top = top
        self.plan = plan
        let count = max(1, min(workers, (plan.files.count + Self.chunk - 1) / Self.chunk))
        handles = try (0..<count).map { _ in try Repository.reopen(origin, ownPacks: true) }
        written = .allocate(capacity: plan.files.count)
        written.initialize(repeating: stat())
    }

    deinit {
        written.deallocate()
    }

    /// Writes every file; the stat data of each, in the plan's order.
    func run() throws -> [stat] {
        DispatchQueue.concurrentPerform(iterations: handles.count) { worker in
            var folder = (index: -1, descriptor: Int32(-1))
            defer { if folder.descriptor >= 0 { close(folder.descriptor) } }
            while failure.withLock({ $0 == nil }) {
                let start = nextChunk.add(Self.chunk, ordering: .relaxed).oldValue
                guard start < plan.files.count else { return }
                do {
                    for index in start..<min(start + Self.chunk, plan.files.count) {
                        let file = plan.files[index]
                        if folder.index != file.folder {
                            if folder.descriptor >= 0 { close(folder.descriptor) }
                            // Forgotten before the next opens: should that fail, nothing is closed twice.
                            folder = (-1, -1)
                            folder = (file.folder, try openFolder(file.folder))
                        }
                        written[index] = try write(file, in: folder.descriptor, from: handles[worker])
                    }
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return Array(written)
    }

    /// Opens folder `index` of the plan by name from the top, never following a link.
    private func openFolder(_ index: Int) throws -> Int32 {
        var descriptor = dup(top)
        guard descriptor >= 0 else { throw Self.failure(plan, folder: index, errno) }
        for name in plan.chain(of: index) {
            let next = Self.openFolder(name, in: descriptor)
            close(descriptor)
            guard next.result >= 0 else { throw Self.failure(plan, folder: index, next.error) }
            descriptor = next.result
        }
        return descriptor
    }

    static func openFolder(_ name: some Collection<UInt8>, in parent: Int32) -> (result: Int32, error: Int32) {
        withCName(name) { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    private func write(_ file: CheckoutPlan.File, in folder: Int32, from repository: Repository) throws -> stat {
        try repository.withBlobContent(file.id) { bytes in
            var info = stat()
            if file.mode == 0o120000 {
                // The target's bytes as stored, whatever their encoding (the plan left targets git
                // writes otherwise, as with a NUL in them, to libgit2).
                let target = Array(bytes) + [0]
                let made = target.withUnsafeBytes { target in
                    withCName(file.name) { symlinkat(target.baseAddress!.assumingMemoryBound(to: CChar.self), folder, $0) }
                }
                guard made.result == 0 else { throw Self.failure(file, made.error) }
                let stated = withCName(file.name) { fstatat(folder, $0, &info, AT_SYMLINK_NOFOLLOW) }
                guard stated.result == 0 else { throw Self.failure(file, stated.error) }
                return info
            }
            let opened = withCName(file.name) {
                openat(folder, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file.mode == 0o100755 ? 0o755 : 0o644)
            }
            guard opened.result >= 0 else { throw Self.failure(file, opened.error) }
            let descriptor = opened.result
            let error = AtomicFile.writeAll(bytes, to: descriptor)
            guard error == 0 else {
                close(descriptor)
                throw Self.failure(file, error)
            }
            // The stat data of the file written, not of whatever may take its name later.
            guard fstat(descriptor, &info) == 0 else {
                let error = errno
                close(descriptor)
                throw Self.failure(file, error)
            }
            // A network file system may report a full disk only now.
            guard close(descriptor) == 0 else { throw Self.failure(file, errno) }
            return info
        }
    }

    private static func failure(_ file: CheckoutPlan.File, _ error: Int32) -> CohortError {
        failure(CheckoutPlan.shown(file.path), error)
    }

    static func failure(_ plan: CheckoutPlan, folder: Int, _ error: Int32) -> CohortError {
        failure(CheckoutPlan.shown(plan.path(of: folder)), error, folder: true)
    }

    private static func failure(_ shown: String, _ error: Int32, folder: Bool = false) -> CohortError {
        let what = folder ? "the folder \(shown)" : shown
        switch error {
        case EEXIST, ELOOP, ENOTDIR:
            return CohortError(.io, "cannot write \(what): something else is in its place",
                               hint: "something was put in the folder meanwhile, or this file system takes two of its names as one; clone into a new, empty folder")
        case ENOSPC, EDQUOT:
            return CohortError(.io, "cannot write \(what): the disk is full", hint: "make room, then clone again")
        case ENAMETOOLONG:
            return CohortError(.io, "cannot write \(what): the path is too long for this file system", hint: "clone into a folder with a shorter path, or tell the collaboration's owner")
        default:
            return CohortError(.io, "cannot write \(what): \(String(cString: strerror(error)))", hint: "check the disk, then clone again")
        }
    }
}
