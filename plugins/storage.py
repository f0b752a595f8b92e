"""Entry point of ``resource-storage``."""

from __future__ import annotations


def main() -> None:
    from plugins import serve

    serve("storage")


if __name__ == "__main__":
    main()
