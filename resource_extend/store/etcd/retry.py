"""What both transports do between a failed attempt and the next: the endpoint order, the pauses, the grace.

The call's ``Policy`` (policy.py) holds the deadline and the endpoint order every request reads; this
module changes them, and only a call that met a failure imports it.
"""

from __future__ import annotations

import time

from resource_extend.store.etcd.policy import READ_BACK_GRACE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.endpoints import Endpoint
    from resource_extend.store.etcd.policy import Policy


def grace(policy: Policy) -> None:
    """Leave a guarded write whose answer could not be read time to read its key back, even when the
    answer took all the call's time: else such a call could only end "outcome unknown". Never past
    the deadline plus READ_BACK_GRACE, however many writes were ambiguous."""
    policy.deadline = min(policy.limit, max(policy.deadline, time.monotonic() + READ_BACK_GRACE))


def rotate(policy: Policy, failed: Endpoint) -> None:
    # The next connection starts with the endpoints that have not just failed.
    if failed in policy.endpoints:
        policy.endpoints.remove(failed)
        policy.endpoints.append(failed)


def pause(policy: Policy, retry: int) -> None:
    """A growing pause before the ``retry``-th resend (from 0), so that an election can finish."""
    time.sleep(min(0.05 * 2**retry, 0.5, max(policy.left(), 0)))


def unavailable(policy: Policy, failures: list[str]) -> str:
    """Why no endpoint answered, for ``etcd unavailable: …``: each endpoint tried and what it did (each of its
    failures once, in order: ``<url>: <why>``), and, of several configured, those never tried and why. One
    member named alone, of three configured, said nothing of the other two."""
    said: dict[str, list[str]] = {}
    loose: list[str] = []
    urls = {endpoint.url for endpoint in policy.endpoints}
    for failure in failures:
        url, found, why = failure.partition(": ")
        if found and url in urls:
            whys = said.setdefault(url, [])
            if why not in whys:
                whys.append(why)
        elif failure not in loose:
            loose.append(failure)
    parts = [f"{url}: {', then '.join(whys)}" for url, whys in said.items()]
    untried = [endpoint.url for endpoint in policy.endpoints if endpoint.url not in said]
    if untried and len(policy.endpoints) > 1:
        total = policy.total_timeout
        parts.append(f"{', '.join(untried)}: not tried, the call's etcd.total_timeout ({total:g} s) ran out first")
    return "; ".join(parts + loose) or "timed out"


def backoff(attempt: int) -> None:
    """Sleep a jittered, growing pause before retrying a guarded write lost to another writer (the store's)."""
    import random  # only a lost race pays for it

    time.sleep(random.uniform(0, min(0.1, 0.005 * (2**attempt))))  # jitter, not crypto
