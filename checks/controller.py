"""CTL: controller and metadata (ZooKeeper and KRaft)."""
