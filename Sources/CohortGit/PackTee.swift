import CGit2
import CGit2Shim
import Foundation

/// A copy of the pack a clone fetches, read in pack order on another thread while libgit2 still
/// indexes it (`PackTee.c`): a clone's pack arrives in a fifth of its fetch, and libgit2 spends the
/// rest resolving deltas on one core. What the reader hands on is only bytes as the pack holds them,
/// without ids: a caller may compute from them nothing but results the verifier would compute itself
/// from the same bytes.
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

    /// The next commit or blob of the pack, whole, given to `body` with its bytes (valid during the
    /// call only); waits for bytes still to come. nil at the pack's end, at anything the reader does
    /// not read as git writes it, or once stopped. One thread only.
    public func next<T>(_ body: (Kind, UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        var type: Int32 = 0
        var data: UnsafePointer<UInt8>?
        var size = 0
        guard cohort_pack_tee_next(pointer, &type, &data, &size) == 1 else { return nil }
        return try body(type == 1 ? .commit : .blob, UnsafeRawBufferPointer(start: data, count: size))
    }

    /// Makes the reader stop at its next step (any thread).
    public func stop() {
        cohort_pack_tee_stop(pointer)
    }

    /// Once the reader has stopped: lets go of the copied bytes and of every object kept.
    public func forget() {
        cohort_pack_tee_forget(pointer)
    }

    /// Copies in more of a pack that does not come through a clone (tests, fuzzing).
    public func append(_ bytes: Data) {
        bytes.withUnsafeBytes { cohort_pack_tee_append(pointer, $0.baseAddress, $0.count) }
    }

    /// No more bytes will come.
    public func end() {
        cohort_pack_tee_end(pointer)
    }
}
