"""get-nodes-deploy-capacity's answer both plugins share, and what stopped a node's count (``Limit``, for
``explain``).

Only those verbs and the schedulers' explanations import it (the arithmetic every calculate verb uses is
``goarith``), so that no other verb unmarshals this code or creates ``Limit``. get-nodes-deploy-capacity's
request is ``envelope.capacity``.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats.decoding import INT64_MAX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Callable, TypedDict, TypeVar

    R = TypeVar("R")

    class NodeCapacity(TypedDict):
        capacity: int
        usage: float
        rate: float
        weight: int

    class DeployCapacity(TypedDict):
        """get-nodes-deploy-capacity's answer."""

        nodes_deploy_capacity_map: dict[str, NodeCapacity]
        total: int


class Limit:
    """What stopped a node's count for a request, as the scheduler saw it when it stopped: for `explain`.

    ``kind`` groups nodes in explain's summary (``volume space``, ``disk quota``, ``storage``, a GPU
    product, ...); ``text`` names the resource and the numbers, in words.
    """

    __slots__ = ("kind", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text

    def __repr__(self) -> str:
        return f"Limit({self.kind!r}, {self.text!r})"

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text}


def deploy_capacity_response(
    records: Iterable[tuple[str, R]], capacity_of: Callable[[R], tuple[int, float, float]]
) -> DeployCapacity:
    """get-nodes-deploy-capacity's answer: nodes that fit at least one workload, and their total.

    ``records`` are (node, record) in the order of the node names, each node once: NodeStore.iter_many's,
    so that a record is dropped once weighed. ``capacity_of`` gives a node's (capacity, usage, rate);
    entries use lowercase keys (decision 6).
    """
    entries: dict[str, NodeCapacity] = {}
    total = 0
    for node, record in records:
        capacity, usage, rate = capacity_of(record)
        if capacity > 0:
            entries[node] = {"capacity": capacity, "usage": usage, "rate": rate, "weight": 1}
            total += capacity
    if total > INT64_MAX:  # each node is bounded by max_deploy_count, so only an absurd node list gets here
        raise PluginError(f"total deploy capacity {total} is past int64: ask for fewer nodes")
    return {"nodes_deploy_capacity_map": entries, "total": total}
