"""Local tools: the embedded emulator, the demo, sample data and the `lakeinlet` command."""
