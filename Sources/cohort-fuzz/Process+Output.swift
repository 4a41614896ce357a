import Foundation

extension Process {
    /// What `executable` with `arguments` (in `folder`, when given) writes to standard output, fed
    /// `input` on standard input; a program that fails throws.
    @discardableResult
    static func output(of executable: String, _ arguments: [String], in folder: URL? = nil, input: Data = Data()) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        let output = Pipe(), feed = Pipe()
        process.standardOutput = output
        process.standardInput = feed
        try process.run()
        feed.fileHandleForWriting.write(input)
        try feed.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown) }
        return data
    }
}
