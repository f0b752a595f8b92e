"""A gateway connection beyond a plain connect to the one configured endpoint: authentication (a config with
``etcd.auth``) and the staggered race among several endpoints (race.py).

gateway.py connects to a single endpoint of a cluster without auth itself, the usual case; this module is
imported for the others, so such a call never loads its code.
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.formats import jsonio
from resource_extend.store.etcd.connection import Connection
from resource_extend.store.etcd.messages import BAD_REPLY, document
from resource_extend.store.etcd.race import Race, Unanswered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.config import EtcdConfig
    from resource_extend.endpoints import Endpoint
    from resource_extend.store.etcd.policy import Policy

    # A new connection, its auth token and, when it was sent while connecting, the answer to a read.
    Greeting = tuple[Connection, str | None, tuple[int, bytes] | None]


def connect(policy: Policy, config: EtcdConfig, failures: list[str], read: tuple[str, bytes] | None) -> Greeting:
    """A new connection to the first endpoint that answers, its auth token, and that endpoint's answer to
    ``read`` when it was sent while connecting (the gateway keeps the connection and the token)."""
    endpoints = policy.endpoints
    if len(endpoints) == 1:
        endpoint = endpoints[0]
        try:
            conn, token, _ = greet(policy, config, endpoint, None)
        except OSError as exc:
            from resource_extend.store.etcd import failing

            raise failing.unreachable(config, endpoint, exc, failures) from None
        return conn, token, None

    def contact(endpoint: Endpoint) -> Greeting:
        """``greet`` as one of the race's attempts."""
        try:
            return greet(policy, config, endpoint, read)
        except OSError as exc:
            from resource_extend.store.etcd import failing

            raise Unanswered(failing.why(config, exc)) from None

    race = Race(policy, list(endpoints), contact, _release)
    found = race.run()
    failures.extend(race.failures)
    if found is None:
        from resource_extend.store.etcd import retry

        raise errors.StoreUnavailable(f"etcd unavailable: {retry.unavailable(policy, failures)}")
    return found


def greet(policy: Policy, config: EtcdConfig, endpoint: Endpoint, read: tuple[str, bytes] | None) -> Greeting:
    """Connect to ``endpoint`` and get its first answer: the auth token when a user is configured,
    else ``read``'s reply, else (several endpoints racing) a status request's. The connection
    counts as answering only then: a port that accepts and never answers must lose the race."""
    conn = Connection.open(endpoint, config, policy.dial_timeout())
    try:
        token = authenticate(policy, config, conn) if config.username else None
        early = None
        if read is not None and token is None:
            early = conn.post(read[0], read[1], None, policy.request_timeout())
        elif read is None and token is None and len(policy.endpoints) > 1:
            status, data = conn.post("/v3/maintenance/status", b"{}", None, policy.request_timeout())
            if status != 200:
                from resource_extend.store.etcd import failing

                raise ConnectionError(failing.explain(status, failing.message(data)))
    except BaseException:
        conn.close()
        raise
    return conn, token, early


def authenticate(policy: Policy, config: EtcdConfig, conn: Connection) -> str:
    """A new auth token for ``config``'s user, asked on ``conn`` (a first connection's, or again once the
    token the gateway kept has expired)."""
    body = jsonio.compact({"name": config.username, "password": config.password}).encode()
    status, data = conn.post("/v3/auth/authenticate", body, None, policy.request_timeout())
    if status != 200:
        from resource_extend.store.etcd import failing

        if "authentication is not enabled" in failing.message(data):
            raise errors.PluginError(
                f"etcd {conn.endpoint.url}: authentication is not enabled on this cluster: "
                "remove etcd.auth from the config"
            )
        # Never echo the reply: it is about the credentials.
        raise errors.PluginError(f"etcd authentication failed for user {config.username!r} at {conn.endpoint.url}")
    try:
        token = document(data).get("token")
    except BAD_REPLY as exc:
        from resource_extend.store.etcd import failing

        raise failing.bad_reply(failing.unreadable(exc, data)) from None
    if not isinstance(token, str) or not token:
        raise errors.PluginError(f"etcd authentication at {conn.endpoint.url} returned no token")
    return token


def _release(found: Greeting) -> None:
    found[0].close()
