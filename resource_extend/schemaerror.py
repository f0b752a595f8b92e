"""The exception classes that build-time compiled validators raise.

fastjsonschema's generated code imports these names from its own package; build.py points that import
here instead, so an executable validates without importing fastjsonschema on each call.
"""

from __future__ import annotations

from resource_extend.decoding import ascii_digits, control_character

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


class NeverDecimal:
    """What the compiled validators check numbers against instead of ``decimal.Decimal`` (build.py):
    requests and records come from ``json.loads``, which never makes a Decimal, so nothing is an instance."""

    __slots__ = ()


class _Pattern:
    """A compiled-regex stand-in: ``search`` over a whole string, answered by a plain function."""

    __slots__ = ("_test",)

    def __init__(self, test: Callable[[str], bool]) -> None:
        self._test = test

    def search(self, text: str) -> bool | None:
        return True if self._test(text) else None


def _absolute_path(text: str) -> bool:
    # '/' first, then no ':' or ',' and no C0/C1 control character.
    return text[:1] == "/" and ":" not in text and "," not in text and control_character(text) is None


# The patterns the schemas use (as fastjsonschema compiles them: '$' becomes '\Z'), each answered without
# loading ``re`` (with enum and functools, several milliseconds of a call). tests/unit/test_schemaerror.py
# holds every entry to the regular expression it stands for, and every schema pattern to having an entry.
KNOWN_PATTERNS: dict[str, Callable[[str], bool]] = {
    "^[0-9]+\\Z": ascii_digits,
    "^-?[0-9]+\\Z": lambda text: ascii_digits(text[1:] if text[:1] == "-" else text),
    "^/[^:,\\u0000-\\u001f\\u007f-\\u009f]*\\Z": _absolute_path,
}


class LazyPatterns:
    """The generated validators' ``REGEX_PATTERNS``: known patterns as functions, any other compiled by
    ``re`` the first time a value is checked against it."""

    __slots__ = ("_found", "_sources")

    def __init__(self, sources: dict[str, str]) -> None:
        self._sources = sources
        self._found: dict[str, Any] = {}

    def __getitem__(self, pattern: str) -> Any:
        found = self._found.get(pattern)
        if found is None:
            source = self._sources[pattern]
            test = KNOWN_PATTERNS.get(source)
            if test is not None:
                found = _Pattern(test)
            else:
                import re

                found = re.compile(source)
            self._found[pattern] = found
        return found
