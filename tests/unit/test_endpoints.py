"""etcd.machines URLs are split by hand (a call does not import ``re``): exactly as the grammar's regex."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.endpoints import parse_endpoint
from resource_extend.errors import PluginError

GRAMMAR = re.compile(
    r"(?P<scheme>[Hh][Tt][Tt][Pp][Ss]?)://(?P<host>\[[0-9A-Fa-f:.]+\]|[^/:\[\]\s@?#]+)(?::(?P<port>[0-9]{1,5}))?/?\Z"
)


def by_grammar(url: str) -> tuple[str, str, int] | None:
    match = GRAMMAR.match(url)
    port = int(match["port"]) if match and match["port"] else 2379
    if match is None or not 0 < port < 65536:
        return None
    return match["scheme"].lower(), match["host"].strip("[]"), port


def by_parser(url: str) -> tuple[str, str, int] | None:
    try:
        endpoint = parse_endpoint(url)
    except PluginError:
        return None
    return endpoint.scheme, endpoint.host, endpoint.port


PIECES = ["http", "HTTPS", "hTtP", "ftp", "://", ":/", "/", ":", "[", "]", "::1", "fe80", "a.b", "127.0.0.1",
          "2379", "65535", "65536", "0", "123456", "@", "?", "#", " ", "\u3000", "\u00a0", "é", "x", "-",
          "\n", "."]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_the_parser_splits_urls_as_the_grammar_does(url: str) -> None:
    assert by_parser(url) == by_grammar(url)


@given(st.text(max_size=30))
def test_the_parser_agrees_with_the_grammar_on_any_text(url: str) -> None:
    assert by_parser(url) == by_grammar(url)


@pytest.mark.parametrize(
    ("url", "parsed"),
    [
        ("http://127.0.0.1:2379", ("http", "127.0.0.1", 2379)),
        ("HTTPS://etcd-1/", ("https", "etcd-1", 2379)),
        ("https://[::1]:2380", ("https", "::1", 2380)),
        ("http://h:", None),
        ("http://h//", None),
        ("http://[]:1", None),
        ("http://h:0", None),
        ("http://user@h", None),
        ("ftp://h", None),
    ],
)
def test_examples_of_the_grammar(url: str, parsed: tuple[str, str, int] | None) -> None:
    assert by_parser(url) == parsed == by_grammar(url)


@pytest.mark.parametrize(
    ("url", "authority"),
    [
        ("http://127.0.0.1:2379", "127.0.0.1:2379"),
        ("https://etcd-1.example", "etcd-1.example:2379"),
        ("http://[::1]:23791", "[::1]:23791"),
        ("http://[fe80::1]", "[fe80::1]:2379"),
    ],
)
def test_the_authority_a_request_names_puts_an_ipv6_address_in_brackets(url: str, authority: str) -> None:
    # The Host header and h2's :authority: "::1:23791" is no host and port at all (RFC 3986 wants brackets).
    assert parse_endpoint(url).authority == authority
