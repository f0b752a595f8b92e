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

import plugins as registry
from resource_extend_dev.conformance import run_plugin, write_config
from resource_extend_dev.devetcd import DevEtcd

ROOT = Path(__file__).resolve().parent.parent
# The scenario below places workloads on the shipped plugins, as the registry lists them.
PLUGINS = tuple(registry.SHIPPED)


def _short(value: Any, limit: int = 600) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + f" … ({len(text)} characters)"


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
            print(f"   request : {_short(request)}")
            print(f"   response: {_short(response)}")
        return response

    def say(self, text: str) -> None:
        if not self.as_json:
            print(text)

    def table(self, summary: dict[str, dict[str, Any]]) -> None:
        """Each node's capacity and usage, as the plugins store them."""
        if self.as_json:
            print(json.dumps({"summary": summary}))
            return
        print("\n=== Capacity and usage of both nodes, as stored\n")
        print(f"{'node':<8} {'resource':<18} {'capacity':>14} {'usage':>14}")
        for node, plugins in summary.items():
            for product, count in sorted((plugins["gpu"]["capacity"]["prod_count_map"] or {}).items()):
                used = (plugins["gpu"]["usage"]["prod_count_map"] or {}).get(product, 0)
                print(f"{node:<8} {'gpu ' + product:<18} {count:>14} {used:>14}")
            storage = plugins["storage"]
            print(f"{node:<8} {'storage (GiB)':<18} {storage['capacity']['storage'] / GIB:>14.1f} "
                  f"{storage['usage']['storage'] / GIB:>14.1f}")  # fmt: skip
            for volume, size in sorted((storage["capacity"]["volumes"] or {}).items()):
                used = (storage["usage"]["volumes"] or {}).get(volume, 0)
                print(f"{node:<8} {'volume ' + volume + ' (GiB)':<18} {size / GIB:>14.1f} {used / GIB:>14.1f}")


GIB = 1 << 30
TIB = 1 << 40


class Cluster:
    """What core remembers between calls: the workloads it deployed, per node, per plugin."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.workloads: dict[str, dict[str, list[Any]]] = {}  # node -> plugin -> workload resources

    def add_node(self, node: str, gpus: dict[str, int], storage: dict[str, Any]) -> None:
        info = {"Type": "docker", "ID": node, "NCPU": 32, "MemTotal": 128 * GIB, "StorageTotal": 4 * TIB}
        self.core.call("gpu", "add-node", {"nodename": node, "resource": {"prod_count_map": gpus}, "info": info},
                       f"eru-cli node add {node}: its GPUs")  # fmt: skip
        self.core.call("storage", "add-node", {"nodename": node, "resource": storage, "info": info},
                       f"eru-cli node add {node}: its volumes, disks and storage")  # fmt: skip
        self.workloads[node] = {"gpu": [], "storage": []}

    def capacity(self, nodes: list[str], gpu: dict[str, int], storage: dict[str, Any]) -> dict[str, int]:
        """Deploy capacity per node: the minimum over the plugins, as core combines them."""
        g = self.core.call("gpu", "get-nodes-deploy-capacity",
                           {"nodenames": nodes, "workload_resource": {"prod_count_map": gpu}},
                           "how many such workloads fit, GPU-wise?")  # fmt: skip
        s = self.core.call("storage", "get-nodes-deploy-capacity", {"nodenames": nodes, "workload_resource": storage},
                           "… and storage-wise?")  # fmt: skip
        both = {}
        for node in nodes:
            both[node] = min(
                g["nodes_deploy_capacity_map"].get(node, {}).get("capacity", 0),
                s["nodes_deploy_capacity_map"].get(node, {}).get("capacity", 0),
            )
        return both

    def deploy(self, node: str, gpu: dict[str, int], storage: dict[str, Any]) -> None:
        requests = {"gpu": {"prod_count_map": gpu}, "storage": storage}
        for plugin, request in requests.items():
            plan = self.core.call(plugin, "calculate-deploy",
                                  {"nodename": node, "deploy_count": 1, "workload_resource_request": request},
                                  f"plan one workload on {node}")  # fmt: skip
            resource = plan["workloads_resource"][0]
            self.core.call(plugin, "set-node-resource-usage",
                           {"nodename": node, "resource": None, "resource_request": None,
                            "workloads_resource": [resource], "delta": True, "incr": True},
                           "core commits the plan: usage grows by the workload's resources")  # fmt: skip
            self.workloads[node][plugin].append(resource)

    def realloc(self, node: str, index: int, gpu: dict[str, int], storage: dict[str, Any]) -> None:
        for plugin, request in (("gpu", {"prod_count_map": gpu}), ("storage", storage)):
            current = self.workloads[node][plugin][index]
            change = {"nodename": node, "workload_resource": current, "workload_resource_request": request}
            plan = self.core.call(plugin, "calculate-realloc", change,
                                  f"realloc workload {index} on {node}")  # fmt: skip
            self.core.call(plugin, "set-node-resource-usage",
                           {"nodename": node, "resource": None, "resource_request": None,
                            "workloads_resource": [plan["delta_resource"]], "delta": True, "incr": True},
                           "core applies the realloc's delta")  # fmt: skip
            self.workloads[node][plugin][index] = plan["workload_resource"]


def scenario(core: Core) -> None:
    cluster = Cluster(core)
    core.say("\n=== Two nodes join")
    cluster.add_node("node-1", {"nvidia-3090": 4, "nvidia-a100": 2},
                     {"volumes": ["/data0:1T", "/data1:1T"], "disks": ["/dev/vdb:/data0,/data1:2000:2000:1G:1G"],
                      "storage": "500G"})  # fmt: skip
    small = {"volumes": ["/data0:2T"], "disks": ["/dev/vdb:/data0:1000:1000:500M:500M"], "storage": "1T"}
    cluster.add_node("node-2", {"nvidia-3090": 2}, small)

    core.say("\n=== A deploy of workloads wanting 1 × 3090, a 100 GiB volume with IOPS, and 10 GiB of storage")
    gpu_request = {"nvidia-3090": 1}
    storage_request = {"volumes": ["AUTO:/var/data:rw:100G:100:100:10M:10M"], "storage": "10G"}
    fits = cluster.capacity(["node-1", "node-2"], gpu_request, storage_request)
    core.say(f"\n   core's view, workloads that fit per node: {json.dumps(fits)}")
    for node in ("node-1", "node-1", "node-2"):
        cluster.deploy(node, gpu_request, storage_request)

    core.say("\n=== Realloc workload 0 on node-1: one more 3090, its volume grown by 50 GiB")
    cluster.realloc("node-1", 0, {"nvidia-3090": 1}, {"volumes": ["AUTO:/var/data:rw:50G"]})
    core.say(
        "\n   The storage delta's plan sits under the placeholder key fake-source:fake-destination:fake-flags:…:"
        "\n   a delta is no binding, only its bytes per device count (the Go reference writes the same key)."
    )

    core.say("\n=== Metrics")
    for plugin in PLUGINS:
        core.call(plugin, "get-metrics", {"nodes": [{"podname": "pod", "nodename": n} for n in ("node-1", "node-2")]},
                  f"{plugin} metrics of both nodes")  # fmt: skip

    core.say("\n=== node-2's GPU usage gets corrupted, and is repaired from its workloads")
    core.call("gpu", "set-node-resource-usage",
              {"nodename": "node-2", "resource": None, "resource_request": {"prod_count_map": {"nvidia-3090": 2}},
               "workloads_resource": None, "delta": False, "incr": False},
              "someone overwrites node-2's usage with 2 × 3090 (it runs one workload of 1)")  # fmt: skip
    check = {"nodename": "node-2", "workloads_resource": cluster.workloads["node-2"]["gpu"]}
    found = core.call("gpu", "get-node-resource-info", check, "core checks the node against its workloads")
    assert found["diffs"], "the corruption should show"
    fixed = core.call("gpu", "fix-node-resource", check, "fix-node-resource: usage := the workloads' sum")
    assert fixed["usage"] == {"prod_count_map": {"nvidia-3090": 1}}
    again = core.call("gpu", "get-node-resource-info", check, "checked again: no differences")
    assert again["diffs"] == []

    summary = {}
    for node in ("node-1", "node-2"):
        summary[node] = {
            plugin: core.call(
                plugin,
                "get-node-resource-info",
                {"nodename": node, "workloads_resource": cluster.workloads[node][plugin]},
                f"read {node} back",
            )
            for plugin in PLUGINS
        }
        assert all(info["diffs"] == [] for info in summary[node].values())
    core.table(summary)

    core.say("\n=== node-2 leaves")
    for plugin in PLUGINS:
        core.call(plugin, "remove-node", {"nodename": "node-2"}, f"eru-cli node remove node-2 ({plugin})")
    assert core.call("gpu", "get-node-resource-info", {"nodename": "node-2"}, "gone: the plugin answers null") is None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m resource_extend_dev.demo", description=__doc__)
    parser.add_argument("--json", action="store_true", help="one JSON object per call")
    args = parser.parse_args(argv)
    for plugin in PLUGINS:
        if not (ROOT / f"resource-{plugin}").exists():
            raise SystemExit(f"demo: ./resource-{plugin} is not built; run make build")
    with DevEtcd() as etcd, tempfile.TemporaryDirectory(prefix="eru-plugins-") as plugins:
        plugin_dir = Path(plugins)
        for plugin in PLUGINS:
            (plugin_dir / f"resource-{plugin}").symlink_to(ROOT / f"resource-{plugin}")
            write_config(plugins, plugin, etcd.url, "/eru-demo")
        core = Core(plugin_dir, args.json)
        core.say(f"etcd at {etcd.url}; plugin directory {plugins} (as core's resource_plugin.dir)")
        scenario(core)
    return 0


if __name__ == "__main__":
    sys.exit(main())
