"""Entry point of ``resource-gpu``."""

from __future__ import annotations


def main() -> None:
    from plugins import serve

    serve("gpu")


if __name__ == "__main__":
    main()
