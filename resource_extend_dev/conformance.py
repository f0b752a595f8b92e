"""Conformance kit: run vectors against any eru resource plugin executable and a throwaway etcd.

    .venv/bin/resource-extend-conformance --gpu ./resource-gpu --storage ./resource-storage [VECTOR.jsonl ...]

(`make venv` installs the command; `.venv/bin/python -m resource_extend_dev.conformance` is the same.)

Each case seeds etcd, runs one verb the way core does (cwd = a plugin directory holding the plugin's
yaml, JSON on stdin, a timeout), then compares the exit status, the JSON on stdout and the records left
in etcd, and checks every successful response against the verb's response schema under schemas/.
The vector format is described in tests/vectors/VECTOR_FORMAT.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plugins as registry
from resource_extend_dev.devetcd import DevEtcd

CALL_TIMEOUT = 30.0  # core's default call_timeout
# The checkout's vectors: what the kit runs when none are named, so that it runs from any directory.
VECTORS = Path(__file__).resolve().parent.parent / "tests" / "vectors"


@dataclass(frozen=True)
class Outcome:
    status: int
    stdout: str
    stderr: str


def load_cases(paths: list[str]) -> list[dict[str, Any]]:
    cases = []
    for path in paths:
        for number, line in enumerate(Path(path).read_text().splitlines(), 1):
            if line.strip():
                case = json.loads(line)
                case.setdefault("id", f"{path}:{number}")
                cases.append(case)
    return cases


def run_plugin(
    exe: str,
    verb: str,
    stdin: bytes,
    cwd: str,
    timeout: float = CALL_TIMEOUT,
    env: dict[str, str] | None = None,
) -> Outcome:
    """One call as core makes it: argv[1] is the verb, the request on stdin, cwd the plugin directory."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    done = subprocess.run([exe, verb], input=stdin, cwd=cwd, capture_output=True, timeout=timeout, env=env)
    return Outcome(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))


def write_config(directory: str, plugin: str, etcd_url: str, prefix: str, extra: dict[str, Any] | None = None) -> None:
    config: dict[str, Any] = {"etcd": {"machines": [etcd_url], "prefix": prefix}}
    config.update(extra or {})
    Path(directory, f"{plugin}.yaml").write_text(json.dumps(config))  # JSON is valid YAML


def check_case(case: dict[str, Any], exe: str, etcd: DevEtcd, prefix: str) -> str | None:
    """None when the executable meets the case, else why not."""
    plugin = case["plugin"]
    with tempfile.TemporaryDirectory(prefix="conformance-") as work:
        write_config(work, plugin, etcd.url, prefix, case.get("config"))
        for node, record in (case.get("store") or {}).items():
            etcd.put(f"{prefix}/resource/{plugin}/{node}", json.dumps(record))
        stdin = case["stdin_raw"] if "stdin_raw" in case else json.dumps(case.get("request", {}))
        try:
            out = run_plugin(exe, case["verb"], stdin.encode(), work)
        except subprocess.TimeoutExpired:
            return "timed out"
    return verdict(case, out) or store_verdict(case, etcd, prefix)


def verdict(case: dict[str, Any], out: Outcome) -> str | None:
    expect = case["expect"]
    unordered = case.get("unordered")
    if expect.get("exit", 0) == 0:
        if out.status != 0:
            return f"exit {out.status}, wanted 0; stderr: {out.stderr.strip()[:300]}"
        if out.stderr:
            return f"stderr not empty on success: {out.stderr.strip()[:200]}"
        try:
            got = json.loads(out.stdout)
        except ValueError:
            return f"stdout is not JSON: {out.stdout[:200]!r}"
        schema_problem = schema_verdict(case, got)
        if schema_problem:
            return schema_problem
        if "response" in expect:
            want = normalise(expect["response"], unordered)
            have = normalise(got, unordered)
            ok = subset(want, have) if case.get("match") == "subset" else equal(want, have)
            if not ok:
                return f"response {canon(got)[:500]} != expected {canon(expect['response'])[:500]}"
        return None
    if out.status == 0:
        return f"exit 0, wanted a failure; stdout: {out.stdout[:200]!r}"
    if out.stdout:
        return f"stdout not empty on failure: {out.stdout[:200]!r}"
    needle = (expect.get("error_contains") or "").lower()
    if needle and needle not in out.stderr.lower():
        return f"stderr lacks {needle!r}: {out.stderr.strip()[:300]}"
    return None


def schema_verdict(case: dict[str, Any], response: Any) -> str | None:
    """A successful response must match the verb's response schema under schemas/ (the plugin contract), or
    under the schema directory of a plugin the registry declares elsewhere (the tests' own)."""
    from resource_extend.errors import PluginError
    from resource_extend.formats import validation

    plugin = case["plugin"]
    schemas = registry.plugin(plugin).schemas if plugin in registry.names() else None
    try:
        validation.check(plugin, case["verb"], "response", response, schemas)
    except PluginError as exc:
        return str(exc)
    return None


def store_verdict(case: dict[str, Any], etcd: DevEtcd, prefix: str) -> str | None:
    for node, want in (case.get("store_after") or {}).items():
        raw = etcd.get(f"{prefix}/resource/{case['plugin']}/{node}")
        have = None if raw is None else json.loads(raw)
        if want is None:
            if have is not None:
                return f"record {node} should be gone, holds {raw}"
            continue
        ok = subset(want, have) if case.get("match") == "subset" else equal(want, have)
        if not ok:
            return f"record {node} {canon(have)[:300]} != expected {canon(want)[:300]}"
    return None


def canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def normalise(value: Any, unordered: list[str] | None) -> Any:
    keys = unordered or []
    if "." in keys and isinstance(value, list):
        return sorted(value, key=canon)
    if isinstance(value, dict):
        return {k: sorted(v, key=canon) if k in keys and isinstance(v, list) else v for k, v in value.items()}
    return value


def _same_number(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return bool(a == b)


def equal(want: Any, have: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(have, dict) and want.keys() == have.keys() and all(equal(want[k], have[k]) for k in want)
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(map(equal, want, have))
    return _same_number(want, have)


def subset(want: Any, have: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and subset(v, have[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(map(subset, want, have))
    return _same_number(want, have)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="resource-extend-conformance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    for name in registry.SHIPPED:  # --gpu PATH, --storage PATH: one flag per plugin
        parser.add_argument(f"--{name}", help=f"path of a resource-{name} executable")
    parser.add_argument("-k", help="only cases whose id contains this text")
    parser.add_argument("vectors", nargs="*", help=f"vector files (default: every one in {VECTORS})")
    args = parser.parse_args(argv)
    vectors = args.vectors or [str(p) for p in sorted(VECTORS.glob("*.jsonl"))]
    missing = [path for path in vectors if not Path(path).is_file()]
    if missing or not vectors:
        # A relative path pasted in another directory: one line, not a traceback.
        what = f"no vector file {missing[0]}" if missing else f"no vector files in {VECTORS}"
        parser.exit(2, f"resource-extend-conformance: {what} (the checkout's are in {VECTORS})\n")
    paths = {name: getattr(args, name) for name in registry.SHIPPED}
    exes = {name: str(Path(path).resolve()) for name, path in paths.items() if path}
    cases = [c for c in load_cases(vectors) if c["plugin"] in exes and (not args.k or args.k in c["id"])]
    passed = failed = 0
    with DevEtcd() as etcd:
        for n, case in enumerate(cases):
            why = check_case(case, exes[case["plugin"]], etcd, f"/conformance/{n}")
            if why is None:
                passed += 1
                print(f"ok   {case['id']}")
            else:
                failed += 1
                print(f"FAIL {case['id']}: {why}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
