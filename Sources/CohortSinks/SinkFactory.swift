import CohortIdentity
import CohortNotices
import ExecSink
import FileSink
import Foundation
import StdoutSink
import WebhookSink

/// Builds the shipped sinks from their configuration.
public enum SinkFactory {
    /// The sink `spec` describes. Sinks that remember things between runs (the webhook's retries)
    /// keep them in a folder of their own under `stateDirectory`.
    public static func make(_ spec: SinkSpec, stateDirectory: URL) throws -> any NoticeSink {
        switch spec.kind {
        case .stdout:
            return StdoutNoticeSink(name: spec.name, format: spec.format == "json" ? .json : .text)
        case .file:
            guard let path = spec.path else { throw CohortError(.malformed, "\(spec.location): a file sink needs a path") }
            return FileNoticeSink(name: spec.name, path: path)
        case .exec:
            guard let command = spec.command else { throw CohortError(.malformed, "\(spec.location): an exec sink needs a command") }
            return ExecNoticeSink(name: spec.name, command: command, directory: spec.directory, timeout: .seconds(spec.timeout ?? 30))
        case .webhook:
            guard let url = spec.url, let secrets = spec.secrets else {
                throw CohortError(.malformed, "\(spec.location): a webhook sink needs a url and a secret")
            }
            var settings = WebhookNoticeSink.Settings(url: url, secrets: try secrets.map(WebhookSecret.init))
            if let timeout = spec.timeout { settings.timeout = timeout }
            if let schedule = spec.retrySchedule { settings.retrySchedule = schedule }
            if let disableAfter = spec.disableAfter { settings.disableAfter = disableAfter }
            if let maxRetryAfter = spec.maxRetryAfter { settings.maxRetryAfter = maxRetryAfter }
            return try WebhookNoticeSink(name: spec.name, settings: settings, stateDirectory: folder(for: spec.name, in: stateDirectory))
        }
    }

    static func folder(for name: String, in directory: URL) -> URL {
        directory.appendingPathComponent(NoticeOutbox.fileName(for: name), isDirectory: true)
    }
}
