"""errors.py names the failure-only classes of failures.py without loading them until one is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from resource_extend import errors, failures
from tests.support import ROOT

FAILURE_ONLY = ["NodeNotExists", "Sentinel", "InvalidVolume", "InvalidDisk", "InvalidStorage",
                "InsufficientResource", "Conflict", "UsageError", "StoreUnavailable", "AmbiguousWrite"]  # fmt: skip


def test_errors_names_every_class_of_failures() -> None:
    defined = {
        name
        for name, value in vars(failures).items()
        if isinstance(value, type) and value.__module__ == failures.__name__
    }
    assert defined == set(errors.FAILURE_ONLY) == set(FAILURE_ONLY)


@pytest.mark.parametrize("name", FAILURE_ONLY)
def test_each_failure_only_class_is_reached_through_errors_as_the_same_class(name: str) -> None:
    assert name in errors.FAILURE_ONLY
    found = getattr(errors, name)
    assert found is getattr(failures, name)
    assert issubclass(found, errors.PluginError) or name == "UsageError"


def test_a_name_failures_does_not_define_as_an_error_is_no_attribute_of_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        errors.Nothing  # type: ignore[attr-defined]  # noqa: B018


def test_importing_errors_and_catching_nothing_loads_no_failure_class() -> None:
    # `from resource_extend.errors import PluginError` makes the import system ask errors for `__path__`.
    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from resource_extend.errors import PluginError\n"
        "from resource_extend import errors\n"
        "assert not hasattr(errors, '__path__')\n"
        "try:\n"
        "    pass\n"
        "except errors.NodeNotExists:\n"
        "    pass\n"
        "assert 'resource_extend.failures' not in sys.modules\n"
        "try:\n"
        "    raise errors.NodeNotExists('n1')\n"
        "except errors.PluginError as exc:\n"
        "    assert str(exc) == 'key: n1: node not exists', exc\n"
        "assert 'resource_extend.failures' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
