"""A realloc that gives back everything a deploy took leaves the node's usage as it was before the deploy."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.gpu import record as gpu_record
from resource_extend.gpu.record import GpuRecord
from resource_extend.gpu.scheduler import allocate, realloc_plan
from resource_extend.storage.calculate_verbs import deploy, realloc
from resource_extend.storage.record import NodeResource, StorageRecord, combine
from resource_extend.storage.request import WorkloadRequest

GIB = 1 << 30
products = st.sampled_from(["nvidia-3070", "nvidia-3090", "a100"])


@given(
    st.dictionaries(products, st.integers(1, 8), min_size=1),
    st.dictionaries(products, st.integers(0, 3)),
    st.dictionaries(products, st.integers(1, 3), min_size=1),
)
def test_gpu_realloc_giving_back_a_deploy_restores_usage(
    capacity: dict[str, int], used: dict[str, int], wanted: dict[str, int]
) -> None:
    before = {p: k for p, k in used.items() if k}
    record = GpuRecord(capacity, before)
    try:
        allocate(record.available(), wanted, 1)
    except PluginError:
        assume(False)
    deployed = GpuRecord(capacity, gpu_record.combine(before, None, [wanted], delta=True, incr=True))
    target, delta = realloc_plan(deployed, wanted, {p: -k for p, k in wanted.items()})
    assert target == {}
    assert gpu_record.combine(deployed.usage, delta, [], delta=True, incr=True) == before


def nonzero(resource: NodeResource) -> dict[str, int]:
    return {device: size for device, size in (resource.volumes or {}).items() if size}


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([100, 500, 1024]), min_size=1, max_size=4),
    st.dictionaries(st.sampled_from(["/a", "/b", "/c"]), st.sampled_from([1, 10, 50]), min_size=1),
    st.sampled_from([0, 1, 5]),
)
def test_storage_realloc_giving_back_a_deploy_restores_usage(
    volume_gib: list[int], bindings: dict[str, int], flat_gib: int
) -> None:
    volumes = {f"/data{i}": size * GIB for i, size in enumerate(volume_gib)}
    capacity = NodeResource(volumes, [], sum(volumes.values()) + 100 * GIB)
    record = StorageRecord(capacity, NodeResource({}, [], 0))
    want: dict[str, object] = {"volumes": [f"AUTO:{dst}:rw:{size}G" for dst, size in bindings.items()]}
    if flat_gib:
        want["storage"] = f"{flat_gib}G"
    try:
        _, (workload,) = deploy(record, WorkloadRequest.parse(want).validated(), 1)
    except PluginError:
        assume(False)
    usage = combine(record.usage or NodeResource(), None, [workload], delta=True, incr=True)
    deployed = StorageRecord(capacity, usage)

    give_back: dict[str, object] = {"volumes": [f"AUTO:{dst}:rw:-{size}G" for dst, size in bindings.items()]}
    if flat_gib:
        give_back["storage"] = f"-{flat_gib}G"
    _, delta, _ = realloc(deployed, WorkloadRequest.parse(give_back), workload)
    restored = combine(usage, None, [delta], delta=True, incr=True)
    assert nonzero(restored) == {}
    assert restored.storage == 0
