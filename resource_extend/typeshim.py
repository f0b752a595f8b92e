"""Run-time stand-ins for what the call path's classes took from ``typing`` and ``dataclasses``.

Core runs the plugin once per call, so every import is paid on every call: ``typing`` and ``dataclasses``
(with the ``inspect`` it pulls in) cost more than serving the call (issue 13). The type checker reads
the real ``typing`` names under ``if TYPE_CHECKING:``; at run time these take their place. No imports.
A protocol has no stand-in: it is defined under ``if TYPE_CHECKING:`` too, since each class a call creates
costs it as much as loading ~4 KB of code.
"""

from __future__ import annotations


class Generic:
    """``typing.Generic`` at run time: a subscript such as ``Call[R]`` is only read by the type checker."""

    __slots__ = ()

    def __class_getitem__(cls, _item: object) -> type:
        return cls


class Fields:
    """Equality and repr over ``__slots__`` in order, as ``@dataclass`` gave the classes this replaces.

    Defining ``__eq__`` alone leaves ``__hash__`` None: instances are mutable, so unhashable, as a dataclass
    with ``eq`` is.
    """

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"
