"""Kubernetes workloads that run a Kafka broker image: its configuration is the container's
environment, read by the image's convention (formats/_images.py), as compose files are.

A ``StatefulSet``, ``Deployment``, ``DaemonSet``, ``ReplicaSet`` or ``Pod`` (what ``helm template``
prints for cp-helm-charts' cp-kafka, or a hand-written manifest) whose container image is
``confluentinc/cp-kafka``/``cp-server``, ``apache/kafka``, ``bitnami/kafka`` or
``wurstmeister/kafka``: each ``env`` entry with a literal ``value`` becomes the broker key the
image makes of it, at the entry's line; ``valueFrom`` (a Secret, a field ref), ``envFrom`` and
``$(VAR)`` references that no earlier entry of the container defines are not evaluated (a
warning). ``spec.replicas`` is the broker count (a Pod, a DaemonSet: one); the keys the image
itself sets for what the environment leaves unset are located at the ``image:`` line. Other
workloads (an application with ``KAFKA_BOOTSTRAP_SERVERS``) are passed over.
"""

from __future__ import annotations

import re

from auditor.collectors.files import BROKER
from auditor.lint.formats import _images
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows
from auditor.lint.yaml_fields import YamlDoc, key_line, line, mapping

NAME = "container-env"
UNIT = "document"
KINDS = ("StatefulSet", "Deployment", "DaemonSet", "ReplicaSet", "Pod")
_DEPENDENT = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def _pod_spec(doc: YamlDoc) -> dict:
    spec = mapping(doc.m.get("spec")) or {}
    if doc.kind == "Pod":
        return spec
    return mapping((mapping(spec.get("template")) or {}).get("spec")) or {}


def _kafka_container(doc: YamlDoc):
    import yaml

    containers = _pod_spec(doc).get("containers")
    for c in containers.value if isinstance(containers, yaml.SequenceNode) else []:
        image = doc.ctx.text((mapping(c) or {}).get("image")) or ""
        parsed = _images.parse_image(image)
        conv = _images.convention(parsed)
        if conv is not None:
            return c, parsed, conv
    return None


def recognise(doc: YamlDoc) -> bool:
    return doc.m is not None and doc.kind in KINDS and _kafka_container(doc) is not None


def read(doc: YamlDoc) -> FileRows:
    import yaml

    ctx, rows = doc.ctx, FileRows()
    container, image, conv = _kafka_container(doc)
    c = mapping(container)
    meta = mapping(doc.m.get("metadata")) or {}
    name = f"{doc.kind}/{ctx.text(meta.get('name')) or '?'}"
    image_line = line(c["image"])
    entries = {k: (v, image_line) for k, v in _images.image_defaults(conv).items()}
    env: dict[str, tuple[str | None, int]] = {}
    items = c.get("env")
    for item in items.value if isinstance(items, yaml.SequenceNode) else []:
        e = mapping(item) or {}
        var = ctx.text(e.get("name"))
        if not var:
            continue
        value = ctx.text(e.get("value")) if "value" in e else None
        if value is not None:
            value = _DEPENDENT.sub(lambda m: env.get(m.group(1), (m.group(0), 0))[0] or m.group(0), value)
        env[var] = (value, line(item))
        key = _images.broker_key(conv, var)
        if key is None:
            continue
        if value is None or _DEPENDENT.search(value):
            why = "valueFrom" if "valueFrom" in e else "a $(VAR) reference no earlier entry defines"
            rows.unevaluated.append(
                f"{ctx.file}:{line(item)}: {name} container {ctx.text(c.get('name'))} env {var} ({key}) is "
                f"not evaluated ({why}): the rules on this key not applied to it"
            )
            entries.pop(key, None)
            continue
        entries[key] = (value, line(item))
    if "envFrom" in c:
        rows.unevaluated.append(
            f"{ctx.file}:{key_line(container, 'envFrom', image_line)}: {name} envFrom (a ConfigMap or Secret) is not "
            "evaluated: the keys it sets are not linted"
        )
    roles = {r.strip() for r in entries.get("process.roles", ("", 0))[0].split(",") if r.strip()}
    if roles == {"controller"}:
        rows.notes.append(f"{ctx.file}:{doc.line}: {name} runs KRaft controllers only: not a broker")
        return rows
    spec = mapping(doc.m.get("spec")) or {}
    replicas = (
        ctx.int_field(spec.get("replicas"), "spec.replicas")
        if doc.kind in ("StatefulSet", "Deployment", "ReplicaSet")
        else 1
    )
    facts = ClusterFacts(
        address=name,
        file=ctx.file,
        line=doc.line,
        platform="kubernetes",
        kafka_version=_images.kafka_version(image, conv),
        metadata_mode="kraft" if roles else "zookeeper" if "zookeeper.connect" in entries else None,
    )
    rows.clusters.append(facts)
    rows.brokers.append(
        BrokerFile(
            ctx.file,
            -1,
            entries,
            False,
            BROKER,
            group=name,
            line=key_line(container, "env", image_line),
            cluster=facts,
            brokers=replicas if replicas is not None else 1,
        )
    )
    return rows
