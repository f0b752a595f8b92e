"""The storage scheduler: where a workload's volume bindings go on one node, and how many workloads fit.

Pure functions over a node's capacity and usage (volumes, disks); nothing here touches the store. The
algorithm is the reference's (``storage/schedule/schedule.go``), including its quirks: best-fit placement
of normal bindings on used volumes, whole unused volumes split proportionally among a monopoly group,
unused volumes promoted to used one at a time, and the plans of the *last* pass taken.

The modules, in the order a call runs them:

- ``placement``: the entry points (``volume_plans``, ``volume_capacity``, ``volume_limit``);
  ``affinity``: realloc's placement (``affinity_plan``); ``workloads``: what the calculate verbs make of
  them (engine params and workload resources, counts with the storage side).
- ``classes``: a request split the way the scheduler treats it; ``host``: the node's free bytes and quota.
- ``passes``: a pass and the promotion loop; ``enumeration``: a pass's best-fit enumeration of normal
  bindings of sizes alone; ``quotaplans``: that of bindings with disk quotas, and the mount-only case (imported
  only when a request has quotas); ``outcome``: what a pass records.
- ``assembly``: the returned plans, built from the last pass's records.
- ``limits``: why a pass stopped, in words, for ``explain``.

Speed comes from doing less, never from different answers: a pass records only the chosen devices
(plans are built for the plans returned, not for every attempt), disk lookups are cached per path, a
count never builds plans, the mount-only case uses the reference's closed form, the best-fit
enumeration charges a run of identical attempts at once (``quotaplans.Pattern.repeats``) instead of
simulating each, and a request counted over many nodes is classified once (``placement.VolumeCount``).
The property tests compare all of it with a plain transcription of the spec's loop, and the
enumeration with the attempt-by-attempt simulation it replaced (tests/unit/storage/test_scheduler_*.py).
"""
