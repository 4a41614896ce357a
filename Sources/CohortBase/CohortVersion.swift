/// Cohort's version, as `cohort version`, the server and its clients report it.
public enum CohortVersion {
    public static let text = "0.2.0"
}
