"""The command line: the entry point, shared options and one module per subcommand."""
