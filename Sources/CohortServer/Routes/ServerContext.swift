import Hummingbird
import NIOCore

/// The request context: Hummingbird's core plus the client's address (for per-client limits and logs).
public struct ServerContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address, or "unknown".
    var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
