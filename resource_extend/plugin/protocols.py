"""What a plugin's manifest (``plugin.Plugin``) names: its record class (``Record``, what the store needs of
it, declared with the store in store/record.py), its kind (how its records reconcile and change, and the
answers' sides), its metrics, checks and calculate modules. Types for the type checker only: at run time a
plugin's record class and its ``node_verbs``, ``metrics``, ``checks`` and ``calculate_verbs`` modules are
these, structurally, and no call imports this module (nor unmarshals these declarations).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol, TypeVar

    from resource_extend.bounds import Bounds
    from resource_extend.capacity import Limit
    from resource_extend.envelope.plans import Deploy
    from resource_extend.envelope.realloc import Realloc
    from resource_extend.envelope.sides import SetCapacity, SetUsage
    from resource_extend.formats.jsonio import Rendered
    from resource_extend.metrics import MetricDescription
    from resource_extend.plugin.diagnosis import Finding, GoType
    from resource_extend.store.record import Record

    R = TypeVar("R", bound=Record)
    R_in = TypeVar("R_in", bound=Record, contravariant=True)
    H = TypeVar("H")

    class Kind(Protocol[R, H]):
        """What one plugin's records hold, as the shared node verbs need it, and the node verbs it answers its
        own way: the plugin's ``node_verbs`` module is its kind (its ``payloads`` module reads the
        requests' payloads). ``H`` is what a request's workloads parse into."""

        def reconcile(self, record: R, held: list[H]) -> tuple[R, list[str]]:
            """The record with its usage recomputed from ``held``, and where the stored usage differs."""

        def capacity_change(self, request: SetCapacity[Any, Any]) -> Callable[[R], R]:
            """set-node-resource-capacity's change of a stored record (a new record, the argument unchanged)."""

        def usage_change(self, request: SetUsage[Any, Any]) -> Callable[[R], R]:
            """set-node-resource-usage's change of a stored record."""

        def capacity_before(self, record: R) -> Any: ...

        def capacity_after(self, record: R) -> Any: ...

        def usage_before(self, record: R) -> Any: ...

        def usage_after(self, record: R) -> Any: ...

        def most_idle(self, nodes: list[str], records: Callable[[], dict[str, R]]) -> Any:
            """get-most-idle-node's answer for ``nodes``; ``records`` reads their records, if the kind weighs them."""

    class Metrics(Protocol[R_in]):
        """A plugin's ``metrics`` module, imported only when get-metrics or its description runs."""

        def describe(self, record: type[R_in]) -> list[MetricDescription]:
            """get-metrics-description's answer for the plugin whose records are ``record``."""

        def render_rows(self, rows: Rendered, pod: str, node: str, record: R_in) -> None:
            """Append the node's get-metrics rows to ``rows``, as JSON text."""

    class Checks(Protocol[R_in]):
        """A plugin's ``checks`` module: what ``doctor`` checks in one stored record, imported only by doctor."""

        # The reference's Go type of the record, for the decoding checks (``diagnosis.examine``).
        GO_RECORD: GoType

        def check_record(self, node: str, record: R_in) -> list[Finding]:
            """Counts a readable record should not hold."""

        def corrected(self, doc: dict[str, Any]) -> dict[str, Any]:
            """The record doctor proposes from a salvaged one: always one a write accepts."""

    class CalculateVerbs(Protocol[R_in]):
        """A plugin's ``calculate_verbs`` module: pure functions the planning verbs (command/deploy.py) hand the
        request and the node's record to; it loads the scheduling code."""

        def node_capacity(self, request: Any, bounds: Bounds) -> Callable[[R_in], tuple[int, float, float]]:
            """get-nodes-deploy-capacity's count of one node for the workload ``request``."""

        def commit_precheck(self, request: Deploy[Any], bounds: Bounds) -> None:
            """Refuse a deploy whose plan core could not commit, before the node is read (decision 18)."""

        def plan_deploy(self, record: R_in, request: Deploy[Any], bounds: Bounds, plugin: str) -> Any:
            """calculate-deploy's answer on the node's record, or the PluginError that says why not."""

        def plan_realloc(self, record: R_in, request: Realloc[Any, Any]) -> Any:
            """calculate-realloc's answer on the node's record, or the PluginError that says why not."""

        def explainer(self, request: Any, bounds: Bounds) -> Callable[[R_in], tuple[int, Limit]]:
            """For ``explain``: each node's count for get-nodes-deploy-capacity's ``workload_resource``, with
            the limit that set it, from the scheduler the verb runs."""
