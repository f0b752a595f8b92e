"""Development tools: the conformance kit, a throwaway etcd, the demo and the benchmark.

Kept apart from `resource_extend` so the executables (which copy only that package) never carry them,
and so an import-linter contract can forbid the runtime from importing them.
"""
