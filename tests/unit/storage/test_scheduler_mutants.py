"""Scheduler facts that hand mutants of storage/scheduler/ survived (issue 37, docs/testing.md#mutant-sample-issue-37):
each test names the behaviour it pins; the mutant that survived without it is in the table there.

Pure functions of a record: no etcd. The expected words and plans are worked out by hand in the comments.
"""

from __future__ import annotations

from resource_extend.storage.binding import VolumeBinding
from resource_extend.storage.disk import Disk
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.scheduler.count import node_deploy_limit, volume_limit
from resource_extend.storage.scheduler.limits import size_text
from resource_extend.storage.scheduler.placement import volume_plans
from resource_extend.storage.workload_request import WorkloadRequest

G = 1 << 30


def on(
    capacity: dict[str, int], used: dict[str, int], disks: list[Disk] | None = None, storage: int = 0, stored: int = 0
) -> StorageRecord:
    return StorageRecord(NodeResource(capacity, disks or [], storage), NodeResource(used, [], stored))


def parsed(*texts: str) -> list[VolumeBinding]:
    return [VolumeBinding.parse(text) for text in texts]


def test_explain_counts_an_unused_volume_of_exactly_the_monopoly_size_among_those_short_of_quota() -> None:
    # /data0 holds the 10G group exactly but its disk has no read IOPS left; /data1 is too small. The volume
    # that would have held it counts as "lacking the disk quota" (passes.place_mono: free >= mono_size).
    node = on({"/data0": 10 * G, "/data1": 5 * G}, {}, [Disk("/dev/vdb", ["/data0", "/data1"], 0, 0, 0, 0)])
    count, limit = volume_limit(node, parsed("AUTO:/m:rwm:10G:10"), 10)
    assert count == 0 and limit is not None
    assert limit.text.endswith("0 of 2 unused volumes hold 10G (one workload each), 1 more lack the disk quota")


def test_explain_names_the_normal_bindings_limit_when_normal_and_monopoly_counts_tie() -> None:
    # One normal plan fits on /u (2G free, 1.5G each) and one monopoly group on /m: both counts are 1, under
    # the bound. The tie names the normal binding's stop (count.VolumeCount.limit), not the monopoly's.
    node = on({"/u": 3 * G, "/m": 8 * G}, {"/u": G})
    count, limit = volume_limit(node, parsed("AUTO:/n:rw:1536M", "AUTO:/m:rwm:4G"), 10)
    assert count == 1 and limit is not None
    assert limit.kind == "volume space"
    assert limit.text == "volume AUTO:/n:rw:1.5G: after 1 largest free volume /u has 512M"


def test_explain_calls_a_node_whose_storage_is_used_exactly_full_not_over_committed() -> None:
    node = on({}, {}, storage=4 * G, stored=4 * G)
    count, limit = node_deploy_limit(node, WorkloadRequest([], [], G, G), 10)
    assert count == 0
    assert (limit.kind, limit.text) == ("storage", "storage: 0 free, 1G per workload")


def test_sizes_of_exactly_one_unit_are_written_in_that_unit() -> None:
    assert [size_text(size) for size in (1 << 10, 1 << 20, G, 1 << 40, 1 << 50)] == ["1K", "1M", "1G", "1T", "1P"]
    assert [size_text(size) for size in (1023, 3 << 29, 0)] == ["1023B", "1.5G", "0"]


def test_with_a_monopoly_group_normal_plans_are_enumerated_to_one_more_than_the_unused_volumes() -> None:
    # Spec §3.7: normal_bound = max(deploy_count, len(unused) + 1) = 3 with /m1 and /m2 unused, and §3.6: the
    # unlimited binding goes to the volume with the most room after every enumerated plan. Three 1G plans
    # leave /u1 1G, so /m2's 1.5G wins; two (a bound of len(unused)) would leave /u1 2G and pin it there.
    node = on({"/u1": 5 * G, "/m1": 100 * G, "/m2": 3 * G // 2}, {"/u1": G})
    [(plan, _)] = volume_plans(node, parsed("AUTO:/n:rw:1G", "AUTO:/m:rwm:50G", "AUTO:/x:rw:0"), 1)
    assert plan.to_json()["AUTO:/x:rw:0:0:0:0:0"] == {"/m2": 0}
