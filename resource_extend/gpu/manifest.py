"""The GPU plugin's manifest, and ``counted_plugin``: the factory of every plugin of its shape, things counted
per product model.

A plugin of this shape (NICs counted per model, say: ``tests/rdma/manifest.py``) is a record class with its
words, one ``counted_plugin`` call, its schemas and its vectors: the record arithmetic, the payloads, the
kind, the plans, the metrics and the checks are this package's, written once.
"""

from __future__ import annotations

from resource_extend.gpu import node_verbs
from resource_extend.gpu.payloads import CountedPayloads
from resource_extend.gpu.record import CountedRecord
from resource_extend.plugin import LazyModule, Plugin, Summaries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.gpu import calculate_verbs, checks, metrics
else:
    calculate_verbs = LazyModule("resource_extend.gpu.calculate_verbs")
    checks = LazyModule("resource_extend.gpu.checks")
    metrics = LazyModule("resource_extend.gpu.metrics")


def counted_plugin(
    record: type[CountedRecord], summary: str, summaries: Summaries, schemas: str | None = None
) -> Plugin[CountedRecord]:
    """The manifest of a plugin of things counted per product model: its name is the record's ``NAME``,
    its payloads read that record's maps, and every other part is this package's."""
    return Plugin(
        record.NAME,
        summary,
        record=record,
        payloads=CountedPayloads(record),
        kind=node_verbs,
        metrics=metrics,
        checks=checks,
        calculate=calculate_verbs,
        summaries=summaries,
        schemas=schemas,
    )


class GpuRecord(CountedRecord):
    """A node's GPU cards: ``invalid gpu map``, ``gpu_capacity``, ``Resources["gpu"]``, ``no GPU asked``."""

    __slots__ = ()
    NAME = "gpu"
    NOUN = "GPU"


PLUGIN = counted_plugin(
    GpuRecord,
    "GPU cards per product model",
    Summaries(
        add_node="register a node's GPUs",
        set_capacity="change a node's capacity (absolute or delta)",
        most_idle="the least used of several nodes",
        deploy="plan cards for N new workloads on a node",
        realloc="plan a workload's new cards on its node",
    ),
)
