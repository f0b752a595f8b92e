"""etcd/policy.py, race.py and retry.py without etcd: the endpoint race, rotation and the call's deadline.

The attempts here are plain functions standing in for a transport's connect-and-probe; test_endpoint_race.py
runs the same race against real etcd processes over both transports.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from resource_extend.config import EtcdConfig
from resource_extend.endpoints import Endpoint
from resource_extend.errors import PluginError, StoreUnavailable
from resource_extend.store.etcd import retry
from resource_extend.store.etcd.policy import Policy
from resource_extend.store.etcd.race import Race, Unanswered

URLS = ("http://a:1", "http://b:2", "http://c:3")


def policy(total_timeout: float = 5.0, urls: tuple[str, ...] = URLS) -> Policy:
    chosen = Policy(EtcdConfig(machines=urls, total_timeout=total_timeout))
    chosen.start()
    return chosen


def race(
    chosen: Policy, attempt: Callable[[Endpoint], str], released: list[str] | None = None
) -> tuple[str | None, Race[str]]:
    run: Race[str] = Race(chosen, list(chosen.endpoints), attempt, (released if released is not None else []).append)
    return run.run(), run


def test_the_first_endpoint_to_answer_wins_and_a_late_answer_is_released() -> None:
    silent = threading.Event()
    released: list[str] = []

    def attempt(endpoint: Endpoint) -> str:
        if endpoint.url == URLS[0]:
            silent.wait(5)  # answers only after the race is over
        return endpoint.url

    winner, run = race(policy(), attempt, released)
    assert winner == URLS[1]
    assert run.started == 2 and run.failures == []
    silent.set()
    for _ in range(100):
        if released:
            break
        time.sleep(0.05)
    assert released == [URLS[0]]


def test_every_endpoint_failing_names_each_once_in_the_order_they_failed() -> None:
    def attempt(endpoint: Endpoint) -> str:
        raise Unanswered("Connection refused" if endpoint.url != URLS[1] else "TLS: this member does not serve TLS")

    winner, run = race(policy(), attempt)
    assert winner is None
    assert run.started == 3
    assert run.failures == [
        "http://a:1: Connection refused",
        "http://b:2: TLS: this member does not serve TLS",
        "http://c:3: Connection refused",
    ]


def test_attempts_still_waiting_at_the_deadline_are_named_as_timed_out() -> None:
    never = threading.Event()

    def attempt(endpoint: Endpoint) -> str:
        if endpoint.url == URLS[0]:
            raise StoreUnavailable("etcd unavailable: timed out")  # a request that ran out of the call's time
        never.wait(5)
        return endpoint.url

    winner, run = race(policy(total_timeout=0.3), attempt)
    never.set()
    assert winner is None
    assert run.failures[0] == "http://a:1: timed out"
    assert sorted(run.failures[1:]) == [f"{url}: timed out" for url in URLS[1 : run.started]]


def test_an_answer_that_settles_the_call_ends_the_race_with_its_error() -> None:
    def attempt(endpoint: Endpoint) -> str:
        raise PluginError(f"etcd authentication failed for user 'eru' at {endpoint.url}")

    with pytest.raises(PluginError, match=r"authentication failed .* at http://a:1$"):
        race(policy(), attempt)


def test_a_failed_endpoint_goes_last_and_the_others_keep_their_order() -> None:
    chosen = policy()
    retry.rotate(chosen, chosen.endpoints[0])
    assert [e.url for e in chosen.endpoints] == [URLS[1], URLS[2], URLS[0]]


def test_a_call_that_gives_up_names_each_endpoint_tried_once_with_what_it_did_and_the_others_as_untried() -> None:
    chosen = policy(total_timeout=2)
    failures = [f"{URLS[1]}: HTTP 503: no leader", f"{URLS[1]}: timed out", f"{URLS[1]}: timed out"]
    assert retry.unavailable(chosen, failures) == (
        f"{URLS[1]}: HTTP 503: no leader, then timed out; "
        f"{URLS[0]}, {URLS[2]}: not tried, the call's etcd.total_timeout (2 s) ran out first"
    )
    everyone = [f"{URLS[2]}: Connection refused", f"{URLS[0]}: timed out", f"{URLS[1]}: bad reply: 3 bytes"]
    assert retry.unavailable(chosen, everyone) == "; ".join(everyone)
    alone = policy(urls=(URLS[0],))
    assert retry.unavailable(alone, []) == "timed out"
    assert retry.unavailable(alone, [f"{URLS[0]}: timed out"]) == f"{URLS[0]}: timed out"


def test_past_the_deadline_a_request_is_refused_and_a_dial_is_a_timeout() -> None:
    chosen = policy(total_timeout=0.001)
    time.sleep(0.01)
    with pytest.raises(StoreUnavailable, match=r"^etcd unavailable: timed out$"):
        chosen.request_timeout()
    with pytest.raises(TimeoutError):
        chosen.dial_timeout()


def test_the_read_back_grace_leaves_half_a_second_and_never_goes_past_the_deadline_plus_that() -> None:
    from resource_extend.store.etcd.policy import READ_BACK_GRACE

    roomy = policy(total_timeout=5)
    retry.grace(roomy)  # seconds left: the read-back has time enough already
    assert roomy.left() > 4
    chosen = policy(total_timeout=0.2)
    original = chosen.deadline
    for _ in range(3):  # ambiguous writes in a row, the later ones past the deadline
        retry.grace(chosen)
        assert original < chosen.deadline <= original + READ_BACK_GRACE
        time.sleep(0.25)
    assert chosen.deadline == original + READ_BACK_GRACE
    assert chosen.left() < 0
