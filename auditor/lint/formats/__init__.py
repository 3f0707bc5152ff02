"""The input formats lint reads, one module each, and the one list the reader loops over.

Every format module has ``NAME``, ``UNIT`` and two functions:

- ``UNIT = "file"``: ``recognise(src: Source) -> bool`` (by suffix or by content) and
  ``read(src) -> FileRows`` over a whole file (properties, Terraform, a Terraform plan,
  CloudFormation, Helm values);
- ``UNIT = "document"``: ``recognise(doc: YamlDoc) -> bool`` and ``read(doc) -> FileRows``
  over one document of a YAML file (formats mix freely in multi-document YAML).

The first format in :data:`FORMATS` that recognises a file (or a document) reads it, so the
order matters where two could: JulieOps and topicctl before a plain topic list; the YAML file
formats recognised by their top-level keys (CloudFormation, compose ``services:``, cp-ansible's
``kafka_broker`` group, Helm values) before the per-document ones. A template of any of them
is read through auditor/lint/templating.py, standard input (``lint -``) as a YAML file.
"""

from __future__ import annotations

from auditor.lint.formats import (
    ansible,
    cfk,
    cloudformation,
    compose,
    container_env,
    helm,
    jikkou,
    julieops,
    kafka_gitops,
    properties,
    strimzi,
    terraform,
    terraform_plan,
    topic_list,
    topicctl,
)

FORMATS = (
    properties,
    terraform,
    terraform_plan,
    cloudformation,
    compose,
    ansible,
    helm,
    strimzi,
    cfk,
    container_env,
    jikkou,
    julieops,
    topicctl,
    topic_list,
    kafka_gitops,
)

FILE_FORMATS = tuple(f for f in FORMATS if f.UNIT == "file")
DOCUMENT_FORMATS = tuple(f for f in FORMATS if f.UNIT == "document")
