"""The AWS sources' failures as one line each (auditor/collectors/msk.py and the modules it runs:
msk_topics.py, msk_cloudwatch.py): the API call / IAM action and what went wrong."""

from __future__ import annotations

from auditor.collectors._common import one_line

SOURCE = "msk"
MAX_ATTEMPTS = 5  # botocore standard retry mode: throttling and transient errors, exponential backoff
_DENIED = (
    "AccessDeniedException",
    "AccessDenied",
    "ForbiddenException",
    "UnauthorizedException",
    "UnauthorizedOperation",
)


# The IAM actions an API call needs when they are not the call's own name (AWS, "Topic Operations":
# https://docs.aws.amazon.com/msk/latest/developerguide/msk-view-topic-information.html).
IAM_ACTIONS = {
    "kafka:ListTopics": "kafka-cluster:Connect and kafka-cluster:DescribeTopic on the cluster ARN",
    "kafka:DescribeTopic": "kafka-cluster:Connect, kafka-cluster:DescribeTopic and "
    "kafka-cluster:DescribeTopicDynamicConfiguration on the topic ARNs",
    "kafka:DescribeTopicPartitions": "kafka-cluster:Connect, kafka-cluster:DescribeTopic and "
    "kafka-cluster:DescribeTopicDynamicConfiguration on the topic ARNs",
}


def describe_failure(error: Exception, action: str, target: str) -> str:
    """One line naming the API call / IAM action and what went wrong."""
    from botocore.exceptions import ClientError, NoCredentialsError, NoRegionError

    if isinstance(error, ClientError):
        err = error.response.get("Error", {})
        code, message = err.get("Code") or "error", one_line(err.get("Message") or "", 200)
        if code in _DENIED or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 403:
            what = IAM_ACTIONS.get(action, "it")
            return f"{action} denied for {target} ({code}): allow {what} in the IAM policy (README: AWS MSK source)"
        if code in ("TooManyRequestsException", "ThrottlingException"):
            return f"{action} for {target}: still throttled after {MAX_ATTEMPTS} attempts ({code})"
        return f"{action} for {target} failed: {code}" + (f": {message}" if message else "")
    if isinstance(error, NoCredentialsError):
        return f"{action} for {target}: no AWS credentials (the standard chain: environment, profile, role)"
    if isinstance(error, NoRegionError):
        return f"{action} for {target}: no AWS region (give the cluster ARN, --msk-region or AWS_REGION)"
    return f"{action} for {target} failed: {type(error).__name__}: {one_line(error, 200)}"
