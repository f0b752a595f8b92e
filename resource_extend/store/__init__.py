"""The node store: node records in etcd (nodes.py), the early read a call sends before its code loads
(prefetch.py), and the etcd client both sit on (etcd/), which knows nothing of records or verbs."""
