@testable import CohortServer
import HTTPTypes
import Testing

/// Which address a request is counted and logged under, behind trusted proxies or not.
@Suite struct ClientAddressTests {
    func headers(_ forwarded: String?) -> HTTPFields {
        var fields = HTTPFields()
        if let forwarded { fields[ClientAddress.forwardedFor] = forwarded }
        return fields
    }

    @Test func theHeaderIsReadOnlyFromATrustedProxyFromTheRight() {
        let clients = ClientAddress(trustedProxies: ["127.0.0.2", "10.0.0.1"])
        // Not a proxy: whatever it wrote is not read.
        #expect(clients.resolve(peer: "198.51.100.7", headers: headers("203.0.113.9")) == "198.51.100.7")
        // A proxy: the rightmost address that is not a trusted proxy, past a chain of them.
        #expect(clients.resolve(peer: "127.0.0.2", headers: headers("203.0.113.9, 198.51.100.7")) == "198.51.100.7")
        #expect(clients.resolve(peer: "127.0.0.2", headers: headers("198.51.100.7, 10.0.0.1")) == "198.51.100.7")
        #expect(clients.resolve(peer: "127.0.0.2", headers: headers(nil)) == "127.0.0.2")
        // A client's padding cannot push its real address out of reach.
        let padding = Array(repeating: "192.0.2.1", count: 2000).joined(separator: ", ")
        #expect(clients.resolve(peer: "127.0.0.2", headers: headers(padding + ", 198.51.100.7")) == "198.51.100.7")
        // IPv6 spelled one way; an IPv4 peer of a socket on [::] is its IPv4 address, trusted as such.
        #expect(clients.resolve(peer: "::ffff:127.0.0.2", headers: headers("2001:DB8::0:1")) == "2001:db8::1")
        #expect(ClientAddress.canonical("::ffff:198.51.100.7") == "198.51.100.7")
        #expect(ClientAddress.canonical("nginx.local") == nil)
    }
}
