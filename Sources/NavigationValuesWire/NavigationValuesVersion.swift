/// The version of this package, in one place: what `navigation-values --version` prints, the served
/// OpenAPI document's `info.version` (which `scripts/embed-openapi.sh` writes from this line) and
/// the Swift client's `User-Agent`. Semantic versioning; `CHANGELOG.md` says what each one brought.
public enum NavigationValuesVersion {
    /// `major.minor.patch`.
    public static let current = "0.1.0"
}
