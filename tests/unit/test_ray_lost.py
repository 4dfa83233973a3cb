"""A study's next batch finds its Ray head gone: that is a lost head (exit 5, "start the
cluster again and run the same command"), not a mistyped address (exit 2) -- the head answered
this command's earlier batches."""

from __future__ import annotations

import pytest

from mjrig.campaign import ray_cluster
from mjrig.runtime.errors import ClusterLost, ConfigError


def test_a_head_gone_between_batches_is_lost_not_mistyped(monkeypatch):
    def refused(address: str):
        raise ConfigError(f"--ray {address}: no Ray cluster answers there (Connection refused)")

    monkeypatch.setattr(ray_cluster, "connect", refused)
    with pytest.raises(ConfigError, match="no Ray cluster answers there"):  # the first batch: the address
        ray_cluster.run_on_ray(None, [], lambda row: None, address="127.0.0.1:6379")
    with pytest.raises(ClusterLost, match="the Ray head stopped answering; every finished trial is kept"):
        ray_cluster.run_on_ray(None, [], lambda row: None, address="127.0.0.1:6379", again=True)
