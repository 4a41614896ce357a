/// Text as one word for a POSIX shell: in single quotes, each `'` written as `'\''`.
package enum ShellWord {
    package static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
