"""The `praib` command line: one module per command group, over the library layers below it."""
