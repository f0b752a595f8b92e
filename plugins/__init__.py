"""Entry modules of the executables: one per plugin, nothing but the wiring."""
