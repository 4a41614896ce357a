import CGit2
import CohortBase
import Foundation

/// A git object id.
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    var raw: git_oid

    init(_ raw: git_oid) {
        self.raw = raw
    }

    init(_ pointer: UnsafePointer<git_oid>) {
        raw = pointer.pointee
    }

    /// The id whose 20 bytes start at `bytes`.
    init(bytes: UnsafePointer<UInt8>) {
        raw = UnsafeRawPointer(bytes).loadUnaligned(as: git_oid.self)
    }

    /// Parses 40 hex digits.
    public init(hex: String) throws {
        var text = hex
        guard let id = text.withUTF8({ ObjectID(hexDigits: UnsafeRawBufferPointer($0)) }) else {
            throw CohortError(.malformed, "'\(hex.prefix(48))' is not a 40-digit object id")
        }
        self = id
    }

    /// Parses 40 hex digits (either case) where they lie; nil for anything else.
    public init?(hexDigits: UnsafeRawBufferPointer) {
        guard hexDigits.count == 40, let start = hexDigits.baseAddress else { return nil }
        var oid = git_oid()
        guard git_oid_fromstrn(&oid, start.assumingMemoryBound(to: CChar.self), 40) == 0 else { return nil }
        raw = oid
    }

    /// The id as 40 lowercase hex digits.
    public var hex: String {
        withUnsafeBytes(of: raw.id) { Data($0).hexString }
    }

    public var description: String { hex }

    /// The all-zero id git uses for "no object" in ref updates.
    public static let zero = ObjectID(git_oid())

    public var isZero: Bool { self == .zero }

    /// The 20 bytes as two 64-bit words and a 32-bit one: compared and hashed a word at a time (sets
    /// and maps of ids are in every walk and verification), all of them, so hashing keeps its strength.
    private var words: (UInt64, UInt64, UInt32) {
        withUnsafeBytes(of: raw.id) {
            ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
             $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
        }
    }

    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.words == rhs.words
    }

    public func hash(into hasher: inout Hasher) {
        let (a, b, c) = words
        hasher.combine(a)
        hasher.combine(b)
        hasher.combine(c)
    }
}
