"""Entry point of ``resource-gpu``."""

from __future__ import annotations


def main() -> None:
    from resource_extend.command.cli import serve_named

    serve_named("gpu")


if __name__ == "__main__":
    main()
