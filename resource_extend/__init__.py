"""resource-extend: out-of-tree GPU and storage resource plugins for the eru scheduler."""

__version__ = "0.1.0"
