print("api-bench: not yet")
