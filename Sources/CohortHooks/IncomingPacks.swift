import CohortGit
import CohortVerification
import Foundation
import Synchronization

#if os(Linux)
/// The packs pushes bring into the repositories a resident verifier serves, read while git still
/// indexes them: the signatures of their commits and notices are checked then (`EarlyChecks`), on a
/// core git leaves idle, and the verification that follows finds them checked (`CheckedAhead`).
///
/// git's `receive-pack` writes a push's pack into a quarantine (`objects/tmp_objdir-incoming-*/pack/
/// tmp_pack_*`) and runs `pre-receive` only once it has indexed the pack and checked that the push
/// is whole: a third of a one-commit push's time, during which the verifier has nothing to do. Through
/// inotify it sees the quarantine appear in a repository it served before, reads the pack as it is
/// written, and names each whole object itself as a clone does (`PackTee`). A result is kept under
/// the name of the bytes it was computed from, so it is exactly what the verifier would compute:
/// reading ahead moves work and changes no verdict. Failures are never kept.
///
/// Nothing a push's answer does waits for the reading threads, which run only on idle cores: the
/// answer takes the shared state only when it is free, and a claim stops the reading without waiting.
/// Folders are opened without following links, within the object folder's file system, and watched
/// through the descriptor opened, so that a link put in place of a quarantine or its `pack` folder
/// is never followed.
final class IncomingPacks: @unchecked Sendable {
    /// Object folders watched at most (each a repository served).
    static let maxRepositories = 256
    /// Quarantines followed at once (a push's lives from its pack to the end of its hook).
    static let maxQuarantines = 64
    /// Packs read at once; more pushes at the same moment are verified as usual.
    static let maxPacks = 4
    /// Bytes read of one pack; past them, what was read is what is checked.
    static let maxPackBytes = 16 << 20
    /// Entries of one pack read at most (a pack declaring more is not read).
    static let maxPackEntries = 1 << 17
    /// A pack nobody claimed for this long (a push git refused before its hook, a push trickling in)
    /// is let go, and its quarantine is not read again.
    static let unclaimedSeconds = 120.0
    /// A quarantine is forgotten after this long whatever else happens (one a killed git left).
    static let quarantineSeconds = 600.0

    private let inotify: Int32
    private let state = Mutex(Watches())
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    private struct Watches {
        /// What each watch descriptor watches.
        var watched: [Int32: Watched] = [:]
        /// Object folders watched, by identity: a repository removed and made again at the same path
        /// is another folder, watched anew.
        var repositories: Set<Folder> = []
        /// The quarantines of pushes under way, by folder.
        var quarantines: [Folder: Quarantine] = [:]
        /// Packs being read, or being opened to be read.
        var reading: Int { quarantines.values.filter { $0.pack != nil || $0.opening }.count }
    }

    private enum Watched {
        case objects(path: String, Folder)
        case quarantine(Folder)
        case packFolder(Folder)
    }

    /// A push's quarantine: where it is, its descriptors and watches, and its pack once found (never
    /// read again once claimed or abandoned).
    private struct Quarantine {
        /// The object folder it is in (nil: known only from a claim that came first), and its name.
        let objects: Folder?
        let name: String
        let found = Date()
        /// The quarantine and its `pack` folder, opened without following links (-1: not open).
        var folder: Int32 = -1
        var packs: Int32 = -1
        var watches: [Int32] = []
        var pack: IncomingPack?
        var opening = false
        /// Claimed by the verifier, or abandoned: nothing more is read.
        var done = false
    }

    /// A folder by its device and inode: the hook names a quarantine by another path than the watch
    /// found it under (`repo.git/./objects/…`), or through a link.
    struct Folder: Hashable {
        let device: UInt64
        let inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }

        init?(_ path: String) {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
            self.init(status)
        }
    }

    /// Starts watching; nil where inotify cannot be had (the verifier then reads nothing ahead).
    init?() {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        inotify = fd
        let thread = Thread { [self] in
            runOnlyWhenIdle()
            run()
            done.signal()
        }
        thread.name = "cohort incoming packs"
        thread.start()
    }

    /// Stops watching and lets go of every pack being read.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The packs first, so that the watching thread stops at its next chunk; their folders'
        // descriptors only once it has returned (it may be opening a pack relative to one).
        for pack in state.withLock({ $0.quarantines.values.compactMap(\.pack) }) { pack.close() }
        done.wait()
        let quarantines = state.withLock { state -> [Quarantine] in
            defer { state.quarantines.removeAll() }
            return Array(state.quarantines.values)
        }
        for quarantine in quarantines { finish(quarantine) }
        Glibc.close(inotify)
    }

    /// Watches the object folder `objects` (a repository's own, `<common dir>/objects`) for pushes,
    /// unless the watches are being changed by the reading thread at this moment (a push's answer
    /// never waits for it).
    func watch(objects: String) {
        guard !stopped.load(ordering: .acquiring) else { return }
        let fd = open(objects, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return }
        let folder = Folder(status)
        if Self.claimsWait.load(ordering: .relaxed) {
            state.withLock { add(objects: objects, folder, fd, to: &$0) }
        } else {
            _ = state.withLockIfAvailable { add(objects: objects, folder, fd, to: &$0) }
        }
    }

    private func add(objects: String, _ folder: Folder, _ fd: Int32, to state: inout Watches) {
        guard !state.repositories.contains(folder), state.repositories.count < Self.maxRepositories else { return }
        let mask = UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_ONLYDIR)
        let descriptor = inotify_add_watch(inotify, "/proc/self/fd/\(fd)", mask)
        guard descriptor >= 0 else { return }
        state.repositories.insert(folder)
        state.watched[descriptor] = .objects(path: objects, folder)
    }

    /// The checks made ahead on the pack in the quarantine `quarantine`, no longer fed: the caller
    /// keeps them while it verifies the push (their results are found only while they are alive).
    /// Never waits for the reading threads (unless tests ask it to: `claimsWait`).
    func claim(quarantine: String) -> EarlyChecks? {
        guard let folder = Folder(quarantine) else { return nil }
        let waits = Self.claimsWait.load(ordering: .relaxed)
        if waits {
            // Tests: until the watch has read the whole pack (git wrote it before running the hook).
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, state.withLock({ $0.quarantines[folder]?.pack?.complete != true }) { usleep(1000) }
        }
        let name = URL(fileURLWithPath: quarantine).lastPathComponent
        let pack = waits ? state.withLock { Self.take(folder, name, from: &$0) } : (state.withLockIfAvailable { Self.take(folder, name, from: &$0) } ?? nil)
        return pack?.claim(waiting: waits)
    }

    /// The pack of the quarantine `folder` (named `name`), which is marked claimed: one the watch has
    /// not seen yet is marked too, so that it is never read once it is.
    private static func take(_ folder: Folder, _ name: String, from state: inout Watches) -> IncomingPack? {
        guard state.quarantines[folder] != nil || state.quarantines.count < maxQuarantines else { return nil }
        var entry = state.quarantines[folder] ?? Quarantine(objects: nil, name: name)
        entry.done = true
        let pack = entry.pack
        entry.pack = nil
        state.quarantines[folder] = entry
        return pack
    }

    /// Tests: a claim waits for the pack to be read whole and every object in it checked, so that what
    /// the checks find does not hang on how busy the machine is.
    static let claimsWait = Atomic<Bool>(false)

    /// Packs being read now (for tests).
    var packsBeingRead: Int { state.withLock { $0.quarantines.values.filter { $0.pack != nil }.count } }

    /// How many results the checks of `quarantine`'s pack have kept so far (for tests).
    func kept(quarantine: String) -> Int {
        guard let folder = Folder(quarantine) else { return 0 }
        return state.withLock { $0.quarantines[folder]?.pack?.kept ?? 0 }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var descriptor = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
        while !stopped.load(ordering: .acquiring) {
            let ready = poll(&descriptor, 1, 200)
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress!, $0.count) }
                if count > 0 { buffer.withUnsafeBytes { handle(events: UnsafeRawBufferPointer(rebasing: $0[0..<count])) } }
            }
            dropStale()
        }
    }

    private func handle(events: UnsafeRawBufferPointer) {
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= events.count, !stopped.load(ordering: .acquiring) {
            let event = events.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let nameBytes = events[(offset + header)..<min(events.count, offset + header + Int(event.len))]
            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
            offset += header + Int(event.len)
            handle(watch: event.wd, mask: event.mask, name: name)
        }
    }

    private func handle(watch: Int32, mask: UInt32, name: String) {
        guard let watched = state.withLock({ $0.watched[watch] }) else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            state.withLock { state in
                state.watched[watch] = nil
                if case .objects(_, let folder) = watched { state.repositories.remove(folder) }
            }
            return
        }
        switch watched {
        case .objects(let path, let objects):
            guard name.hasPrefix("tmp_objdir-incoming-") else { return }
            if mask & UInt32(IN_DELETE) != 0 {
                // git removed the quarantine (the push ended): its pack, if still unclaimed, goes.
                // (A file held open inside keeps the kernel from saying so to the quarantine's watch.)
                end { ($0.objects == objects || $0.objects == nil) && $0.name == name }
                return
            }
            guard mask & UInt32(IN_ISDIR) != 0 else { return }
            follow(quarantine: name, in: path, objects)
        case .quarantine(let folder):
            guard mask & UInt32(IN_ISDIR) != 0, name == "pack" else { return }
            watchPackFolder(of: folder)
        case .packFolder(let folder):
            readPack(name, in: folder, ended: mask & (UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_FROM)) != 0)
        }
    }

    /// A new quarantine in the object folder `objects`: opened without following a link, on the same
    /// file system, and watched through that descriptor.
    private func follow(quarantine name: String, in path: String, _ objects: Folder) {
        let parent = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard parent >= 0 else { return }
        defer { Glibc.close(parent) }
        var status = stat()
        guard fstat(parent, &status) == 0, Folder(status) == objects else { return }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        guard fstat(fd, &status) == 0, UInt64(status.st_dev) == objects.device else {
            Glibc.close(fd)
            return
        }
        let folder = Folder(status)
        let (added, stale) = state.withLock { state -> (Bool, Quarantine?) in
            // The same identity under another name: a quarantine gone before its end was heard, whose
            // inode the new one took.
            var stale: Quarantine?
            if let known = state.quarantines[folder], known.name != name || (known.objects ?? objects) != objects {
                stale = state.quarantines.removeValue(forKey: folder)
            }
            guard state.quarantines[folder] == nil, state.quarantines.count < Self.maxQuarantines else { return (false, stale) }
            var quarantine = Quarantine(objects: objects, name: name)
            quarantine.folder = fd
            state.quarantines[folder] = quarantine
            return (true, stale)
        }
        if let stale { finish(stale) }
        guard added else {
            Glibc.close(fd)
            return
        }
        guard add(watch: fd, UInt32(IN_CREATE) | UInt32(IN_ONLYDIR), as: .quarantine(folder), of: folder) else { return }
        // The pack folder may have come before the watch did.
        watchPackFolder(of: folder)
    }

    private func watchPackFolder(of folder: Folder) {
        guard let quarantine = state.withLock({ $0.quarantines[folder] }), quarantine.folder >= 0, quarantine.packs < 0 else { return }
        let fd = openat(quarantine.folder, "pack", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        var status = stat()
        guard fstat(fd, &status) == 0, UInt64(status.st_dev) == folder.device,
              state.withLock({ state -> Bool in
                  guard state.quarantines[folder] != nil else { return false }
                  state.quarantines[folder]?.packs = fd
                  return true
              })
        else {
            Glibc.close(fd)
            return
        }
        let mask = UInt32(IN_CREATE) | UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO) | UInt32(IN_ONLYDIR)
        guard add(watch: fd, mask, as: .packFolder(folder), of: folder) else { return }
        // index-pack may have begun before the watch did.
        for name in names(in: fd) { readPack(name, in: folder, ended: false) }
    }

    /// A file in a quarantine's `pack` folder: index-pack writes `tmp_pack_*`, then renames it
    /// `pack-*.pack` (a watch that came late finds it whole under that name).
    private func readPack(_ name: String, in folder: Folder, ended: Bool) {
        let whole = name.hasPrefix("pack-") && name.hasSuffix(".pack")
        guard name.hasPrefix("tmp_pack_") || whole else { return }
        enum Next { case none, read(IncomingPack), open(Int32) }
        let next = state.withLock { state -> Next in
            guard let quarantine = state.quarantines[folder], !quarantine.done, !quarantine.opening, quarantine.packs >= 0 else { return .none }
            if let pack = quarantine.pack { return pack.name == name ? .read(pack) : .none }
            guard state.reading < Self.maxPacks else { return .none }
            state.quarantines[folder]?.opening = true
            return .open(quarantine.packs)
        }
        let pack: IncomingPack
        switch next {
        case .none: return
        case .read(let found): pack = found
        case .open(let packs):
            // Opened outside the lock (a file, a thread): the lock is never held for long.
            let opened = IncomingPack(name: name, in: packs, device: folder.device)
            let published = state.withLock { state -> Bool in
                state.quarantines[folder]?.opening = false
                guard let opened, let quarantine = state.quarantines[folder], !quarantine.done else {
                    return false
                }
                state.quarantines[folder]?.pack = opened
                return true
            }
            guard published, let opened else {
                opened?.close()
                return
            }
            pack = opened
        }
        pack.readMore(upTo: Self.maxPackBytes, ended: whole || ended)
    }

    private func add(watch fd: Int32, _ mask: UInt32, as watched: Watched, of quarantine: Folder) -> Bool {
        let descriptor = inotify_add_watch(inotify, "/proc/self/fd/\(fd)", mask)
        guard descriptor >= 0 else { return false }
        state.withLock { state in
            state.watched[descriptor] = watched
            state.quarantines[quarantine]?.watches.append(descriptor)
        }
        return true
    }

    /// Forgets the quarantines `matching` says: their watches end, and their packs if never claimed.
    private func end(_ matching: (Quarantine) -> Bool) {
        let ended = state.withLock { state -> [Quarantine] in
            let keys = state.quarantines.filter { matching($0.value) }.map(\.key)
            let ended = keys.compactMap { state.quarantines.removeValue(forKey: $0) }
            return ended
        }
        for quarantine in ended { finish(quarantine) }
    }

    /// A quarantine forgotten: its watches end, its pack if never claimed, its descriptors close.
    private func finish(_ quarantine: Quarantine) {
        for descriptor in quarantine.watches { inotify_rm_watch(inotify, descriptor) }
        quarantine.pack?.close()
        close(quarantine)
    }

    private func close(_ quarantine: Quarantine) {
        if quarantine.folder >= 0 { Glibc.close(quarantine.folder) }
        if quarantine.packs >= 0 { Glibc.close(quarantine.packs) }
    }

    /// Abandons packs nobody claimed in time (their quarantines are not read again), and forgets
    /// quarantines that are gone or too old.
    private func dropStale() {
        let now = Date()
        let abandoned = state.withLock { state -> [IncomingPack] in
            var packs: [IncomingPack] = []
            for (folder, quarantine) in state.quarantines {
                guard let pack = quarantine.pack, now.timeIntervalSince(pack.started) > Self.unclaimedSeconds else { continue }
                packs.append(pack)
                state.quarantines[folder]?.pack = nil
                state.quarantines[folder]?.done = true
            }
            return packs
        }
        for pack in abandoned { pack.close() }
        end { quarantine in
            now.timeIntervalSince(quarantine.found) > Self.quarantineSeconds
                || (quarantine.folder >= 0 && Self.isRemoved(quarantine.folder))
        }
    }

    /// Whether the folder open at `fd` was removed (no link left to it).
    private static func isRemoved(_ fd: Int32) -> Bool {
        var status = stat()
        return fstat(fd, &status) != 0 || status.st_nlink == 0
    }

    /// The names in the folder open at `fd`.
    private func names(in fd: Int32) -> [String] {
        let copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard copy >= 0, let listing = fdopendir(copy) else {
            if copy >= 0 { Glibc.close(copy) }
            return []
        }
        defer { closedir(listing) }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}

/// One pack being written by git's index-pack, read as it grows into a `PackTee` (whole objects only),
/// whose objects an `EarlyChecks` checks on a thread of its own.
private final class IncomingPack: @unchecked Sendable {
    let name: String
    let started = Date()
    /// Bytes read at a time.
    static let chunkBytes = 64 << 10
    private let file: Int32
    private let tee: PackTee
    private let early: EarlyChecks
    /// Held while bytes are copied in, a chunk at a time (only by the reading thread, and by a claim
    /// in tests).
    private let lock = NSLock()
    private let claimed = Atomic<Bool>(false)
    private var read = 0
    private var chunk = [UInt8](repeating: 0, count: chunkBytes)
    /// Whether git has finished writing (the file closed or renamed), once everything was read.
    private let finished = Atomic<Bool>(false)
    var complete: Bool { finished.load(ordering: .acquiring) }
    /// Results its checks have kept so far.
    var kept: Int { early.kept }

    /// The pack `name` in the folder open at `folder`, if it is a regular file on `device` (never a
    /// link, a device or a pipe someone put there).
    init?(name: String, in folder: Int32, device: UInt64) {
        let fd = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, UInt64(status.st_dev) == device, let tee = PackTee() else {
            Glibc.close(fd)
            return nil
        }
        tee.readOnlyWholeObjects(entries: IncomingPacks.maxPackEntries)
        self.name = name
        file = fd
        self.tee = tee
        early = EarlyChecks(reading: tee, idle: true)
    }

    deinit {
        Glibc.close(file)
    }

    /// Copies in what git has written since, up to `limit` bytes in all; `ended`, git has written it
    /// all, and what is read now is the whole pack.
    func readMore(upTo limit: Int, ended: Bool) {
        while true {
            lock.lock()
            defer { lock.unlock() }
            guard !claimed.load(ordering: .acquiring) else { return }
            let got = read < limit ? chunk.withUnsafeMutableBytes { pread(file, $0.baseAddress!, min($0.count, limit - read), off_t(read)) } : 0
            guard got > 0 else {
                if ended { finished.store(true, ordering: .releasing) }
                return
            }
            chunk.withUnsafeBytes { tee.append(Data($0[0..<got])) }
            read += got
        }
    }

    /// The checks, handed to the verifier: nothing more is read, and the checking thread stops at its
    /// next object, without anyone waiting for it (or, `waiting`, once it has checked every object
    /// read: for tests). The copy of the pack goes once both threads have let go of it.
    func claim(waiting: Bool = false) -> EarlyChecks {
        claimed.store(true, ordering: .releasing)
        if waiting {
            lock.lock()
            early.finish(readingAll: true)
            lock.unlock()
        } else {
            tee.stop()
        }
        return early
    }

    /// Unclaimed: the checks stop and their results go with them.
    func close() {
        _ = claim()
    }
}
#endif
