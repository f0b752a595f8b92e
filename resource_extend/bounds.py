"""The work one call may be asked for (spec decisions 15 and 18): the config's ``scheduler`` limits.

Every bound is read here, from the config's ``scheduler`` section, range-checked at load, and every
refusal is written here, so a request past a limit always fails the same way: at once, before the store
is touched, with one line naming what was asked, the limit, and the key of which file raises it.

The defaults keep every call of both plugins under 5 s and 512 MB on the 2-core reference machine
(docs/reliability.md "Work bounds" has the measurements). Pure: no store, no config file, no command line.
"""

from __future__ import annotations

from resource_extend.errors import PluginError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# key: (default, lowest, highest). max_deploy_count's range is decision 15's; the others are wide enough
# for any cluster core can run, and finite so that a typo cannot switch a bound off.
LIMITS: dict[str, tuple[int, int, int]] = {
    # The most workloads one calculate-deploy plans, and one storage capacity query counts per node.
    "max_deploy_count": (10000, 1, 1_000_000),
    # Bindings (storage) or products (gpu) of the workload times deploy_count (calculate-deploy), or times
    # the nodes asked about (get-nodes-deploy-capacity): what a call computes and answers grows with both.
    "max_deploy_work": (50_000, 1, 100_000_000),
    # Bindings (storage: the request's and the limit's lists, each) or products (gpu) of one workload: a
    # storage plan's cost grows with their square (the plan is searched per binding).
    "max_workload_items": (100, 1, 1_000_000),
    # Names in one request's ``nodenames``.
    "max_nodes_per_call": (10000, 1, 10_000_000),
    # Bytes of the request on stdin: 4 MiB holds 10,000 storage workloads on one node or 10,000 names.
    "max_stdin_bytes": (4 << 20, 1024, 1 << 30),
}
KEYS = tuple(LIMITS)
# set-node-resource-usage's keys around the workloads core commits (``{"nodename":…,"workloads_resource":[…],
# "resource":null,"resource_request":null,"delta":true,"incr":true}`` and spaces a client may add), the node's
# name aside: counted once per commit, with the name at Go's widest escape (6 bytes a byte).
COMMIT_ENVELOPE = 256


class Bounds:
    """The limits of one config file (``path`` names it in every refusal)."""

    __slots__ = (
        "max_deploy_count",
        "max_deploy_work",
        "max_nodes_per_call",
        "max_stdin_bytes",
        "max_workload_items",
        "path",
    )

    def __init__(
        self,
        path: str,
        max_deploy_count: int = LIMITS["max_deploy_count"][0],
        max_deploy_work: int = LIMITS["max_deploy_work"][0],
        max_workload_items: int = LIMITS["max_workload_items"][0],
        max_nodes_per_call: int = LIMITS["max_nodes_per_call"][0],
        max_stdin_bytes: int = LIMITS["max_stdin_bytes"][0],
    ) -> None:
        self.path = path
        self.max_deploy_count = max_deploy_count
        self.max_deploy_work = max_deploy_work
        self.max_workload_items = max_workload_items
        self.max_nodes_per_call = max_nodes_per_call
        self.max_stdin_bytes = max_stdin_bytes

    @classmethod
    def read(cls, path: str, scheduler: dict[str, Any]) -> Bounds:
        """The bounds a config's ``scheduler`` section sets (absent or null: the default), range-checked."""
        values: dict[str, int] = {}
        for key, (default, low, high) in LIMITS.items():
            value = scheduler.get(key, default)
            if value is None:
                value = default
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise PluginError(f"config {path}: scheduler.{key}: {value!r} is not an integer in {low}..{high}")
            values[key] = value
        return cls(path, **values)

    def refuse(self, key: str, asked: str) -> PluginError:
        """The one line for a request past ``key``: what it asked, the limit, and where to raise it."""
        limit = getattr(self, key)
        return PluginError(
            f"request too large: {asked}; scheduler.{key} of {self.path} allows {limit} (raise it there to allow more)"
        )

    def check_stdin(self, size: int) -> None:
        """``size`` is what was read, at most one byte past the limit: the rest was never read."""
        if size > self.max_stdin_bytes:
            raise self.refuse("max_stdin_bytes", f"more than {self.max_stdin_bytes} bytes on stdin")

    def check_request(self, request: Any) -> None:
        """What the decoded request asks before any verb reads it: the nodes of ``nodenames``."""
        names = request.get("nodenames") if isinstance(request, dict) else None
        if isinstance(names, list) and len(names) > self.max_nodes_per_call:
            raise self.refuse("max_nodes_per_call", f"{len(names)} nodenames")

    def check_items(self, items: int, what: str) -> None:
        """``items`` bindings or products in one workload (``what`` names them, e.g. "volume bindings")."""
        if items > self.max_workload_items:
            raise self.refuse("max_workload_items", f"{items} {what} in one workload")

    def check_work(self, items: int, what: str, times: int, of: str) -> None:
        """One workload of ``items`` ``what``, ``times`` over (``of`` names them: "deploy_count", "nodes").
        A workload naming nothing still costs one unit per time: plans and answers are built for it."""
        self.check_items(items, what)
        work = max(items, 1) * times
        if work > self.max_deploy_work:
            raise self.refuse("max_deploy_work", f"{max(items, 1)} {what} x {of} {times} = {work}")

    def check_commit(self, size: int, workloads: int, nodename: str) -> None:
        """One rule for what a plugin answers and what it reads: the ``size`` bytes of the workload resources
        a calculate verb plans for ``workloads`` workloads on ``nodename``, as core sends them back in one
        set-node-resource-usage (``COMMIT_ENVELOPE`` holds the other keys), must fit on that call's stdin.
        Else the plan is refused now, not at core's commit after it was made."""
        total = size + COMMIT_ENVELOPE + len(nodename.encode("utf-8", "surrogatepass")) * 6
        if total > self.max_stdin_bytes:
            raise self.refuse(
                "max_stdin_bytes",
                f"the plan of {workloads} workload{'s' * (workloads != 1)} would reach set-node-resource-usage "
                f"as {total} bytes on stdin, more than it reads (plan fewer workloads per call)",
            )

    def deploy_count_error(self, count: int) -> PluginError:
        """``deploy_count`` above ``max_deploy_count``: the reference's words (not enough resource) kept."""
        bound = self.max_deploy_count
        return PluginError(
            f"deploy_count {count} is more than one call plans (scheduler.max_deploy_count of {self.path} is "
            f"{bound}; raise it there to allow more): not enough resource; deploy at most {bound} workloads per "
            "node and call"
        )
