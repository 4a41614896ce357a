import CohortBase
@testable import CohortServer
import Testing

/// `--state` URLs, read without a database: TLS by default off loopback, sockets, what is refused, and
/// a description that never shows the password.
@Suite struct PostgresLocationTests {
    @Test func tlsIsRequiredOffLoopbackUnlessTold() throws {
        #expect(try PostgresLocation("postgres://cohort@db.example.org/cohort", environmentPassword: nil).tls == .require)
        #expect(try PostgresLocation("postgres://cohort@127.0.0.1:5433/cohort", environmentPassword: nil).tls == .prefer)
        let told = try PostgresLocation("postgres://cohort@db.example.org/cohort?sslmode=disable", environmentPassword: nil)
        #expect(told.tls == .disable && told.description == "postgres://cohort@db.example.org:5432/cohort?sslmode=disable")
    }

    @Test func aSocketFolderReplacesTheHost() throws {
        let socket = try PostgresLocation("postgres://cohort@/cohort?host=/run/postgresql&sslmode=require", environmentPassword: nil)
        #expect(socket.host == nil && socket.socketPath == "/run/postgresql/.s.PGSQL.5432")
        // A socket is never encrypted: its description does not claim sslmode=require.
        #expect(socket.description == "postgres://cohort@/cohort?host=/run/postgresql", "\(socket.description)")
    }

    @Test func thePasswordComesFromTheURLOrPGPASSWORDAndIsNeverShown() throws {
        let inURL = try PostgresLocation("postgres://cohort:s3cret@db/cohort", environmentPassword: "other")
        #expect(inURL.password == "s3cret" && !inURL.description.contains("s3cret"))
        let fromEnvironment = try PostgresLocation("postgres://cohort@db/cohort", environmentPassword: "s3cret")
        #expect(fromEnvironment.password == "s3cret" && !fromEnvironment.description.contains("s3cret"))
    }

    @Test(arguments: [("postgres://cohort@db/cohort?host=run/postgresql", "absolute path"),
                      ("postgres://cohort@db/cohort?port=5", "unknown parameter 'port'"),
                      ("postgres://cohort@db/cohort?sslmode=verify-full", "sslmode must be"),
                      ("postgres://cohort@db/a/b", "names no database")])
    func whatIsRefusedSaysWhy(url: String, reason: String) {
        let error = #expect(throws: CohortError.self) { try PostgresLocation(url, environmentPassword: nil) }
        #expect(error?.code == .malformed && error?.reason.contains(reason) == true && error?.hint != nil, "\(String(describing: error))")
    }
}
