"""What the library knows of the executable it runs in, in one place.

A built executable's start (boot/start.py, run as module ``_resource_extend_boot``) loads the plugin's code
its own way, from code tables and without importlib; the library asks it to load a manifest's or a verb's
modules, and for the words it uses, only through this module. In a checkout there is no start: loading is
the import system's, and the start's source module answers for its words.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

# The module name the executable's stub gives the start (boot/stub.py).
START = "_resource_extend_boot"


def start() -> ModuleType | None:
    """The running executable's start module, or None outside a built executable."""
    return sys.modules.get(START)


def load_manifest() -> None:
    """The plugin manifest's modules, loaded the start's way; nothing to do outside an executable."""
    boot = sys.modules.get(START)
    if boot is not None:
        boot.load_manifest()


def load_verb(verb: str) -> None:
    """The verb's own modules, loaded the start's way; nothing to do outside an executable."""
    boot = sys.modules.get(START)
    if boot is not None:
        boot.load_verb(verb)


def verb_of(args: list[str]) -> str:
    """The verb as a failure line names it (`` <verb>``, or ``""``), in the start's words: a call fails
    alike whether the start or the library words it."""
    boot = sys.modules.get(START)
    if boot is not None:
        found: str = boot.verb_of(args)
        return found
    from resource_extend.boot.start import verb_of as start_verb_of  # a checkout: the same function, from source

    return start_verb_of(args)


def precompiled() -> bool | None:
    """Whether the start loaded compiled code tables (True), compiles the sources (False), or there is no
    start (None: a checkout)."""
    boot = sys.modules.get(START)
    return None if boot is None else bool(getattr(boot, "PRECOMPILED", False))
