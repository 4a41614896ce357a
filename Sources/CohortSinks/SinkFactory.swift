import CohortIdentity
import CohortNotices
import ExecSink
import FileSink
import Foundation
import StdoutSink

/// Builds the shipped sinks from their configuration.
public enum SinkFactory {
    public static func make(_ spec: SinkSpec) throws -> any NoticeSink {
        switch spec.kind {
        case .stdout:
            return StdoutNoticeSink(name: spec.name, format: spec.format == "json" ? .json : .text)
        case .file:
            guard let path = spec.path else { throw CohortError(.malformed, "\(spec.location): a file sink needs a path") }
            return FileNoticeSink(name: spec.name, path: path)
        case .exec:
            guard let command = spec.command else { throw CohortError(.malformed, "\(spec.location): an exec sink needs a command") }
            return ExecNoticeSink(name: spec.name, command: command, directory: spec.directory, timeout: .seconds(spec.timeout ?? 30))
        }
    }
}
