"""Read-only collectors: each turns one kind of source into snapshot rows plus source errors.

* :mod:`.files`: server.properties (static broker configs, broker id, log dirs)
* :mod:`.metrics`: Prometheus text (MSK open monitoring, jmx_exporter, node exporter, KIP-511)
* :mod:`.zookeeper`: the ZooKeeper layout of a ZooKeeper-mode cluster (kazoo, pipelined reads)
* :mod:`.collect`: runs them and merges their rows into one snapshot (``kafka-audit collect``)

No collector calls a mutating API; none raises for a failing source.
"""
