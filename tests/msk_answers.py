"""Answering MSK and CloudWatch calls by their parameters, validated against botocore's model.

botocore's Stubber answers from a queue in call order, which concurrent calls (the MSK topic
APIs run on several threads) cannot follow. :class:`ModelAnswers` uses Stubber's own mechanism
instead, answering by the call's parameters: the request is validated by botocore's parameter
validation as every real call is, the response against the operation's output shape with
``botocore.validate.validate_parameters`` (what ``Stubber.add_response`` does), and it is
returned from the same ``before-call`` event Stubber uses. An error answer is shaped as
``Stubber.add_client_error`` shapes it. ``latency`` sleeps in that hook: a simulated round trip.

:class:`FakeTopics` is a cluster's topic state (names, partitions, replicas, ISR, Base64
configs) answering ListTopics / DescribeTopic / DescribeTopicPartitions with the paging the
model declares (MaxResults <= 100, NextToken).
"""

from __future__ import annotations

import base64
import threading
import time

from botocore.awsrequest import AWSResponse
from botocore.validate import validate_parameters


class ModelAnswers:
    def __init__(self, client, answer, *, latency: float = 0.0):
        self.answer = answer  # (operation, params) -> response dict | ("error", code, status)
        self.latency = latency
        self.calls: list[str] = []
        self._lock = threading.Lock()
        service = client.meta.service_model.service_name
        client.meta.events.register_first(f"before-parameter-build.{service}.*", self._keep_params)
        client.meta.events.register(f"before-call.{service}.*", self._respond)

    @staticmethod
    def _keep_params(params, context, **_):
        context["answer_params"] = dict(params)

    def _respond(self, model, context, **_):
        params = context.get("answer_params", {})
        with self._lock:
            self.calls.append(model.name)
        if self.latency:
            time.sleep(self.latency)
        got = self.answer(model.name, params)
        if isinstance(got, tuple) and got[0] == "error":
            _, code, status = got
            parsed = {
                "Error": {"Code": code, "Message": "denied by policy" if status == 403 else code},
                "ResponseMetadata": {"HTTPStatusCode": status},
            }
            return AWSResponse(None, status, {}, None), parsed
        validate_parameters(got, model.output_shape)
        return AWSResponse(None, 200, {}, None), got


class FakeTopics:
    """``count`` topics ``t00000`` ... of ``partitions`` partitions, RF 3 over ``brokers``;
    ``lagging``: {topic: broker} whose replica is out of the ISR; ``configs``: {topic: text}."""

    def __init__(self, count: int, *, partitions: int = 3, brokers=(1, 2, 3), lagging=None, configs=None):
        self.brokers = list(brokers)
        self.partitions = partitions
        self.names = [f"t{i:05d}" for i in range(count)]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.lagging = dict(lagging or {})
        self.configs = dict(configs or {})
        self.gone: set[str] = set()
        self.errors: dict[str, tuple] = {}  # operation -> ("error", code, status)

    def replicas(self, topic: str, p: int) -> list[int]:
        n = len(self.brokers)
        start = self.index.get(topic, 0) + p
        return [self.brokers[(start + k) % n] for k in range(min(3, n))]

    def isr(self, topic: str, p: int) -> list[int]:
        return [b for b in self.replicas(topic, p) if self.lagging.get(topic) != b]

    def out_of_sync(self, topic: str) -> int:
        return sum(len(self.replicas(topic, p)) - len(self.isr(topic, p)) for p in range(self.partitions))

    def answer(self, operation: str, params: dict):
        if operation in self.errors:
            return self.errors[operation]
        if operation == "ListTopics":
            size = params.get("MaxResults", 100)
            start = int(params.get("NextToken") or 0)
            page = self.names[start : start + size]
            out = {
                "Topics": [
                    {
                        "TopicArn": f"arn:aws:kafka:eu-west-1:123456789012:topic/payments/5f3a1c2e-2/{t}",
                        "TopicName": t,
                        "PartitionCount": self.partitions,
                        "ReplicationFactor": 3,
                        "OutOfSyncReplicaCount": self.out_of_sync(t),
                    }
                    for t in page
                ]
            }
            if start + size < len(self.names):
                out["NextToken"] = str(start + size)
            return out
        topic = params.get("TopicName")
        if topic in self.gone or topic not in self.index:
            return ("error", "NotFoundException", 404)
        if operation == "DescribeTopic":
            text = self.configs.get(topic, "")
            return {
                "TopicArn": f"arn:aws:kafka:eu-west-1:123456789012:topic/payments/5f3a1c2e-2/{topic}",
                "TopicName": topic,
                "PartitionCount": self.partitions,
                "ReplicationFactor": 3,
                "Configs": base64.b64encode(text.encode()).decode(),
                "Status": "ACTIVE",
            }
        if operation == "DescribeTopicPartitions":
            size = params.get("MaxResults", 100)
            start = int(params.get("NextToken") or 0)
            out = {
                "Partitions": [
                    {
                        "Partition": p,
                        "Leader": self.isr(topic, p)[0],
                        "Replicas": self.replicas(topic, p),
                        "Isr": self.isr(topic, p),
                    }
                    for p in range(start, min(start + size, self.partitions))
                ]
            }
            if start + size < self.partitions:
                out["NextToken"] = str(start + size)
            return out
        raise AssertionError(f"unexpected call {operation}")


def skip_retry_sleeps(monkeypatch) -> list[float]:
    """botocore's retry waits, recorded and skipped; every other caller of time.sleep (one
    function for the whole process) still sleeps, or a thread of another test still running
    would spin (a patched sleep counted 69,000 calls of py4j's one-second loop, issue 47)."""
    import sys

    slept: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds):
        if sys._getframe(1).f_globals.get("__name__") == "botocore.endpoint":
            slept.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr("botocore.endpoint.time.sleep", sleep)
    return slept
