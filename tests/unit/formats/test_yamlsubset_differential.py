"""Differential test: every file the config fast path accepts, it reads exactly as PyYAML's safe loaders do.

Generated configs mix the shapes operators write with the classes of input where a hand-written YAML
reader goes wrong (issue 11): Unicode spaces and line breaks, C0 controls, tabs, quotes inside plain and
flow scalars, comments, anchors, block/flow mixes, document markers and JSON-looking files. A file the
fast path accepts must load with PyYAML's pure and C safe loaders, to the same value with the same types
(1, 1.0 and True differ). Files it refuses go to PyYAML anyway, so refusing is always allowed.

``make test`` and ``make check`` run 500 generated files, ``make test-deep`` 5,000 (``tests.support.examples``);
``YAML_DIFF_EXAMPLES=100000`` makes a long hunt. Every divergence ever found is kept in DIVERGENCES below and
checked on every run.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from resource_extend.formats import yamlsubset
from tests.support import examples

EXAMPLES = int(os.environ.get("YAML_DIFF_EXAMPLES", examples(5000)))

# The classes: Unicode spaces, C0 controls YAML treats specially or refuses, line breaks
# PyYAML knows (NEL, U+2028, U+2029, \r), a BOM, DEL, non-ASCII letters.
UNICODE_SPACES = ["\xa0", "\u3000", "\u2000", "\u2005", "\u200a", "\u202f", "\u205f", "\u1680", "\ufeff"]
CONTROLS = ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x1f", "\x00", "\x07", "\x1b", "\x7f", "\x85"]
BREAKS = ["\n", "\r\n", "\r", "\x85", "\u2028", "\u2029"]
NOISE = [*UNICODE_SPACES, *CONTROLS, *BREAKS, "\t", " ", "'", '"', "#", ":", ",", "[", "]", "{", "}", "&", "*",
         "!", "|", ">", "-", "?", "%", "@", "`", "\\", "é", "~", "=", "<<"]  # fmt: skip

KEYS = ["etcd", "machines", "prefix", "auth", "username", "password", "scheduler", "max_deploy_count", "ca",
        "cert", "key", "transport", "total_timeout", "on", "null", "Yes", "1", "a b", "key_2", "x-y", "a.b",
        "<<", "_", "? x", "'q'", '"d"', "y", "n", "~"]  # fmt: skip
WORDS = [
    "http://127.0.0.1:2379", "https://10.0.0.1:2379", "/eru", "/eru-gpu", "10000", "-5", "+7", "0", "-0", "00",
    "012", "1.5", "-0.0", "01.5", "1.", ".5", "1e3", "1.0e+3", "1_000", "0x1f", "0o17", "0b101", "190:20:30",
    "1:2", "0:30", ".inf", "-.inf", ".nan", "NaN", "Infinity", "yes", "No", "off", "ON", "true", "FALSE", "y",
    "n", "~", "null", "Null", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43", "5GiB", "30s",
    "p@ss#word", "a#b", "it's", 'say"hi"', "a'b", "c'd", "a:b", "a::b", "=", "<<", "grpc", "gateway", "x?y",
    "a,b", "a b", "a  b", "\\n", "é", "_x", "/", "-", "--", "---", "...", "%x", "@x", "`x", "!x", "&x", "*x",
]  # fmt: skip


@st.composite
def noisy(draw: st.DrawFn, word: str, odds: int = 12) -> str:
    """``word``, one time in ``odds`` with a character of the hostile classes inserted (never if 0)."""
    if not odds or draw(st.integers(0, odds)):
        return word
    char = draw(st.sampled_from(NOISE))
    at = draw(st.integers(0, len(word)))
    return word[:at] + char + word[at:]


@st.composite
def scalars(draw: st.DrawFn, odds: int = 12) -> str:
    word = draw(noisy(draw(st.sampled_from(WORDS)), odds))
    style = draw(st.sampled_from(["plain", "plain", "plain", "single", "double", "flow", "flow-quoted"]))
    if style == "single":
        return "'" + word.replace("'", draw(st.sampled_from(["''", "'"]))) + "'"
    if style == "double":
        return '"' + word.replace('"', draw(st.sampled_from(['\\"', '"']))) + '"'
    if style.startswith("flow"):
        items = [draw(noisy(w, odds)) for w in draw(st.lists(st.sampled_from(WORDS), max_size=4))]
        if style == "flow-quoted":
            items = [draw(st.sampled_from(["'", '"', ""])) + i + draw(st.sampled_from(["'", '"', ""])) for i in items]
        sep = draw(st.sampled_from([", ", ",", " , ", ",\t", ", \xa0"]))
        return "[" + sep.join(items) + draw(st.sampled_from(["]", "]", ",]", " ]", ""])) + ""
    return word


@st.composite
def block_documents(draw: st.DrawFn) -> str:
    lines = []
    if draw(st.integers(0, 9)) == 0:
        lines.append(draw(st.sampled_from(["---", "--- ", "%YAML 1.1\n---", "--- # c", "...", "---\t"])))
    for _ in range(draw(st.integers(1, 10))):
        indent = draw(st.sampled_from(["", "", "  ", "  ", "    ", " ", "   ", "\t", " \t", "\xa0"]))
        kind = draw(st.sampled_from(["entry", "entry", "entry", "open", "item", "comment", "blank", "anchor"]))
        key = draw(noisy(draw(st.sampled_from(KEYS))))
        colon = draw(st.sampled_from([": ", ": ", ":  ", ":", ":\t", ": \xa0", " : "]))
        tail = draw(st.sampled_from(["", "", "", " # note", "# x", "  #", " #\xa0c", "\t# t", " ", "\xa0", "\u3000"]))
        if kind == "entry":
            lines.append(f"{indent}{key}{colon}{draw(scalars())}{tail}")
        elif kind == "open":
            lines.append(f"{indent}{key}:{tail}")
        elif kind == "item":
            dash = draw(st.sampled_from(["- ", "- ", "-\t", "-", "-  ", "- - "]))
            lines.append(f"{indent}{dash}{draw(scalars())}{tail}")
        elif kind == "comment":
            lines.append(f"{indent}#{draw(noisy(draw(st.sampled_from(WORDS))))}")
        elif kind == "anchor":
            lines.append(f"{indent}{key}: {draw(st.sampled_from(['&a ', '*a', '!!str ', '|', '>', '? ']))}x")
        else:
            lines.append(draw(st.sampled_from(["", " ", "\t", "\xa0"])))
    breaks = draw(st.sampled_from([["\n"], ["\n"], ["\n"], BREAKS]))
    out = ""
    for line in lines:
        out += line + draw(st.sampled_from(breaks))
    return out[: -1 if draw(st.booleans()) and out.endswith("\n") else None]


@st.composite
def rendered_documents(draw: st.DrawFn) -> str:
    """A well-formed config as an operator writes it, then zero to three small edits from the classes."""
    lines: list[str] = []
    clean = draw(st.booleans())  # half the files hold no hostile character but the edits below
    odds = 0 if clean else 12

    def mapping(indent: str, depth: int) -> None:
        for _ in range(draw(st.integers(1, 4))):
            key = draw(st.sampled_from(KEYS[:13] if draw(st.integers(0, 4)) else KEYS))
            shape = draw(st.sampled_from(["scalar", "scalar", "scalar", "map", "seq", "seq-flush", "null"]))
            if shape == "map" and depth < 3:
                lines.append(f"{indent}{key}:")
                mapping(indent + draw(st.sampled_from(["  ", "    ", " "])), depth + 1)
            elif shape.startswith("seq"):
                lines.append(f"{indent}{key}:")
                inner = indent if shape == "seq-flush" else indent + draw(st.sampled_from(["  ", "    "]))
                for _ in range(draw(st.integers(1, 3))):
                    lines.append(f"{inner}- {draw(scalars(odds))}")
            elif shape == "null":
                lines.append(f"{indent}{key}:{draw(st.sampled_from(['', ' ', ' # none']))}")
            else:
                comment = draw(st.sampled_from(["", "", " # why", "  #x"]))
                lines.append(f"{indent}{key}: {draw(scalars(odds))}{comment}")
            if draw(st.integers(0, 5)) == 0:
                lines.append(draw(st.sampled_from(["", "# note", indent + "# indented note", "   "])))

    mapping("", 0)
    text = "\n".join(lines) + "\n"
    for _ in range(draw(st.sampled_from([0, 0, 0, 1] if clean else [0, 1, 2, 3]))):
        at = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from(NOISE))
        if draw(st.booleans()) and at < len(text):
            text = text[:at] + char + text[at + 1 :]  # replace
        else:
            text = text[:at] + char + text[at:]  # insert
    return text


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([1.5, -0.0, 0.25, 1e3, 1e-7, 2.0])
    | st.sampled_from(WORDS)
    | st.text(st.sampled_from(["a", " ", ":", "#", "'", '"', "\\", "\t", "é", "\xa0", "/"])),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def json_documents(draw: st.DrawFn) -> str:
    doc = draw(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=4))
    text = json.dumps(
        doc,
        indent=draw(st.sampled_from([None, 2, "\t"])),
        ensure_ascii=draw(st.booleans()),
        separators=draw(st.sampled_from([None, (",", ":"), (", ", ": "), (" ,", " : ")])),
    )
    mutation = draw(st.sampled_from(["none", "none", "nan", "inf", "exp", "tab", "colon-line", "comment", "lead"]))
    if mutation == "nan":
        text = text[:-1] + (', "z": NaN}' if len(text) > 2 else '"z": NaN}')
    elif mutation == "inf":
        text = text[:-1] + (', "z": -Infinity}' if len(text) > 2 else '"z": Infinity}')
    elif mutation == "exp":
        text = text[:-1] + (', "z": 1E+3}' if len(text) > 2 else '"z": 1e3}')
    elif mutation == "tab":
        text = text.replace(" ", "\t", 1)
    elif mutation == "colon-line":
        text = text.replace('":', '"\n:', 1)
    elif mutation == "comment":
        text += " # c"
    elif mutation == "lead":
        text = draw(st.sampled_from(["\n", "  ", "\ufeff", "\xa0", "# c\n"])) + text
    return text


def loaders() -> list[Any]:
    """The reading the fast path must match: ``yaml.safe_load``'s (decision 15). libyaml's CSafeLoader reads
    some files otherwise (a tab inside a plain scalar, ``a: !``) and the plugins never use it (issue 20)."""
    return [yaml.SafeLoader]


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down: 1, 1.0 and True are three different values."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return bool(a == b)


def assert_fast_path_exact(text: str) -> None:
    try:
        ours = yamlsubset.parse(text)
    except yamlsubset.Unsupported:
        return
    for loader in loaders():
        try:
            theirs = yaml.load(text, Loader=loader)  # a safe loader
        except yaml.YAMLError as exc:
            pytest.fail(f"fast path accepted {text!r} as {ours!r}; {loader.__name__} refuses it: {exc}")
        assert same(ours, theirs), f"{text!r}: fast path {ours!r}, {loader.__name__} {theirs!r}"


# Every divergence found so far (issue 11 and this generator), kept as fixed examples.
DIVERGENCES = [
    "etcd:\n  password: secret\xa0\n",
    "etcd:\n  prefix: /eru\u3000\n",
    "etcd:\n  prefix: /eru\u2005\n",
    "etcd:\n  prefix: /eru\u202f\n",
    "etcd:\n  prefix: \u205f/eru\n",
    "etcd:\n  prefix: /eru\u1680\n",
    "a: b\v\n",
    "a: b\f\n",
    "a: \x1cb\n",
    "a: b\x1f\n",
    "a: [a'b, c'd]\n",
    'a: [a"b, c"d]\n',
    "a: b\x85c: d\n",
    "a: b\u2028c: d\n",
    "a: b\u2029c: d\n",
    "a:\n-\tb\n",
    "a: 'x\x07y'\n",
    'a: "x\x1by"\n',
    "a: 'b'\xa0\n",
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": -Infinity}',
    '{"a": 1e3}',
    '{"a": 1E+3}',
    '{"a"\n: 1}',
    '{\t"a": 1}',
    '{"a": "\\ud83d\\ude00"}',
    '{"a": "\\u0085"}',
    "a: b\r\nc: d\r\n",
    "a: b\rc: d\n",
    "\ufeffa: b\n",
    "a: 'b'#c\n",
    "a: [b]#c\n",
    "a: b #c\n  d\n",
    "a: b\n  c\n",
    "a:\n- b\n  c\n",
    "a: x?y\n",
    "a: [x?y]\n",
    "a: [a:b, c]\n",
    "a: [a: b]\n",
    "a: [b,]\n",
    "a: 1.\n",
    "a: -.inf\n",
    "a: 1:2\n",
    "a: 00\n",
    "a: -\n",
    "y: n\n",
    "'q': 1\n",
]


@pytest.mark.parametrize("text", DIVERGENCES)
def test_every_divergence_found_so_far_is_refused_or_read_as_pyyaml_does(text: str) -> None:
    assert_fast_path_exact(text)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(rendered_documents(), rendered_documents(), block_documents(), json_documents()))
@example("etcd:\n  machines: [http://a:2379, 'b']\n")
def test_what_the_fast_path_accepts_it_reads_as_pyyaml_does(text: str) -> None:
    assert_fast_path_exact(text)


PLAUSIBLE = [
    "etcd:\n  machines:\n    - http://10.0.0.1:2379\n    - 'https://10.0.0.2:2379'\n  prefix: /eru\n",
    "etcd:\n  machines: [http://a:2379, http://b:2379]\n  auth:\n    username: eru\n    password: 'p@ss#w''d'\n",
    '# core\nlog_level: info\netcd:\n  machines:\n  - "http://a:2379"  # first\nscheduler:\n  max_deploy_count: 20\n',
    '{"etcd": {"machines": ["http://a:2379"], "prefix": "/p", "total_timeout": 2.5}}',
    "---\netcd:\n  machines: [http://a:2379]\n  dial_timeout: 1.5\n  transport: grpc\n",
]


@pytest.mark.parametrize("text", PLAUSIBLE)
def test_plausible_configs_take_the_fast_path(text: str) -> None:
    # The fast path is worth having only if the configs operators write take it.
    assert same(yamlsubset.parse(text), yaml.load(text, Loader=yaml.SafeLoader))
