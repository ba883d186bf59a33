/// Placeholder until the core lands (issue 2).
public enum NavigationValuesModule {}
