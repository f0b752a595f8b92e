"""``make demo``: play eru core against a throwaway etcd, calling the built executables as core does.

Each step prints the verb, the request and the response. ``--json`` prints one JSON object per call
instead, for machines.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from resource_extend.conformance import run_plugin, write_config
from resource_extend.devetcd import DevEtcd

ROOT = Path(__file__).resolve().parent.parent


class Core:
    """Calls plugin executables the way core does, and tells the reader what happened."""

    def __init__(self, plugin_dir: Path, as_json: bool) -> None:
        self.dir = plugin_dir
        self.as_json = as_json

    def call(self, plugin: str, verb: str, request: dict[str, Any], why: str) -> Any:
        out = run_plugin(str(self.dir / f"resource-{plugin}"), verb, json.dumps(request).encode(), str(self.dir))
        if out.status != 0:
            raise SystemExit(f"demo: resource-{plugin} {verb} failed ({out.status}): {out.stderr.strip()}")
        response = json.loads(out.stdout)
        if self.as_json:
            print(json.dumps({"plugin": plugin, "verb": verb, "request": request, "response": response}))
        else:
            print(f"\n── {why}\n   $ resource-{plugin} {verb}")
            print(f"   request : {json.dumps(request)}")
            print(f"   response: {json.dumps(response)}")
        return response

    def say(self, text: str) -> None:
        if not self.as_json:
            print(text)


def gpu_scenario(core: Core) -> None:
    core.say("\n=== GPU: one node with 4 × nvidia-3090 and 2 × nvidia-a100")
    cards = {"prod_count_map": {"nvidia-3090": 4, "nvidia-a100": 2}}
    info = {"NCPU": 32, "MemTotal": 137438953472}
    core.call("gpu", "add-node", {"nodename": "node-1", "resource": cards, "info": info},
              "eru-cli node add: register the node's cards")  # fmt: skip
    want = {"prod_count_map": {"nvidia-3090": 2}}
    cap = core.call("gpu", "get-nodes-deploy-capacity", {"nodenames": ["node-1"], "workload_resource": want},
                    "how many workloads wanting 2 × 3090 fit?")  # fmt: skip
    assert cap["total"] == 2
    deploy = {"nodename": "node-1", "deploy_count": 1, "workload_resource_request": want}
    plan = core.call("gpu", "calculate-deploy", deploy, "plan one workload")
    core.call("gpu", "set-node-resource-usage", {"nodename": "node-1", "resource": None, "resource_request": None,
              "workloads_resource": plan["workloads_resource"], "delta": True, "incr": True},
              "core commits the plan: usage grows by the workload's cards")  # fmt: skip
    current = plan["workloads_resource"][0]
    grow = core.call("gpu", "calculate-realloc", {"nodename": "node-1", "workload_resource": current,
                     "workload_resource_request": {"prod_count_map": {"nvidia-3090": -1, "nvidia-a100": 1}}},
                     "realloc: swap one 3090 for an a100")  # fmt: skip
    core.call("gpu", "set-node-resource-usage", {"nodename": "node-1", "resource": grow["delta_resource"],
              "resource_request": None, "workloads_resource": None, "delta": True, "incr": True},
              "core applies the realloc's delta")  # fmt: skip
    check = {"nodename": "node-1", "workloads_resource": [grow["workload_resource"]]}
    info = core.call("gpu", "get-node-resource-info", check, "read the node back, checked against its one workload")
    assert info["usage"] == {"prod_count_map": {"nvidia-3090": 1, "nvidia-a100": 1}} and info["diffs"] == []
    core.say("\n   node-1 capacity {3090: 4, a100: 2}, usage {3090: 1, a100: 1}: no differences.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m resource_extend.demo", description=__doc__)
    parser.add_argument("--json", action="store_true", help="one JSON object per call")
    args = parser.parse_args(argv)
    for plugin in ("gpu",):
        if not (ROOT / f"resource-{plugin}").exists():
            raise SystemExit(f"demo: ./resource-{plugin} is not built; run make build")
    with DevEtcd() as etcd, tempfile.TemporaryDirectory(prefix="eru-plugins-") as plugins:
        plugin_dir = Path(plugins)
        for plugin in ("gpu",):
            (plugin_dir / f"resource-{plugin}").symlink_to(ROOT / f"resource-{plugin}")
            write_config(plugins, plugin, etcd.url, "/eru-demo")
        core = Core(plugin_dir, args.json)
        core.say(f"etcd at {etcd.url}; plugin directory {plugins} (as core's resource_plugin.dir)")
        gpu_scenario(core)
    return 0


if __name__ == "__main__":
    sys.exit(main())
