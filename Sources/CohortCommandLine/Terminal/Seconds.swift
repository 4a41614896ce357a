import ArgumentParser

/// A duration given on the command line in seconds (`--wait 60`, `--settle 0.5`). Parsed whatever
/// its sign, so that `--wait -3` is refused by the command's range check instead of being read as a
/// missing value; its default prints as `60`, not `60.0`.
struct Seconds: ExpressibleByArgument {
    let value: Double

    init(_ value: Double) {
        self.value = value
    }

    init?(argument: String) {
        guard let value = Double(argument), value.isFinite else { return nil }
        self.value = value
    }

    var defaultValueDescription: String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
