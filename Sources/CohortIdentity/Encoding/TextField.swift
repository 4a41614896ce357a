import CohortBase
import Foundation

/// Checks on the short texts people type: handles, names, device names.
enum TextField {
    /// Non-empty, at most `maxBytes` UTF-8 bytes, no control characters, no leading or trailing space.
    static func check(_ text: String, field: String, maxBytes: Int) throws {
        let size = text.utf8.count
        guard size > 0 else {
            throw CohortError(.malformed, "\(field) is empty")
        }
        guard size <= maxBytes else {
            throw CohortError(.malformed, "\(field) is \(size) bytes, at most \(maxBytes) allowed")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CohortError(.malformed, "\(field) contains a control character")
        }
        guard text.trimmingCharacters(in: .whitespaces) == text else {
            throw CohortError(.malformed, "\(field) starts or ends with a space")
        }
    }

    /// A handle: like `check`, and no whitespace at all (handles appear in `@mentions`).
    static func checkHandle(_ handle: String) throws {
        try check(handle, field: "handle", maxBytes: 254)
        guard !handle.unicodeScalars.contains(where: { $0.properties.isWhitespace }) else {
            throw CohortError(.malformed, "handle '\(handle)' contains a space", hint: "use an address such as you@example.com")
        }
    }

    /// What commits carry as their author (`Name <handle>`) must be a valid git identity: no `<` or
    /// `>`, no line or paragraph separator. Checked where a person types them (`id init`, `enroll`),
    /// not on cards read from elsewhere.
    static func checkAuthorText(_ text: String, field: String) throws {
        guard !text.contains("<"), !text.contains(">"),
              !text.unicodeScalars.contains(where: { [.lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) })
        else {
            throw CohortError(.malformed, "\(field) '\(text.prefix(80))' contains '<', '>' or a line break",
                              hint: "commits name you as `name <handle>`, so neither may hold those")
        }
    }
}
