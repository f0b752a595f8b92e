"""The ``rdma`` test plugin's manifest: NICs counted per model, the GPU plugin's shape.

All of it: a record class with its words, one ``counted_plugin`` call (the GPU plugin's factory), its
schemas (GPU's, renamed: ``write_schemas``) and its vectors (``vectors.jsonl``). The tests register it
(``plugins.register``) and serve it through the registry; it is not in ``plugins.SHIPPED``, so nothing
builds or ships it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from resource_extend.formats.schemafiles import renamed
from resource_extend.formats.validation import schema_dir
from resource_extend.gpu.manifest import counted_plugin
from resource_extend.gpu.record import CountedRecord
from resource_extend.plugin import Summaries

VECTORS = Path(__file__).resolve().parent / "vectors.jsonl"
# Generated per test process (write_schemas): GPU's schema files with the plugin's name.
SCHEMAS = Path(tempfile.gettempdir()) / f"resource-extend-rdma-schemas-{os.getpid()}"


class RdmaRecord(CountedRecord):
    """A node's RDMA NICs: ``invalid rdma map``, ``rdma_capacity``, ``Resources["rdma"]``, ``no RDMA NIC asked``."""

    __slots__ = ()
    NAME = "rdma"
    NOUN = "RDMA NIC"


PLUGIN = counted_plugin(
    RdmaRecord,
    "RDMA NICs per model",
    Summaries(
        add_node="register a node's RDMA NICs",
        set_capacity="change a node's capacity (absolute or delta)",
        most_idle="the least used of several nodes",
        deploy="plan NICs for N new workloads on a node",
        realloc="plan a workload's new NICs on its node",
    ),
    schemas=str(SCHEMAS),
)


def write_schemas() -> Path:
    """The plugin's schema directory: ``rdma/`` generated from ``gpu/``, beside the shared ``common.json``."""
    source = schema_dir()
    (SCHEMAS / "rdma").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "common.json", SCHEMAS / "common.json")
    for file, text in renamed(source, "gpu", "rdma", {"GPU": "RDMA NIC"}).items():
        (SCHEMAS / "rdma" / file).write_text(text, encoding="utf-8")
    return SCHEMAS
