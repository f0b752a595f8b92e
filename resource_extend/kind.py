"""What a plugin hands the shared node verbs (``nodeverbs``) and the command line (``verb.Plugin``): its kind
(how its requests parse and how its records reconcile) and its metrics module. Types for the type checker
only: at run time a plugin's ``node_verbs`` and ``metrics`` modules are these, structurally.

Kept apart from ``nodeverbs`` (which builds ``verb.Verb`` entries) so that ``verb`` can name them without
an import cycle.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol, TypeVar

    from resource_extend.jsonio import Rendered
    from resource_extend.metrics import MetricDescription
    from resource_extend.params import JSONObject
    from resource_extend.store import Record

    R = TypeVar("R", bound=Record)
    R_in = TypeVar("R_in", bound=Record, contravariant=True)
    R_co = TypeVar("R_co", bound=Record, covariant=True)
    H_co = TypeVar("H_co", covariant=True)
    H = TypeVar("H")

    class AddNodeRequest(Protocol[R_co]):
        """add-node's request as the kind reads it (``params.AddNode`` and the plugin's ``record``)."""

        @property
        def nodename(self) -> str: ...

        def record(self) -> R_co:
            """The record add-node creates: the request's capacity, else the engine's report; nothing used.
            Decoded only when asked, after the store has said the node is new."""

    class SetInfoRequest(Protocol[R_co]):
        """set-node-resource-info's request: the record to store, from ``capacity`` and ``usage``."""

        @property
        def nodename(self) -> str: ...

        @property
        def record(self) -> R_co: ...

    class WorkloadsRequest(Protocol[H_co]):
        """get-node-resource-info's and fix-node-resource's request (``params.NodeWorkloads``)."""

        @property
        def nodename(self) -> str: ...

        def held(self) -> H_co:
            """What the request's ``workloads_resource`` hold, parsed when asked."""

    class Kind(Protocol[R, H]):
        """What one plugin's records hold, as the shared node verbs need it: the plugin's ``node_verbs``
        module is its kind, and its ``request`` module parses the requests. ``H`` is what a request's
        workloads parse into."""

        def add_node_request(self, doc: JSONObject) -> AddNodeRequest[R]: ...

        def set_info_request(self, doc: JSONObject) -> SetInfoRequest[R]: ...

        def workloads_request(self, doc: JSONObject) -> WorkloadsRequest[H]: ...

        def reconcile(self, record: R, held: H) -> tuple[R, list[str]]:
            """The record with its usage recomputed from ``held``, and where the stored usage differs."""

    class Metrics(Protocol[R_in]):
        """A plugin's ``metrics`` module, imported only when get-metrics or its description runs."""

        METRICS_DESCRIPTION: list[MetricDescription]

        def render_rows(self, rows: Rendered, pod: str, node: str, record: R_in) -> None:
            """Append the node's get-metrics rows to ``rows``, as JSON text."""
