"""A test plugin, ``rdma``: RDMA NICs counted per model, declared in the tests alone and never shipped."""
