"""Entry point of ``resource-storage``."""

from __future__ import annotations


def main() -> None:
    from plugins import plugin
    from resource_extend.command.cli import serve_named

    serve_named("storage", plugin)


if __name__ == "__main__":
    main()
