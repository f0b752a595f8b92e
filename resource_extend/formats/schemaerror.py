"""The exception classes that build-time compiled validators raise, and the stand-ins of what else they import.

fastjsonschema's generated code imports these names from its own package; build.py points that import
here instead, so an executable validates without importing fastjsonschema on each call.
"""

from __future__ import annotations

import sys

from resource_extend.formats.decoding import ascii_digits, control_character

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


class JsonSchemaValueException(ValueError):
    def __init__(
        self,
        message: str,
        value: Any = None,
        name: str | None = None,
        definition: Any = None,
        rule: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.value = value
        self.name = name
        self.definition = definition
        self.rule = rule


class JsonSchemaValuesException(ValueError):
    def __init__(self, errors: list[JsonSchemaValueException]) -> None:
        self.message = "; ".join(error.message for error in errors)
        super().__init__(self.message)
        self.errors = errors


# What the compiled validators check numbers against instead of ``decimal.Decimal`` (build.py): requests and
# records come from ``json.loads``, which never makes a Decimal, so nothing is an instance. An empty tuple, not
# a class: ``isinstance(x, (int, float, ()))`` is ``isinstance(x, (int, float))``, and a class costs a call as
# much as loading ~4 KB of code.
NeverDecimal = ()

# A compiled regex's stand-in, an object whose ``search`` answers through a plain function: the interpreter's
# SimpleNamespace (sys is loaded already, the types module that names it is not), so again no class of ours.
if TYPE_CHECKING:
    from types import SimpleNamespace as _Namespace
else:
    _Namespace = type(sys.implementation)


def _absolute_path(text: str) -> bool:
    # '/' first, then no ':' or ',' and no C0/C1 control character.
    return text[:1] == "/" and ":" not in text and "," not in text and control_character(text) is None


# The patterns the schemas use (as fastjsonschema compiles them: '$' becomes '\Z'), each answered without
# loading ``re`` (with enum and functools, several milliseconds of a call). tests/unit/formats/test_schemaerror.py
# holds every entry to the regular expression it stands for, and every schema pattern to having an entry.
KNOWN_PATTERNS: dict[str, Callable[[str], bool]] = {
    "^[0-9]+\\Z": ascii_digits,
    "^-?[0-9]+\\Z": lambda text: ascii_digits(text[1:] if text[:1] == "-" else text),
    "^/[^:,\\u0000-\\u001f\\u007f-\\u009f]*\\Z": _absolute_path,
}


def LazyPatterns(sources: dict[str, str]) -> dict[str, Any]:  # the name build.py writes
    """The generated validators' ``REGEX_PATTERNS``, made when the validator loads: the schemas' own
    patterns answered by plain functions, any other compiled by ``re`` (a schema of a plugin kept elsewhere)."""
    found: dict[str, Any] = {}
    for pattern, source in sources.items():
        test = KNOWN_PATTERNS.get(source)
        if test is not None:
            found[pattern] = _Namespace(search=lambda text, test=test: True if test(text) else None)
        else:
            import re

            found[pattern] = re.compile(source)
    return found
