import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

/// Interoperability with OpenSSH's own `ssh-keygen -Y sign / verify`, in both directions.
@Suite struct SSHSignatureTests {
    @discardableResult
    func sshKeygen(_ arguments: [String], in directory: URL, stdin: Data? = nil) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-keygen")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func opensshVerifiesOurSignatures() throws {
        let temp = try TemporaryDirectory()
        let key = DeviceKey()
        let message = Data("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nmessage\n".utf8)
        let armored = try SSHSignature.sign(message, with: key)
        try Data((armored + "\n").utf8).write(to: temp.path("msg.sig"))
        try Data("ann@example.com namespaces=\"git\" \(SSHSignature.publicKeyLine(key.publicKey))\n".utf8).write(to: temp.path("allowed"))
        let verify = ["-Y", "verify", "-f", "allowed", "-I", "ann@example.com", "-n", "git", "-s", "msg.sig"]
        #expect(try sshKeygen(verify, in: temp.url, stdin: message) == 0)
        #expect(try sshKeygen(verify, in: temp.url, stdin: message + Data("x".utf8)) != 0)
        #expect(try SSHSignature.verify(armored, message: message) == key.publicKey)
    }

    @Test func weVerifyOpensshSignatures() throws {
        let temp = try TemporaryDirectory()
        #expect(try sshKeygen(["-q", "-t", "ecdsa", "-b", "256", "-N", "", "-f", "key"], in: temp.url) == 0)
        let message = Data("signed by openssh\n".utf8)
        try message.write(to: temp.path("msg"))
        #expect(try sshKeygen(["-Y", "sign", "-f", "key", "-n", "git", "msg"], in: temp.url) == 0)
        let armored = try String(decoding: Data(contentsOf: temp.path("msg.sig")), as: UTF8.self)
        let signer = try SSHSignature.verify(armored, message: message)
        let publicLine = try String(decoding: Data(contentsOf: temp.path("key.pub")), as: UTF8.self)
        #expect(publicLine.hasPrefix(SSHSignature.publicKeyLine(signer)))
        expectCode(.badSignature) { try SSHSignature.verify(armored, message: message + Data([0])) }
        expectCode(.badSignature) { try SSHSignature.verify(armored, message: message, namespace: "file") }
    }

    @Test func damagedSignaturesAreRefused() throws {
        let key = DeviceKey()
        let message = Data("m".utf8)
        let armored = try SSHSignature.sign(message, with: key)
        let lines = armored.split(separator: "\n").map(String.init)
        let body = try #require(Data(base64Encoded: lines.dropFirst().dropLast().joined()))
        func rearmor(_ blob: Data) -> String {
            ["-----BEGIN SSH SIGNATURE-----", blob.base64EncodedString(), "-----END SSH SIGNATURE-----"].joined(separator: "\n")
        }
        #expect(try SSHSignature.verify(rearmor(body), message: message) == key.publicKey)
        for cut in [1, 10, 40, body.count - 1] {
            expectCode(.badSignature) { try SSHSignature.verify(rearmor(body.prefix(cut)), message: message) }
        }
        var flipped = body
        flipped[flipped.count - 5] ^= 1
        expectCode(.badSignature) { try SSHSignature.verify(rearmor(flipped), message: message) }
        expectCode(.badSignature) { try SSHSignature.verify(rearmor(body + Data([0])), message: message) }
        expectCode(.badSignature) { try SSHSignature.verify("garbage", message: message) }
        expectCode(.badSignature) { try SSHSignature.verify(String(repeating: "A", count: 5000), message: message) }
        // A key that is not on the curve inside an otherwise well-formed signature.
        var offCurve = body
        let keyOffset = try #require(body.range(of: key.publicKey.x963)).lowerBound
        offCurve[keyOffset + 40] ^= 1
        expectCode(.badKey) { try SSHSignature.verify(rearmor(offCurve), message: message) }
    }

    /// The armor is read line by line, each trimmed of blanks, empty lines skipped: CRLF, indented
    /// and re-wrapped signatures verify; without both armor lines, or with nothing between, refused.
    @Test func armorLayouts() throws {
        let key = DeviceKey()
        let message = Data("m".utf8)
        let armored = try SSHSignature.sign(message, with: key)
        let lines = armored.split(separator: "\n").map(String.init)
        let body = lines.dropFirst().dropLast().joined()
        let (begin, end) = (lines[0], lines[lines.count - 1])
        let wrapped = stride(from: 0, to: body.count, by: 7).map { String(body.dropFirst($0).prefix(7)) }
        for layout in [
            armored.replacingOccurrences(of: "\n", with: "\r\n"),
            "\n\n" + armored + "\n\n",
            ([begin] + wrapped + [end]).map { " \t\($0) \r" }.joined(separator: "\n\n"),
            [begin, body, end].joined(separator: "\n"),
        ] {
            #expect(try SSHSignature.verify(layout, message: message) == key.publicKey, "\(layout.debugDescription)")
        }
        for layout in [
            [body, end].joined(separator: "\n"),
            [begin, body].joined(separator: "\n"),
            [begin, end].joined(separator: "\n"),
            [begin, body, end, "more"].joined(separator: "\n"),
            [begin.dropFirst() + "", body, end].joined(separator: "\n"),
            "",
        ] {
            expectCode(.badSignature) { try SSHSignature.verify(layout, message: message) }
        }
    }
}
