"""The exception classes that build-time compiled validators raise.

fastjsonschema's generated code imports these names from its own package; build.py points that import
here instead, so an executable validates without importing fastjsonschema on each call.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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
