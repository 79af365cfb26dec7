"""The `queryloop` command: print mode, the REPL and the subcommands (`main` is the entry)."""
