import CohortCommandLine

// Cohort's own `cohort`: the command line with the shipped sink types, registered as any program's are.
await CohortCommandLine.main(sinks: CohortCommandLine.shippedSinks)
