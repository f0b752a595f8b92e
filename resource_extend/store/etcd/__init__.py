"""etcd as the node store reaches it: ``transport.open(config)`` returns the ``KV`` of the configured transport.

One job per module:

- kv.py: the ``Entry`` the store reads, the single-key check (the ``KV`` protocol it uses: protocol.py);
- chunks.py: the plan of a read of many keys (chunks, counted, each its span or point reads);
- endpoints.py: ``etcd.machines`` URLs, parsed once when the config is loaded;
- policy.py: one call's deadline and endpoint order; retry.py: what a failure changes of them (rotation,
  paced retries, the read-back grace); race.py: the staggered endpoint race; all shared by both transports;
- dial.py: a TCP connection within one timeout, a host name resolved within it (leaf);
- messages.py: the gateway's paths, its answers' JSON and what a bad answer raises (leaf);
- failing.py: what follows a failure: its words, the retry or the give-up, the ambiguous write;
- http1.py: HTTP/1.1 replies parsed from bytes, each held to ``MAX_REPLY`` (leaf);
- connection.py: one kept-alive HTTP/1.1 connection, feeding http1.py; tls.py for ``https://`` members only;
- gateway.py: ``KV`` over the v3 JSON gateway (the default); its reads of many keys are gatewaybulk.py's
  (over h2/, etcd's gRPC API spoken on a plain socket, where it can), its auth and several endpoints
  greeting.py's, and what follows a failure failing.py's, each imported only then;
- grpc.py: ``KV`` over the native gRPC API (``etcd.transport: grpc``, the grpc extra);
- transport.py: ``open(config)``, the ``KV`` of the configured transport.

Arrows point one way (pyproject.toml's layers contract; tests/unit/store/test_etcd_state_owner.py holds it to
type-only imports too): gateway -> gatewaybulk, greeting -> connection -> failing -> tls -> dial, each of them
-> messages, kv, policy, retry. Each module's state is its own: gatewaybulk, greeting and failing take what they
need of ``GatewayKV`` as arguments and return what it keeps (docs/architecture.md, "The etcd client"). This
package's ``__init__`` imports nothing: every call loads it (config.py parses endpoints), while only a call that
uses the store loads a client, and only a grpc call loads grpc.
"""
