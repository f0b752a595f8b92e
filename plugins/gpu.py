"""Entry point of ``resource-gpu``."""

from __future__ import annotations


def main() -> None:
    from plugins import plugin
    from resource_extend.command.cli import serve_named

    serve_named("gpu", plugin)


if __name__ == "__main__":
    main()
