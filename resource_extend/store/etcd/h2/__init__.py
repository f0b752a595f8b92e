"""Unary gRPC calls over HTTP/2 with prior knowledge (h2c), for the gateway's bulk reads only
(gatewaybulk.py): the connection and its frames (client.py), HPACK (hpack.py) and etcd's ``KV/Range``
messages on the wire (protobuf.py). Nothing else in the project imports this package."""
