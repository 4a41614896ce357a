import CGit2
import CGit2Shim
import Foundation

/// A copy of the pack a clone fetches, indexed by Cohort's own indexer as it arrives (`PackTee.c`,
/// `PackIndexer.c`), which hands each commit, and each blob that may be a notice, on to a reader on
/// another thread with the name it gave it (libgit2's own hash of exactly those bytes), while the rest
/// of the pack is still indexed.
public final class PackTee: @unchecked Sendable {
    /// What the reader hands on.
    public enum Kind: Sendable {
        case commit, blob
    }

    let pointer: OpaquePointer

    /// A new, empty copy; nil when its room cannot be set aside.
    public init?() {
        guard let pointer = cohort_pack_tee_new() else { return nil }
        self.pointer = pointer
    }

    deinit {
        cohort_pack_tee_release(pointer)
    }

    /// The next commit, or blob that starts with `{`, the indexer named, given to `body` with its name
    /// and bytes (valid during the call only); waits for one. nil once nothing more will be handed on
    /// (the pack indexed or declined), or once stopped. One thread only.
    public func next<T>(_ body: (Kind, ObjectID, UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        var type: Int32 = 0
        var id = git_oid()
        var data: UnsafePointer<UInt8>?
        var size = 0
        let handed = withUnsafeMutableBytes(of: &id.id) { cohort_pack_tee_next(pointer, &type, $0.bindMemory(to: UInt8.self).baseAddress, &data, &size) }
        guard handed == 1 else { return nil }
        return try body(type == 1 ? .commit : .blob, ObjectID(id), UnsafeRawBufferPointer(start: data, count: size))
    }

    /// For a copy fed by hand whose deltas will never be named (no `end()`): nothing is kept for that,
    /// and a pack of more than `entries` entries is declined. Before the first `append`.
    public func readOnlyWholeObjects(entries: Int) {
        cohort_pack_tee_read_only_whole(pointer, UInt32(clamping: entries))
    }

    /// Makes the reader stop at its next step; nothing more is handed on (any thread).
    public func stop() {
        cohort_pack_tee_stop(pointer)
    }

    /// Once the reader has stopped: lets go of the copied bytes and of every object waiting.
    public func forget() {
        cohort_pack_tee_forget(pointer)
    }

    /// Copies in, and names, more of a pack that does not come through a clone (tests, fuzzing).
    public func append(_ bytes: Data) {
        bytes.withUnsafeBytes { cohort_pack_tee_append(pointer, $0.baseAddress, $0.count) }
    }

    /// No more bytes will come: the objects of the pack's deltas are named and handed on now.
    public func end() {
        cohort_pack_tee_end(pointer)
    }
}
