"""Entry point of ``resource-storage``."""

from __future__ import annotations


def main() -> None:
    from resource_extend.cli import main as run
    from resource_extend.storage.verbs import PLUGIN

    run(PLUGIN)


if __name__ == "__main__":
    main()
