"""The AWS sources' failures as one line each (auditor/collectors/msk.py and the modules it runs:
msk_topics.py, msk_cloudwatch.py): the API call / IAM action and what went wrong.

A call AWS denied, or still throttled after botocore's retries, is one line of one shape whatever
the call: the action, the resource it was called on, and what to do: the IAM permission to grant
(on which resource), or, throttled, that AWS's rate limit and not a permission stopped it::

    kafka:DescribeTopicPartitions denied for arn:aws:kafka:...:topic/payments/UUID/orders
    (AccessDeniedException): allow kafka-cluster:Connect on arn:aws:kafka:...:cluster/payments/UUID and
    kafka-cluster:DescribeTopic and kafka-cluster:DescribeTopicDynamicConfiguration on
    arn:aws:kafka:...:topic/payments/UUID/* in the IAM policy (README: AWS MSK source)

It is the source error in the manifest and, as recorded in its ``aws`` field ({action, resource,
kind}), the line every command prints on stderr when it collects (auditor/commands/collect.py),
where the user looks: a run that is incomplete (exit 3) says which permission is missing.
"""

from __future__ import annotations

from auditor.collectors._common import one_line, source_error

SOURCE = "msk"
MAX_ATTEMPTS = 5  # botocore standard retry mode: throttling and transient errors, exponential backoff
_DENIED = (
    "AccessDeniedException",
    "AccessDenied",
    "ForbiddenException",
    "UnauthorizedException",
    "UnauthorizedOperation",
)
_THROTTLED = ("TooManyRequestsException", "ThrottlingException", "Throttling", "RequestLimitExceeded")
DENIED, THROTTLED = "denied", "throttled"
MAX_LINE = 1200


def topic_arn(cluster_arn: str, topic: str = "*") -> str:
    """The IAM resource of a topic of an MSK cluster (AWS: arn:aws:kafka:REGION:ACCOUNT:topic/
    CLUSTER_NAME/CLUSTER_UUID/TOPIC); ``*``: every topic of the cluster."""
    return cluster_arn.replace(":cluster/", ":topic/", 1) + "/" + topic


def permission(action: str, resource: str, cluster_arn: str | None = None) -> str:
    """The IAM permission(s) to grant for ``action`` on ``resource``, with the resources they take.
    The topic APIs need the kafka-cluster actions AWS lists for them ("Topic Operations":
    https://docs.aws.amazon.com/msk/latest/developerguide/msk-view-topic-information.html);
    CloudWatch's GetMetricData and EC2's DescribeSubnets take no resource-level permission."""
    cluster = cluster_arn or resource
    topics = topic_arn(cluster) if ":cluster/" in cluster else "the cluster's topic ARNs"
    if action == "kafka:ListTopics":
        return f"kafka-cluster:Connect and kafka-cluster:DescribeTopic on {cluster} and on {topics}"
    if action in ("kafka:DescribeTopic", "kafka:DescribeTopicPartitions"):
        return (
            f"kafka-cluster:Connect on {cluster} and kafka-cluster:DescribeTopic and "
            f"kafka-cluster:DescribeTopicDynamicConfiguration on {topics}"
        )
    if action.startswith(("cloudwatch:", "ec2:")) or action == "kafka:ListClustersV2":
        return f"{action} on * (it takes no resource-level permission)"
    return f"{action} on {resource}"


def kind_of(error: Exception) -> str | None:
    """DENIED, THROTTLED (past botocore's retries) or None."""
    from botocore.exceptions import ClientError

    if not isinstance(error, ClientError):
        return None
    code = error.response.get("Error", {}).get("Code") or ""
    if code in _DENIED or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 403:
        return DENIED
    if code in _THROTTLED:
        return THROTTLED
    return None


def describe_failure(error: Exception, action: str, target: str, *, cluster_arn: str | None = None) -> str:
    """One line naming the API call / IAM action, the resource ``target`` and what went wrong."""
    from botocore.exceptions import ClientError, NoCredentialsError, NoRegionError

    if isinstance(error, ClientError):
        err = error.response.get("Error", {})
        code, message = err.get("Code") or "error", one_line(err.get("Message") or "", 200)
        kind = kind_of(error)
        if kind == DENIED:
            grant = permission(action, target, cluster_arn)
            return f"{action} denied for {target} ({code}): allow {grant} in the IAM policy (README: AWS MSK source)"
        if kind == THROTTLED:
            return (
                f"{action} for {target}: still throttled after {MAX_ATTEMPTS} attempts ({code}): AWS's "
                "request rate, not a permission: collect again later, or fewer clusters at once (--parallel)"
            )
        return f"{action} for {target} failed: {code}" + (f": {message}" if message else "")
    if isinstance(error, NoCredentialsError):
        return f"{action} for {target}: no AWS credentials (the standard chain: environment, profile, role)"
    if isinstance(error, NoRegionError):
        return f"{action} for {target}: no AWS region (give the cluster ARN, --msk-region or AWS_REGION)"
    return f"{action} for {target} failed: {type(error).__name__}: {one_line(error, 200)}"


def failure(
    error: Exception, action: str, target: str, *, cluster_arn: str | None = None, source: str = SOURCE
) -> dict:
    """The source error of a failed AWS call; a denied or throttled one records ``aws``: what the
    commands print (aws_lines)."""
    out = source_error(source, cluster_arn or target, "")
    # the whole line: three ARNs and a topic name of up to 249 characters outgrow one_line's default
    out["message"] = one_line(describe_failure(error, action, target, cluster_arn=cluster_arn), MAX_LINE)
    kind = kind_of(error)
    if kind is not None:
        out["aws"] = {"action": action, "resource": target, "kind": kind}
    return out


def aws_lines(errors) -> list[str]:
    """The lines to print for the denied and throttled AWS calls among source errors."""
    return [f"{e.get('source')}: {e.get('message')}" for e in errors if isinstance(e.get("aws"), dict)]
