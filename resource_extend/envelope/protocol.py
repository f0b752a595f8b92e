"""``Payloads``: how one plugin reads its own payloads, the object each verb's request value is given.

Types only, like protocols.py: the protocol is read by the type checker (a plugin's ``payloads`` module has the
class, and its manifest names the instance), and no call imports this module, so everything here is under
``if TYPE_CHECKING:``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol, TypeVar

    # envelope/__init__.py names this protocol for every verb's request value; declared here without it, so
    # that neither imports the other (its JSONObject is this one, written again).
    JSONObject = dict[str, Any]
    Q = TypeVar("Q")
    D = TypeVar("D")
    H = TypeVar("H")

    # What a value reads a plugin's payloads into: the record (R), a workload's holdings (W), a node resource
    # in stored form (N) and in request form (P), a new workload's request (Q), a realloc's change (D) and
    # what the workload holds (H).
    R_co = TypeVar("R_co", covariant=True)
    W_co = TypeVar("W_co", covariant=True)
    N_co = TypeVar("N_co", covariant=True)
    P_co = TypeVar("P_co", covariant=True)

    class Payloads(Protocol[R_co, W_co, N_co, P_co, Q, D, H]):
        """How one plugin reads its own payloads: the object every verb's request value (``envelope.records``
        and the other family modules) is given, as the reference decodes the envelope in plugincmd and the
        payload in ``types.X.Parse``. A plugin's ``payloads`` module has one (``CountedPayloads``,
        ``StoragePayloads``); its manifest names it, and mypy refuses one that lacks a reader or reads into
        the wrong type."""

        # What the work of one workload is counted in (decision 18), named in a refusal: "products".
        ITEMS: str

        def added(self, resource: JSONObject | None, info: JSONObject) -> R_co:
            """add-node's record: the request's ``resource``, else the engine's report ``info``; nothing used."""

        def record(self, capacity: JSONObject | None, usage: JSONObject | None) -> R_co:
            """set-node-resource-info's record from its two sides, capacity read (and refused) first."""

        def workload(self, doc: JSONObject) -> W_co:
            """One entry of ``workloads_resource``: what a workload on the node holds."""

        def usage(self, doc: JSONObject) -> N_co:
            """The usage set-node-resource-usage sets: ``resource_request`` when present, else ``resource``."""

        def capacity(self, doc: JSONObject, delta: bool, incr: bool) -> tuple[P_co, N_co]:
            """set-node-resource-capacity's ``resource_request`` and ``resource``, in the plugin's order; the
            flags may change how they are read."""

        def request(self, doc: JSONObject, key: str) -> Q:
            """A new workload's request under ``key``, checked as a new workload's."""

        def change(self, value: JSONObject | None) -> D:
            """calculate-realloc's ``workload_resource_request``: the change, which may take resources away."""

        def current(self, value: JSONObject | None) -> H:
            """calculate-realloc's ``workload_resource``: what the workload holds."""

        def items(self, request: Q) -> int:
            """How many bindings or products a new workload's ``request`` names: what the work grows with."""

        def change_items(self, change: D) -> int: ...

        def current_items(self, current: H) -> int: ...
