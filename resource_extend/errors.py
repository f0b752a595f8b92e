"""The errors a verb can fail with.

Every failure a caller can cause or a store can report is a ``PluginError``; the command line prints its
message on one stderr line and exits 128. Anything else escaping a verb is a bug, reported the same way
(never as a traceback) so that core's combined-output reader still gets one line.

Only the classes a call that succeeds may need are defined here; the rest are failures.py's, named here
too (``errors.NodeNotExists``, ``errors.InvalidVolume``, ...) and created the first time one is raised or
caught: code names them as attributes of this module, so a call that never fails never loads them.
"""

from __future__ import annotations

# failures.py's classes, each an attribute of this module too.
FAILURE_ONLY = ("AmbiguousWrite", "Conflict", "InsufficientResource", "InvalidDisk", "InvalidStorage", "InvalidVolume",
                "NodeNotExists", "Sentinel", "StoreUnavailable", "UsageError")  # fmt: skip

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.failures import AmbiguousWrite as AmbiguousWrite
    from resource_extend.failures import Conflict as Conflict
    from resource_extend.failures import InsufficientResource as InsufficientResource
    from resource_extend.failures import InvalidDisk as InvalidDisk
    from resource_extend.failures import InvalidStorage as InvalidStorage
    from resource_extend.failures import InvalidVolume as InvalidVolume
    from resource_extend.failures import NodeNotExists as NodeNotExists
    from resource_extend.failures import Sentinel as Sentinel
    from resource_extend.failures import StoreUnavailable as StoreUnavailable
    from resource_extend.failures import UsageError as UsageError
else:

    def __getattr__(name: str) -> type[Exception]:
        # Module attributes not found above (PEP 562): the failure-only classes, loaded on first use. Any
        # other name is no attribute, without loading them: the import system asks for ``__path__`` and more.
        if name not in FAILURE_ONLY:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from resource_extend import failures

        found: type[Exception] = getattr(failures, name)
        return found


class PluginError(Exception):
    """A verb failed; ``str(error)`` is the one line an operator reads."""
