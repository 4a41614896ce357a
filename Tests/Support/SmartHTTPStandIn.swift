import Foundation
import Testing

/// A git server over smart HTTP on loopback, in Python, answering from `git upload-pack` for the
/// repositories under a folder (`URL/NAME` serves FOLDER/NAME): a transport that fetches a pack as git
/// makes it (deltas by offset), and that can cut a pack off half-way, as a server that hangs up would.
public final class SmartHTTPStandIn {
    private let process = Process()
    private let modeFile: URL
    public let url: String

    public init(serving root: URL, in temp: TemporaryDirectory) throws {
        let name = "smart-http-\(UUID().uuidString.prefix(8))"
        let portFile = temp.path("\(name).port")
        modeFile = temp.path("\(name).mode")
        try "whole".write(to: modeFile, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, root.path, portFile.path, modeFile.path]
        // Its output goes nowhere (a child holding the tests' own output open keeps `swift test`
        // waiting), and it is killed outright (a signal the test process ignores, its children do too).
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var port: Int?
        for _ in 0..<200 where port == nil {
            port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
            if port == nil { usleep(50_000) }
        }
        url = "http://127.0.0.1:\(try #require(port, "the smart HTTP stand-in did not start"))"
    }

    /// Whether packs are cut off half-way from now on.
    public var cutsPacks: Bool {
        get { (try? String(contentsOf: modeFile, encoding: .utf8)) == "cut" }
        set { try? (newValue ? "cut" : "whole").write(to: modeFile, atomically: true, encoding: .utf8) }
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static let script = #"""
    import http.server, os, subprocess, sys
    root, port_file, mode_file = sys.argv[1], sys.argv[2], sys.argv[3]
    def pkt(text): return b'%04x' % (len(text) + 4) + text
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.0'
        def log_message(self, *args): pass
        def repository(self):
            path = self.path.split('?')[0]
            for service in ('/info/refs', '/git-upload-pack'):
                if path.endswith(service): path = path[:-len(service)]
            return os.path.join(root, path.strip('/'))
        def do_GET(self):
            refs = subprocess.run(['git', 'upload-pack', '--stateless-rpc', '--advertise-refs', self.repository()], capture_output=True).stdout
            self.send_response(200)
            self.send_header('Content-Type', 'application/x-git-upload-pack-advertisement')
            self.end_headers()
            self.wfile.write(pkt(b'# service=git-upload-pack\n') + b'0000' + refs)
        def do_POST(self):
            body = self.rfile.read(int(self.headers['Content-Length']))
            answer = subprocess.run(['git', 'upload-pack', '--stateless-rpc', self.repository()], input=body, capture_output=True).stdout
            if open(mode_file).read() == 'cut': answer = answer[:len(answer) // 2]
            self.send_response(200)
            self.send_header('Content-Type', 'application/x-git-upload-pack-result')
            self.end_headers()
            self.wfile.write(answer)
    server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
    open(port_file, 'w').write(str(server.server_address[1]))
    server.serve_forever()
    """#
}
