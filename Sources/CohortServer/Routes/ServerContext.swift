import Hummingbird
import NIOCore

/// The request context: Hummingbird's core plus the client's address (for per-client limits and logs).
public struct ServerContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    /// The client's IP address (through trusted proxies, see `ClientAddress`), or "unknown"; set by
    /// `AccessLog`, the first middleware.
    var clientAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        clientAddress = remoteAddress?.ipAddress ?? "unknown"
    }
}
