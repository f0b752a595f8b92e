"""Base64 for etcd's JSON gateway (keys and values travel as base64 text), short ones without ``binascii``.

On a pyenv build ``binascii`` is a shared object that maps ``libz`` too: importing it costs a store call
~0.47 M instructions (0.74 M in a bare interpreter) and ~0.3 ms, while a single-node call codes one short
key, maybe one value, and reads one record of a few KB. Up to ``LONG`` bytes this module does it with what
every interpreter has loaded: a base64 digit is two octal digits, and ``bytes.fromhex`` and ``bytes.hex``
turn each pair of them into a byte and back, so one ``translate`` between the alphabet and those bytes
and one ``int`` in base 8 are the whole codec. Longer input, text the strict path does not take (anything
but canonical base64: whitespace, bad padding, ``=`` inside, other characters, not a ``str``), and
``for_many``'s callers get ``binascii``, imported then. Results and errors are always exactly
``binascii``'s (tests/unit/store/etcd/test_base64text.py).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

# Longer data (in bytes; its text is 4/3 as long) goes to binascii. The codec below costs ~90-110 instructions a
# byte (~5 ns), binascii ~20-35 (~1 ns) and ~0.47 M instructions (~0.3 ms) to import on a call: they cross
# at ~7 KB counted by callgrind, at ~60 KB in wall time (the import maps files and takes page faults, which
# callgrind does not count), which is what a call is measured by. A node's record is a few hundred bytes
# to a few KB.
LONG = 8192
LONG_TEXT = (LONG + 2) // 3 * 4  # the length of LONG bytes' base64

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# Digit i (0-63) as the byte whose hex is i's two octal digits: i + 8 * (i // 8), 0x00-0x07, 0x10-0x17 … 0x77.
_CODES = bytes.fromhex(
    "0001020304050607101112131415161720212223242526273031323334353637"
    "4041424344454647505152535455565760616263646566677071727374757677"
)
_ENCODE = bytes.maketrans(_CODES, _ALPHABET)
# Every byte that is not a digit reads as 0xff, whose hex is no octal digit.
_OTHERS = bytes(range(256)).translate(None, _ALPHABET)
_DECODE = bytes.maketrans(_ALPHABET + _OTHERS, _CODES + b"\xff" * len(_OTHERS))
_BAD = b"\xff"


def encode(data: bytes) -> str:
    """``binascii.b2a_base64(data, newline=False).decode("ascii")``."""
    if data.__class__ is bytes and len(data) <= LONG:
        if not data:
            return ""
        pad = -len(data) % 3  # "=" to append; each stands for two zero bits after the data's last
        digits = (len(data) * 8 + 2 * pad) // 6
        octal = format(int.from_bytes(data, "big") << 2 * pad, "o").zfill(2 * digits)
        return bytes.fromhex(octal).translate(_ENCODE).decode("ascii") + "=" * pad
    return _binascii_encode(data)


def decode(text: str) -> bytes:
    """``binascii.a2b_base64(text)``, its errors included (``binascii.Error``, a ValueError, or TypeError)."""
    if text.__class__ is str and len(text) % 4 == 0 and len(text) <= LONG_TEXT and text.isascii():
        if not text:
            return b""
        pad = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
        coded = text.encode("ascii")[: len(text) - pad].translate(_DECODE)
        if _BAD not in coded:
            number = int(coded.hex(), 8)
            # Canonical only: the bits the padding leaves over must be zero (binascii drops them).
            if not number & ((1 << 2 * pad) - 1):
                return (number >> 2 * pad).to_bytes(len(text) // 4 * 3 - pad, "big")
    import binascii

    return binascii.a2b_base64(text)


def for_many() -> tuple[Callable[[bytes], str], Callable[[str], bytes]]:
    """``binascii``'s encoder and decoder, for a caller about to code many values: a record of a few hundred
    bytes costs them ~50 K instructions less than ``encode`` and ``decode``, which pays for the import past
    about ten records."""
    import binascii

    b2a = binascii.b2a_base64

    def encode_many(data: bytes) -> str:
        return b2a(data, newline=False).decode("ascii")

    return encode_many, binascii.a2b_base64


def _binascii_encode(data: bytes) -> str:
    import binascii

    return binascii.b2a_base64(data, newline=False).decode("ascii")
