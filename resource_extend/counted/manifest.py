"""The GPU plugin's manifest: GPU cards counted per product model, the first plugin of the counted shape.

A plugin of this shape (NICs counted per model, say) is a record class with its words, a manifest like this
one, its schemas and its vectors: every part below is the counted package's, written once.
"""

from __future__ import annotations

from resource_extend.command.nodeverbs import verb_table
from resource_extend.command.verb import LazyModule, Plugin, Summaries
from resource_extend.counted import node_verbs
from resource_extend.counted.record import CountedRecord
from resource_extend.counted.request import Payloads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.counted import calculate_verbs, checks, metrics
else:
    calculate_verbs = LazyModule("resource_extend.counted.calculate_verbs")
    checks = LazyModule("resource_extend.counted.checks")
    metrics = LazyModule("resource_extend.counted.metrics")


class GpuRecord(CountedRecord):
    """A node's GPU cards: ``invalid gpu map``, ``gpu_capacity``, ``Resources["gpu"]``, ``no GPU asked``."""

    __slots__ = ()
    NAME = "gpu"
    NOUN = "GPU"


PLUGIN: Plugin[CountedRecord] = Plugin(
    "gpu",
    "GPU cards per product model",
    record=GpuRecord,
    payloads=Payloads(GpuRecord),
    kind=node_verbs,
    metrics=metrics,
    checks=checks,
    calculate=calculate_verbs,
    table=verb_table,
    summaries=Summaries(
        add_node="register a node's GPUs",
        set_capacity="change a node's capacity (absolute or delta)",
        most_idle="the least used of several nodes",
        deploy="plan cards for N new workloads on a node",
        realloc="plan a workload's new cards on its node",
    ),
)
