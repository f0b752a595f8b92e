"""What yamlsubset reads only off its fast path: a config written as JSON, and a plain scalar made only of
characters some YAML 1.1 implicit type uses, which PyYAML's regular expression decides (loading ``re``).
yamlsubset imports this module only then, so a call reading a plain block-style config never loads it.
"""

from __future__ import annotations

from resource_extend import jsonio
from resource_extend.yamlsubset import Unsupported, _is_simple_float

TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Pattern
    from typing import Any

# PyYAML's implicit resolvers (resolver.py, YAML 1.1) for every type other than str: a plain scalar
# matching one of these that is not a kept form above is refused.
IMPLICIT = r"""(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)\Z
    |(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z
    |(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\Z
    |<<\Z|(?:~|null|Null|NULL|)\Z
    |(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\Z
    |=\Z"""
_implicit: list[Pattern[str]] = []


def implicit(text: str) -> bool:
    """Whether PyYAML resolves the plain scalar ``text`` to a type other than str (yamlsubset._is_implicit)."""
    if not _implicit:
        import re

        _implicit.append(re.compile(IMPLICIT, re.X))
    return _implicit[0].match(text) is not None


# -- JSON (which is YAML 1.2, and nearly 1.1) -------------------------------------------------------------


def json_config(text: str) -> Any:
    """A JSON object, when PyYAML reads its text the same: no backslash escapes (surrogates, \\u0085),
    no number beyond ``-?digits[.digits]`` (PyYAML reads 1e3 as a string), no key split from its ':'
    by a line break and no long key (PyYAML's simple keys), and no tab (PyYAML's flow whitespace)."""
    if "\\" in text or _key_split_or_long(text):
        raise Unsupported("JSON beyond what PyYAML reads alike")
    try:
        return jsonio.loads(text, parse_float=_json_float, parse_constant=_json_refuse)
    except ValueError:
        raise Unsupported("not JSON") from None


def _key_split_or_long(text: str) -> bool:
    """A quote followed by spaces and line breaks (at least one) and then ':', or by 512 characters that
    are neither a quote nor a line break (the regular expressions ``"[ \\n]*\\n[ \\n]*:`` and
    ``"[^"\\n]{512}``, searched anywhere)."""
    at = text.find('"')
    while at >= 0:
        after = end = at + 1
        while end < len(text) and text[end] in " \n":
            end += 1
        if text[end : end + 1] == ":" and "\n" in text[after:end]:
            return True
        quote, newline = text.find('"', after), text.find("\n", after)
        run_end = min(i for i in (quote, newline, len(text)) if i >= 0)
        if run_end - after >= 512:
            return True
        at = quote
    return False


def _json_float(text: str) -> float:
    if not _is_simple_float(text):
        raise Unsupported("a JSON number PyYAML reads differently")
    return float(text)


def _json_refuse(text: str) -> Any:
    raise Unsupported(f"JSON {text}")
