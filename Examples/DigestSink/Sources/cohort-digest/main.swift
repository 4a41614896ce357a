import CohortCommandLine
import DigestSink

// `cohort`, with the `digest` sink type beside the shipped ones.
await CohortCommandLine.main(sinks: CohortCommandLine.shippedSinks + [DigestSinkFactory()])
