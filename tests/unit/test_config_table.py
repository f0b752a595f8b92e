"""Every rule of the config loader as a table: the yaml (or the environment and ``--config``) given, and the
values read or the words of the refusal (spec decision 15, docs/configuration.md).

Each row is written to a real file and read by ``load``, as a call reads it, so the yaml reading, the checks
and the message are the ones an operator sees. Every accepted row checks every value the plugins read, so
a changed default fails every row. Some rows exist because mutation testing found rules no other test held
(issue 31): a single URL string for ``etcd.machines``, an ``HTTPS://`` endpoint in capitals, an empty
``$ERU_RESOURCE_CONFIG_PATH``.
"""

from __future__ import annotations

import os
import posix
from pathlib import Path
from typing import Any

import pytest

from resource_extend.config import CONFIG_ENV, MAX_CONFIG_BYTES, Config, EtcdConfig, config_path, load
from resource_extend.errors import PluginError

GOOD = "http://127.0.0.1:2379"
BASE = f"etcd:\n  machines: [{GOOD}]\n"

# What a file naming only one http:// endpoint reads as: written out, not taken from config.py, so that a
# changed default fails here (and docs/configuration.md's table says the same numbers).
DEFAULTS: dict[str, Any] = {
    "machines": (GOOD,),
    "endpoints": [("http", "127.0.0.1", 2379, False)],
    "prefix": "/eru",
    "ca": "",
    "cert": "",
    "key": "",
    "client_certificate": False,
    "username": "",
    "password": "",
    "transport": "gateway",
    "dial_timeout": 2.0,
    "request_timeout": 5.0,
    "total_timeout": 8.0,
    "max_deploy_count": 10000,
    "max_deploy_work": 50000,
    "max_workload_items": 100,
    "max_nodes_per_call": 10000,
    "max_stdin_bytes": 4194304,
}

# key: (lowest, highest) each scheduler bound accepts (docs/configuration.md's table).
BOUND_RANGES = {
    "max_deploy_count": (1, 1_000_000),
    "max_deploy_work": (1, 100_000_000),
    "max_workload_items": (1, 1_000_000),
    "max_nodes_per_call": (1, 10_000_000),
    "max_stdin_bytes": (1024, 1 << 30),
}
TIMEOUTS = ("dial_timeout", "request_timeout", "total_timeout")


def values(loaded: Config) -> dict[str, Any]:
    """Everything of a loaded config that the plugins read, in DEFAULTS' shape."""
    etcd, bounds = loaded.etcd, loaded.bounds
    return {
        "machines": etcd.machines,
        "endpoints": [(e.scheme, e.host, e.port, e.tls) for e in etcd.endpoints],
        "prefix": etcd.prefix,
        "ca": etcd.ca,
        "cert": etcd.cert,
        "key": etcd.key,
        "client_certificate": etcd.client_certificate,
        "username": etcd.username,
        "password": etcd.password,
        "transport": etcd.transport,
        **{name: getattr(etcd, name) for name in TIMEOUTS},
        **{name: getattr(bounds, name) for name in BOUND_RANGES},
    }


class Files:
    """A readable file (``$PEM``) and a path with nothing at it (``$MISSING``) for rows naming TLS files."""

    def __init__(self, tmp_path: Path) -> None:
        self.pem = tmp_path / "tls.pem"
        self.pem.write_text("-----BEGIN CERTIFICATE-----\n")
        self.missing = tmp_path / "nowhere.pem"

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("$PEM", str(self.pem)).replace("$MISSING", str(self.missing))
        if isinstance(value, tuple):
            return tuple(self.fill(v) for v in value)
        return value


def load_text(tmp_path: Path, text: str | bytes) -> Config:
    path = tmp_path / "gpu.yaml"
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return load("gpu", str(path))


def refusal(tmp_path: Path, text: str | bytes) -> str:
    """The refusal's message, after checking its form: one line, ``config <path>: `` once, at the start."""
    with pytest.raises(PluginError) as caught:
        load_text(tmp_path, text)
    message, named = str(caught.value), f"config {tmp_path / 'gpu.yaml'}: "
    assert message.startswith(named) and message.count(named) == 1 and "\n" not in message, message
    return message


# -- what is accepted, and what it reads as -----------------------------------------------------------------

ACCEPTED: list[Any] = [
    # etcd.machines
    pytest.param(BASE, {}, id="a flow list of one URL"),
    pytest.param(
        "etcd:\n  machines:\n    - http://a:1\n    - https://b\n",
        {"machines": ("http://a:1", "https://b"), "endpoints": [("http", "a", 1, False), ("https", "b", 2379, True)]},
        id="a block list of URLs, port 2379 by default",
    ),
    pytest.param(f"etcd:\n  machines: {GOOD}\n", {}, id="a single URL string is a list of that one URL"),
    pytest.param(
        "etcd:\n  machines: 'https://e1:2380'\n",
        {"machines": ("https://e1:2380",), "endpoints": [("https", "e1", 2380, True)]},
        id="a single quoted https URL string",
    ),
    pytest.param(f"etcd:\n  machines: {GOOD}  # \u00e9\n", {}, id="a single URL string read by PyYAML"),
    pytest.param(f'{{"etcd": {{"machines": "{GOOD}"}}}}', {}, id="a single URL string in JSON"),
    pytest.param(
        "etcd:\n  machines: [HTTPS://E1, Http://e2:1]\n",
        {
            "machines": ("HTTPS://E1", "Http://e2:1"),
            "endpoints": [("https", "E1", 2379, True), ("http", "e2", 1, False)],
        },
        id="the scheme in any case, kept as written in machines",
    ),
    pytest.param(
        "etcd:\n  machines: ['http://[::1]:2379/', 'http://a:65535']\n",
        {
            "machines": ("http://[::1]:2379/", "http://a:65535"),
            "endpoints": [("http", "::1", 2379, False), ("http", "a", 65535, False)],
        },
        id="an IPv6 address with a trailing slash, the highest port",
    ),
    # etcd.prefix
    pytest.param(BASE + "  prefix: /p/q\n", {"prefix": "/p/q"}, id="a prefix"),
    pytest.param(BASE + "  prefix: eru\n", {"prefix": "eru"}, id="a prefix without a slash, as written"),
    pytest.param(BASE + "  prefix: ~\n", {}, id="a null prefix is the default"),
    pytest.param(BASE + "  prefix: !\n", {}, id="an empty tag is null, so the default prefix"),
    # etcd.transport
    pytest.param(BASE + "  transport: grpc\n", {"transport": "grpc"}, id="transport grpc"),
    pytest.param(BASE + "  transport: gateway\n", {}, id="transport gateway"),
    pytest.param(BASE + "  transport: null\n", {}, id="a null transport is the gateway"),
    # timeouts
    pytest.param(
        BASE + "  dial_timeout: 3\n  request_timeout: 0.25\n  total_timeout: 30\n",
        {"dial_timeout": 3.0, "request_timeout": 0.25, "total_timeout": 30.0},
        id="timeouts in seconds, integers as floats",
    ),
    pytest.param(
        BASE + "  dial_timeout: ~\n  request_timeout: ~\n  total_timeout: ~\n", {}, id="null timeouts are the defaults"
    ),
    pytest.param(
        BASE + "  total_timeout: 1.0e+300\n  dial_timeout: 0.000001\n",
        {"total_timeout": 1e300, "dial_timeout": 1e-6},
        id="any finite positive timeout",
    ),
    # TLS files
    pytest.param(
        "etcd:\n  machines: [https://e1]\n  ca: $PEM\n",
        {"machines": ("https://e1",), "endpoints": [("https", "e1", 2379, True)], "ca": "$PEM"},
        id="a CA file for an https endpoint",
    ),
    pytest.param(
        "etcd:\n  machines: [https://e1]\n  cert: $PEM\n  key: $PEM\n",
        {
            "machines": ("https://e1",),
            "endpoints": [("https", "e1", 2379, True)],
            "cert": "$PEM",
            "key": "$PEM",
            "client_certificate": True,
        },
        id="a client certificate and its key",
    ),
    pytest.param(
        BASE + "  ca: $MISSING\n  cert: $MISSING\n  key: $MISSING\n",
        {"ca": "$MISSING", "cert": "$MISSING", "key": "$MISSING", "client_certificate": True},
        id="TLS files are not checked when no endpoint is https",
    ),
    pytest.param(BASE + "  ca: ~\n  cert: ~\n  key: ~\n", {}, id="null TLS files are unset"),
    pytest.param(BASE + "  cert: ''\n  key: ''\n", {}, id="empty TLS files are unset"),
    # etcd.auth
    pytest.param(
        BASE + "  auth:\n    username: eru\n    password: s3cret\n",
        {"username": "eru", "password": "s3cret"},
        id="a user and password",
    ),
    pytest.param(BASE + "  auth:\n    username: eru\n", {"username": "eru"}, id="a user without a password"),
    pytest.param(BASE + "  auth: ~\n", {}, id="a null auth section"),
    pytest.param(BASE + "  auth:\n    username: ~\n    password: ~\n", {}, id="a null user and password"),
    # sections and core's keys
    pytest.param(BASE + "  lock_prefix: __lock__/eru\n", {}, id="core's etcd.lock_prefix is ignored"),
    pytest.param(BASE + "scheduler:\n  maxshare: -1\n  sharebase: 100\n", {}, id="core's scheduler keys are ignored"),
    pytest.param(BASE + "scheduler: ~\n", {}, id="a null scheduler section"),
    pytest.param(
        "log_level: info\ndocker:\n  network_mode: bridge\n  machine: x\n" + BASE,
        {},
        id="other sections are core's, unknown keys in them too",
    ),
    # how the file is read
    pytest.param(f'{{"etcd": {{"machines": ["{GOOD}"], "prefix": "/j"}}}}', {"prefix": "/j"}, id="a JSON file"),
    pytest.param(BASE.replace("\n", "\r\n") + "  prefix: /crlf\r\n", {"prefix": "/crlf"}, id="CRLF line ends"),
    pytest.param(
        f"base: &e\n  machines: [{GOOD}]\n  prefix: /anchored\netcd: *e\n", {"prefix": "/anchored"}, id="an alias"
    ),
    pytest.param(BASE + "  prefix: /\u00e9ru\n", {"prefix": "/\u00e9ru"}, id="a non-ASCII prefix"),
]
ACCEPTED += [
    pytest.param(
        BASE + f"scheduler:\n  {key}: {value}\n",
        {key: value},
        id=f"scheduler.{key} at {'its lowest' if i else 'its highest'}",
    )
    for key, (low, high) in BOUND_RANGES.items()
    for i, value in enumerate((high, low))
] + [pytest.param(BASE + f"scheduler:\n  {key}: ~\n", {}, id=f"a null scheduler.{key}") for key in BOUND_RANGES]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_an_accepted_file_reads_as_its_table_row(tmp_path: Path, text: str, expected: dict[str, Any]) -> None:
    files = Files(tmp_path)
    loaded = load_text(tmp_path, files.fill(text))
    want = {**DEFAULTS, **{name: files.fill(value) for name, value in expected.items()}}
    assert values(loaded) == want
    assert all(type(getattr(loaded.etcd, name)) is float for name in TIMEOUTS)
    assert all(type(getattr(loaded.bounds, name)) is int for name in BOUND_RANGES)
    assert loaded.path == str(tmp_path / "gpu.yaml") and loaded.bounds.path == loaded.path


def test_the_whole_document_is_kept_for_core_s_sections(tmp_path: Path) -> None:
    loaded = load_text(tmp_path, "log_level: info\n" + BASE)
    assert loaded.raw == {"log_level": "info", "etcd": {"machines": [GOOD]}}


# -- what is refused, and the words that say why ----------------------------------------------------------

REQUIRED = "etcd.machines: Machines is required, but blank"
NOT_A_LIST = "etcd.machines must be a list of URLs"


def bad_url(url: str) -> str:
    return f"etcd.machines: {url!r} is not an http://host[:port] or https://host[:port] URL"


def bad_seconds(key: str, shown: str) -> str:
    return f"etcd.{key}: {shown} is not a finite number of seconds > 0"


REFUSED: list[Any] = [
    # the document
    pytest.param("", REQUIRED, id="an empty file"),
    pytest.param("~\n", REQUIRED, id="a null document"),
    pytest.param("# nothing but a comment\n", REQUIRED, id="only a comment"),
    pytest.param("- etcd\n", "the top level must be a mapping", id="a list at the top"),
    pytest.param("etcd\n", "the top level must be a mapping", id="a word at the top"),
    pytest.param("etcd:\n  machines: [a\n", "invalid YAML at line 3, column 1: expected ',' or ']'", id="bad YAML"),
    pytest.param(
        "etcd:\n\tmachines: x\n", "invalid YAML at line 2, column 1: found character '\\t'", id="a tab indent"
    ),
    pytest.param(
        BASE + "  total_timeout: 2001-02-30\n",
        "invalid YAML: ValueError: day is out of range for month",
        id="a bad date",
    ),
    # sections
    pytest.param("etcd:\n", REQUIRED, id="a null etcd section"),
    pytest.param("scheduler:\n  max_deploy_count: 3\n", REQUIRED, id="no etcd section"),
    pytest.param("etcd: []\n", "etcd must be a mapping", id="an etcd list"),
    pytest.param("etcd: x\n", "etcd must be a mapping", id="an etcd word"),
    pytest.param(BASE + "  auth: x\n", "etcd.auth must be a mapping", id="an auth word"),
    pytest.param(BASE + "  auth: [username]\n", "etcd.auth must be a mapping", id="an auth list"),
    pytest.param(BASE + "scheduler: 3\n", "scheduler must be a mapping", id="a scheduler number"),
    # unknown keys
    pytest.param(
        f"etcd:\n  machine: [{GOOD}]\n", "etcd.machine: unknown key (did you mean etcd.machines?)", id="one letter off"
    ),
    pytest.param(
        BASE + "  requst_timout: 1\n",
        "etcd.requst_timout: unknown key (did you mean etcd.request_timeout?)",
        id="two letters off",
    ),
    pytest.param(BASE + "  MACHINES: x\n", "etcd.MACHINES: unknown key (did you mean etcd.machines?)", id="capitals"),
    pytest.param(
        BASE + "  1: x\n",
        "etcd.1: unknown key (known: machines, prefix, lock_prefix, ca, cert, key, auth, transport, dial_timeout, "
        "request_timeout, total_timeout)",
        id="a number for a key: the known keys",
    ),
    pytest.param(
        BASE + "  endpoints: x\n", "etcd.endpoints: unknown key (known: machines, prefix,", id="far from any key"
    ),
    pytest.param(
        BASE + "  auth:\n    user: u\n", "etcd.auth.user: unknown key (known: username, password)", id="an auth key"
    ),
    pytest.param(
        BASE + "scheduler:\n  max_deploy_cnt: 3\n",
        "scheduler.max_deploy_cnt: unknown key (did you mean scheduler.max_deploy_count?)",
        id="a scheduler key",
    ),
    # etcd.machines
    pytest.param("etcd:\n  prefix: /p\n", REQUIRED, id="no machines"),
    pytest.param("etcd:\n  machines: ~\n", REQUIRED, id="null machines"),
    pytest.param("etcd:\n  machines: []\n", REQUIRED, id="an empty machines list"),
    pytest.param("etcd:\n  machines: ''\n", "etcd.machines", id="an empty machines string"),
    pytest.param("etcd:\n  machines: 5\n", NOT_A_LIST, id="a number"),
    pytest.param("etcd:\n  machines: true\n", NOT_A_LIST, id="a bool"),
    pytest.param("etcd:\n  machines: {a: b}\n", NOT_A_LIST, id="a mapping"),
    pytest.param("etcd:\n  machines: [5]\n", NOT_A_LIST, id="a number in the list"),
    pytest.param(f"etcd:\n  machines: [{GOOD}, '']\n", NOT_A_LIST, id="an empty string in the list"),
    pytest.param(f"etcd:\n  machines: [{GOOD}, ~]\n", NOT_A_LIST, id="a null in the list"),
    pytest.param(f"etcd:\n  machines: [[{GOOD}]]\n", NOT_A_LIST, id="a nested list"),
    pytest.param("etcd:\n  machines: ftp://x\n", bad_url("ftp://x"), id="a single bad URL string"),
    pytest.param(f"etcd:\n  machines: [{GOOD}, ftp://x]\n", bad_url("ftp://x"), id="another scheme"),
    pytest.param("etcd:\n  machines: ['127.0.0.1:2379']\n", bad_url("127.0.0.1:2379"), id="no scheme"),
    pytest.param("etcd:\n  machines: ['http://']\n", bad_url("http://"), id="no host"),
    pytest.param("etcd:\n  machines: ['http://a:0']\n", bad_url("http://a:0"), id="port 0"),
    pytest.param("etcd:\n  machines: ['http://a:65536']\n", bad_url("http://a:65536"), id="port 65536"),
    pytest.param("etcd:\n  machines: ['http://a/v3']\n", bad_url("http://a/v3"), id="a path"),
    pytest.param("etcd:\n  machines: ['http://u@a']\n", bad_url("http://u@a"), id="a user in the URL"),
    # etcd.prefix
    pytest.param(BASE + "  prefix: ''\n", "etcd.prefix: Prefix is required, but blank", id="an empty prefix"),
    pytest.param(BASE + "  prefix: 5\n", "etcd.prefix must be a string", id="a number prefix"),
    pytest.param(BASE + "  prefix: true\n", "etcd.prefix must be a string", id="a bool prefix"),
    pytest.param(BASE + "  prefix: [/a]\n", "etcd.prefix must be a string", id="a list prefix"),
    # etcd.transport
    pytest.param(BASE + "  transport: GRPC\n", "etcd.transport: 'GRPC' is not one of: gateway, grpc", id="GRPC"),
    pytest.param(BASE + "  transport: ''\n", "etcd.transport: '' is not one of: gateway, grpc", id="empty transport"),
    pytest.param(BASE + "  transport: [grpc]\n", "etcd.transport: ['grpc'] is not one of", id="a list transport"),
    # etcd.ca, cert, key
    pytest.param(BASE + "  ca: 5\n", "etcd.ca must be a string", id="a number ca"),
    pytest.param(BASE + "  cert: [a]\n  key: k\n", "etcd.cert must be a string", id="a list cert"),
    pytest.param(BASE + "  cert: c\n  key: true\n", "etcd.key must be a string", id="a bool key"),
    pytest.param(
        BASE + "  cert: $PEM\n",
        "etcd.cert is set without etcd.key: a client certificate needs both (for server-only TLS set just etcd.ca)",
        id="a cert without a key, even over http",
    ),
    pytest.param(
        BASE + "  key: $PEM\n  cert: ''\n",
        "etcd.key is set without etcd.cert: a client certificate needs both",
        id="a key without a cert",
    ),
    # TLS files, checked when any endpoint is https
    pytest.param(
        "etcd:\n  machines: [https://e1]\n  ca: $MISSING\n", "etcd.ca: $MISSING: no such file", id="a missing CA"
    ),
    pytest.param(
        "etcd:\n  machines: [HTTPS://E1]\n  ca: $MISSING\n",
        "etcd.ca: $MISSING: no such file",
        id="a missing CA for an HTTPS endpoint in capitals",
    ),
    pytest.param(
        "etcd:\n  machines: hTTpS://e1\n  ca: $MISSING\n",
        "etcd.ca: $MISSING: no such file",
        id="a missing CA for a single https URL string in mixed case",
    ),
    pytest.param(
        f"etcd:\n  machines: [{GOOD}, https://e2]\n  ca: $MISSING\n",
        "etcd.ca: $MISSING: no such file",
        id="a missing CA when only the second endpoint is https",
    ),
    pytest.param(
        "etcd:\n  machines: [https://e1]\n  cert: $MISSING\n  key: $PEM\n",
        "etcd.cert: $MISSING: no such file",
        id="a missing cert without a CA",
    ),
    pytest.param(
        "etcd:\n  machines: [https://e1]\n  ca: $PEM\n  cert: $PEM\n  key: $MISSING\n",
        "etcd.key: $MISSING: no such file",
        id="a missing key",
    ),
    pytest.param(
        "etcd:\n  machines: [https://e1]\n  ca: $MISSING\n  cert: $MISSING\n  key: $MISSING\n",
        "etcd.ca: $MISSING: no such file",
        id="the CA is named first",
    ),
    # etcd.auth
    pytest.param(
        BASE + "  auth:\n    password: p\n",
        "etcd.auth.password is set without etcd.auth.username",
        id="a password without a user",
    ),
    pytest.param(
        BASE + "  auth:\n    username: ''\n    password: p\n",
        "etcd.auth.password is set without etcd.auth.username",
        id="a password with an empty user",
    ),
    pytest.param(BASE + "  auth:\n    username: 5\n", "etcd.auth.username must be a string", id="a number user"),
    pytest.param(
        BASE + "  auth:\n    username: u\n    password: 1234\n",
        "etcd.auth.password must be a string",
        id="a number password",
    ),
]
REFUSED += [
    pytest.param(BASE + f"  {key}: {text}\n", bad_seconds(key, shown), id=f"{key} {text}")
    for key in TIMEOUTS
    for text, shown in [
        ("0", "0"),
        ("0.0", "0.0"),
        ("-1", "-1"),
        (".nan", "nan"),
        (".inf", "inf"),
        ("-.inf", "-inf"),
        ("true", "True"),
        ("'5'", "'5'"),
        ("5s", "'5s'"),
        ("[1]", "[1]"),
    ]
]
REFUSED += [
    pytest.param(
        BASE + f"scheduler:\n  {key}: {text}\n",
        f"scheduler.{key}: {shown} is not an integer in {low}..{high}",
        id=f"scheduler.{key} {text}",
    )
    for key, (low, high) in BOUND_RANGES.items()
    for text, shown in [
        (str(low - 1), str(low - 1)),
        (str(high + 1), str(high + 1)),
        ("true", "True"),
        (f"{low}.0", f"{float(low)}"),
        (f"'{low}'", f"'{low}'"),
    ]
]


@pytest.mark.parametrize(("text", "words"), REFUSED)
def test_a_refused_file_is_refused_in_its_table_row_s_words(tmp_path: Path, text: str, words: str) -> None:
    files = Files(tmp_path)
    assert files.fill(words) in refusal(tmp_path, files.fill(text))


def test_a_tls_file_the_user_cannot_read_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = Files(tmp_path)
    # The suite may run as root, for whom every file is readable: the kernel's answer is what is replaced.
    access = posix.access
    monkeypatch.setattr(posix, "access", lambda path, mode: path != str(files.pem) and access(path, mode))
    words = refusal(tmp_path, files.fill("etcd:\n  machines: [https://e1]\n  ca: $PEM\n"))
    assert words.endswith(files.fill(": etcd.ca: $PEM: not readable by this user"))


@pytest.mark.parametrize("key", TIMEOUTS)
def test_a_timeout_too_big_for_a_float_is_refused_naming_the_key(tmp_path: Path, key: str) -> None:
    huge = "1" + "0" * 400
    assert bad_seconds(key, huge) in refusal(tmp_path, BASE + f"  {key}: {huge}\n")


# -- the file itself -------------------------------------------------------------------------------------


def test_a_file_of_exactly_the_size_limit_is_read(tmp_path: Path) -> None:
    padding = MAX_CONFIG_BYTES - len(BASE) - 1
    assert values(load_text(tmp_path, BASE + "#" * padding + "\n")) == DEFAULTS
    assert MAX_CONFIG_BYTES == 1 << 20  # the docs' "at most 1 MiB"


def test_a_file_one_byte_past_the_limit_is_refused(tmp_path: Path) -> None:
    words = refusal(tmp_path, BASE + "#" * (MAX_CONFIG_BYTES - len(BASE)) + "\n")
    assert words.endswith(f": {MAX_CONFIG_BYTES + 1} bytes; a config holds at most {MAX_CONFIG_BYTES}")


def test_a_file_that_reads_past_the_limit_though_its_size_says_less_is_refused() -> None:
    # A /proc file says it is empty and reads as megabytes: what fstat said is not what bounds the read.
    kallsyms = "/proc/kallsyms"
    try:
        with open(kallsyms, "rb") as file:
            big = os.fstat(file.fileno()).st_size <= MAX_CONFIG_BYTES < len(file.read(MAX_CONFIG_BYTES + 1))
    except OSError:
        big = False
    if not big:
        pytest.skip(f"{kallsyms} is not a file whose size says less than it reads on this machine")
    with pytest.raises(PluginError) as caught:
        load("gpu", kallsyms)
    assert str(caught.value) == f"config {kallsyms}: more than {MAX_CONFIG_BYTES} bytes"


def loop(tmp_path: Path) -> str:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    return str(tmp_path / "loop")


def below_a_file(tmp_path: Path) -> str:
    (tmp_path / "file").write_text(BASE)
    return str(tmp_path / "file" / "gpu.yaml")


def dangling(tmp_path: Path) -> str:
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    return str(tmp_path / "dangling")


@pytest.mark.parametrize(
    ("where", "words"),
    [
        pytest.param(lambda tmp: str(tmp), ": not a regular file", id="a directory"),
        pytest.param(lambda tmp: "/dev/null", ": not a regular file", id="a device"),
        pytest.param(below_a_file, ": cannot read: Not a directory", id="a path through a file"),
        pytest.param(loop, ": cannot read: Too many levels of symbolic links", id="a symlink loop"),
        pytest.param(
            dangling,
            ": file not found: check the path given",
            id="a dangling symlink",
        ),
    ],
)
def test_a_path_that_is_not_a_readable_file_is_refused_in_one_line(tmp_path: Path, where: Any, words: str) -> None:
    path = where(tmp_path)
    with pytest.raises(PluginError) as caught:
        load("gpu", path)
    message = str(caught.value)
    assert message.startswith(f"config {path}{words}") and "\n" not in message, message


def test_a_symlink_to_a_config_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text(BASE + "  prefix: /linked\n")
    (tmp_path / "gpu.yaml").symlink_to(tmp_path / "real.yaml")
    assert load("gpu", str(tmp_path / "gpu.yaml")).etcd.prefix == "/linked"


# -- which file: --config, then $ERU_RESOURCE_CONFIG_PATH (when not empty), then ./<plugin>.yaml -------------

UNSET = None


@pytest.mark.parametrize(
    ("env", "flag", "plugin", "path"),
    [
        pytest.param(UNSET, None, "gpu", "gpu.yaml", id="nothing given: the working directory's"),
        pytest.param(UNSET, None, "storage", "storage.yaml", id="the plugin's own name"),
        pytest.param("", None, "gpu", "gpu.yaml", id="an empty variable is unset"),
        pytest.param("/e/gpu.yaml", None, "gpu", "/e/gpu.yaml", id="the variable"),
        pytest.param("/e/other.yaml", None, "storage", "/e/other.yaml", id="the variable, even naming another file"),
        pytest.param("relative.yaml", None, "gpu", "relative.yaml", id="a relative variable"),
        pytest.param("/e/gpu.yaml", "/f/gpu.yaml", "gpu", "/f/gpu.yaml", id="the flag beats the variable"),
        pytest.param("", "/f/gpu.yaml", "gpu", "/f/gpu.yaml", id="the flag with an empty variable"),
        pytest.param(UNSET, "f.yaml", "gpu", "f.yaml", id="a relative flag"),
    ],
)
def test_the_file_read_is_the_flag_s_then_the_variable_s_then_the_plugin_s(
    monkeypatch: pytest.MonkeyPatch, env: str | None, flag: str | None, plugin: str, path: str
) -> None:
    if env is UNSET:
        monkeypatch.delenv(CONFIG_ENV, raising=False)
    else:
        monkeypatch.setenv(CONFIG_ENV, env)
    assert config_path(plugin, flag) == path


@pytest.mark.parametrize("env", [UNSET, "", "/e/gpu.yaml"])
def test_an_empty_config_flag_is_refused_whatever_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: str | None
) -> None:
    if env is UNSET:
        monkeypatch.delenv(CONFIG_ENV, raising=False)
    else:
        monkeypatch.setenv(CONFIG_ENV, env)
    with pytest.raises(PluginError) as caught:
        load("gpu", "")
    assert str(caught.value) == (
        f"config: --config was given an empty path: pass the file's path, or leave --config out to read ${CONFIG_ENV} "
        "or ./gpu.yaml"
    )


@pytest.mark.parametrize("env", [UNSET, ""], ids=["unset", "empty"])
def test_without_the_variable_the_working_directory_s_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str | None
) -> None:
    if env is UNSET:
        monkeypatch.delenv(CONFIG_ENV, raising=False)
    else:
        monkeypatch.setenv(CONFIG_ENV, env)
    (tmp_path / "gpu.yaml").write_text(BASE + "  prefix: /here\n")
    monkeypatch.chdir(tmp_path)
    loaded = load("gpu")
    assert (loaded.path, loaded.etcd.prefix) == ("gpu.yaml", "/here")


def test_a_variable_naming_a_file_whose_name_is_not_utf8_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The environment holds bytes; they are decoded as os.environ decodes them, so the file named is the one read.
    name = os.fsdecode(b"gpu-\xff.yaml")
    (tmp_path / name).write_text(BASE + "  prefix: /bytes\n")
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / name))
    assert load("gpu").etcd.prefix == "/bytes"


# Where the missing file's name came from decides the fix the message gives.
WORKING_DIRECTORY_FIX = f"put gpu.yaml in $HERE (core's resource_plugin.dir), pass --config PATH, or set {CONFIG_ENV}"


@pytest.mark.parametrize(
    ("env", "flag", "named", "fix"),
    [
        pytest.param(
            "$GOOD", "$MISSING", "$MISSING", "check the path given to --config", id="the flag, over a variable"
        ),
        pytest.param(UNSET, "$MISSING", "$MISSING", "check the path given to --config", id="the flag"),
        pytest.param("$MISSING", None, "$MISSING", f"check the path in ${CONFIG_ENV}", id="the variable"),
        pytest.param(UNSET, None, "$HERE/gpu.yaml", WORKING_DIRECTORY_FIX, id="the working directory"),
        pytest.param("", None, "$HERE/gpu.yaml", WORKING_DIRECTORY_FIX, id="the working directory, the variable empty"),
    ],
)
def test_a_missing_file_s_message_names_the_file_and_the_fix_for_where_its_name_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str | None, flag: str | None, named: str, fix: str
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    (here / "good.yaml").write_text(BASE)
    monkeypatch.chdir(here)

    def fill(text: str) -> str:
        replaced = text.replace("$GOOD", str(here / "good.yaml")).replace("$HERE", str(here))
        return replaced.replace("$MISSING", str(tmp_path / "nowhere" / "gpu.yaml"))

    if env is UNSET:
        monkeypatch.delenv(CONFIG_ENV, raising=False)
    else:
        monkeypatch.setenv(CONFIG_ENV, fill(env))
    with pytest.raises(PluginError) as caught:
        load("gpu", None if flag is None else fill(flag))
    assert str(caught.value) == f"config {fill(named)}: file not found: {fill(fix)}"


# -- the objects' own rules -------------------------------------------------------------------------------


def test_a_config_built_without_bounds_has_the_default_bounds_of_its_file() -> None:
    built = Config("/x/gpu.yaml", EtcdConfig((GOOD,)))
    assert values(built) == DEFAULTS and built.bounds.path == "/x/gpu.yaml" and built.raw == {}


def test_the_password_never_appears_in_the_etcd_section_s_repr(tmp_path: Path) -> None:
    loaded = load_text(tmp_path, BASE + "  auth:\n    username: eru\n    password: s3cret-word\n")
    assert "s3cret-word" not in repr(loaded.etcd) and "eru" in repr(loaded.etcd)
