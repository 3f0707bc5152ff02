"""Client settings for the Admin API collector from a Kafka CLI ``client.properties`` (``--command-config``).

The file is read with the Java properties parser of :mod:`auditor.collectors.files` and
mapped onto librdkafka (confluent-kafka) settings. Java key -> librdkafka key:

==========================================  ===============================================
``bootstrap.servers``                       ``bootstrap.servers`` (``--bootstrap-servers`` wins)
``security.protocol``                       ``security.protocol`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
``ssl.truststore.location`` (type PEM)      ``ssl.ca.location``
``ssl.truststore.certificates`` (PEM text)  ``ssl.ca.pem``
``ssl.truststore.type`` JKS / PKCS12        rejected: librdkafka reads no Java truststore; export
                                            the CA as PEM (``keytool -exportcert -rfc``)
``ssl.keystore.location`` (type PKCS12)     ``ssl.keystore.location`` + ``ssl.keystore.password``
``ssl.keystore.location`` (type PEM)        ``ssl.certificate.location`` + ``ssl.key.location`` (same file)
``ssl.keystore.certificate.chain`` (PEM)    ``ssl.certificate.pem``
``ssl.keystore.key`` (PEM)                  ``ssl.key.pem``
``ssl.key.password``                        ``ssl.key.password``
``ssl.keystore.type`` JKS                   rejected (convert to PKCS12 or PEM)
``ssl.endpoint.identification.algorithm``   same key: ``https`` (Java default) or ``none`` when empty
``sasl.mechanism``                          ``sasl.mechanisms`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)
``sasl.jaas.config`` (Plain/ScramLoginModule) ``sasl.username`` + ``sasl.password`` (its username="..." password="...")
``sasl.mechanism=AWS_MSK_IAM`` or           ``sasl.mechanisms=OAUTHBEARER`` + ``oauth_cb`` signing a token with
``OAUTHBEARER`` + IAMLoginModule            aws-msk-iam-sasl-signer-python (extra ``msk-iam``), region from
                                            ``aws.region``, the MSK bootstrap host name, or AWS_REGION;
                                            ``awsProfileName`` / ``awsRoleArn`` of the JAAS line are honoured
``client.id``                               ``client.id``
==========================================  ===============================================

librdkafka's own keys (``ssl.ca.location``, ``sasl.username``, ``sasl.mechanisms``, ...) are
accepted as they are. Other Java client keys (timeouts, retries, serializers) have no
meaning for a read-only collection with its own timeouts: they are listed in
``ClientSettings.ignored``; so is ``enable.metrics.push``: the collector always sends librdkafka
``enable.metrics.push=false`` (no KIP-714 telemetry pushed to the audited cluster, see
auditor/collectors/admin.py ``FORCED_SETTINGS``). Problems raise :class:`ClientConfigError` (one line, exit 2).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from auditor.collectors.files import parse_properties
from auditor.errors import UsageError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
IAM_LOGIN_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"

# librdkafka keys passed through unchanged when a file uses them directly.
_NATIVE = frozenset(
    {
        "ssl.ca.location",
        "ssl.ca.pem",
        "ssl.certificate.location",
        "ssl.certificate.pem",
        "ssl.key.location",
        "ssl.key.pem",
        "ssl.key.password",
        "ssl.keystore.password",
        "sasl.username",
        "sasl.password",
        "sasl.mechanisms",
        "client.id",
        "ssl.endpoint.identification.algorithm",
        "enable.ssl.certificate.verification",
        "ssl.crl.location",
        "ssl.cipher.suites",
    }
)
_HANDLED = frozenset(
    {
        "bootstrap.servers",
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "ssl.truststore.location",
        "ssl.truststore.type",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "ssl.keystore.location",
        "ssl.keystore.type",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "aws.region",
        "sasl.client.callback.handler.class",
        "sasl.login.callback.handler.class",
    }
)
_MSK_HOST = re.compile(r"\.kafka(?:-serverless)?\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com", re.IGNORECASE)
_JAAS_OPTION = re.compile(
    r"""(?<![\w.])([A-Za-z_][\w.]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s;]+))"""
)


class ClientConfigError(UsageError):
    """A --command-config file that cannot be used."""


@dataclass
class ClientSettings:
    config: dict = field(default_factory=dict)  # librdkafka settings (may hold a callable oauth_cb)
    ignored: list[str] = field(default_factory=list)  # Java keys with no meaning here
    mechanism: str | None = None  # what the source entry reports: PLAIN, SCRAM-SHA-512, AWS_MSK_IAM ...

    def describe(self) -> dict:
        """For the manifest's source entry: never a secret."""
        return {
            "security_protocol": self.config.get("security.protocol", "PLAINTEXT"),
            "sasl_mechanism": self.mechanism,
        }


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """``LoginModule required key="value" ...;`` -> (login module class, options)."""
    s = text.strip().rstrip(";").strip()
    parts = s.split(None, 2)
    if len(parts) < 2 or parts[1].lower() not in ("required", "requisite", "sufficient", "optional"):
        raise ClientConfigError("sasl.jaas.config: expected '<LoginModule> required key=\"value\" ...;'")
    options: dict[str, str] = {}
    for m in _JAAS_OPTION.finditer(parts[2] if len(parts) > 2 else ""):
        raw = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
        options[m.group(1)] = re.sub(r"\\(.)", r"\1", raw)
    return parts[0], options


def msk_region(bootstrap: str | None, explicit: str | None = None) -> str | None:
    if explicit:
        return explicit
    m = _MSK_HOST.search(bootstrap or "")
    if m:
        return m.group(1).lower()
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None


def msk_iam_oauth_cb(region: str, *, profile: str | None = None, role_arn: str | None = None):
    """An ``oauth_cb`` for librdkafka that signs an MSK IAM token (imports the signer lazily)."""
    try:
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
    except ImportError:
        raise ClientConfigError(
            "AWS MSK IAM authentication needs the msk-iam extra: "
            "pip install 'kafka-auditor[msk-iam]' (aws-msk-iam-sasl-signer-python)"
        ) from None

    def oauth_cb(_oauth_config: str):
        if role_arn:
            token, expiry_ms = MSKAuthTokenProvider.generate_auth_token_from_role_arn(region, role_arn)
        elif profile:
            token, expiry_ms = MSKAuthTokenProvider.generate_auth_token_from_profile(region, profile)
        else:
            token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(region)
        return token, expiry_ms / 1000.0

    return oauth_cb


def load_client_config(path: str | os.PathLike | None, bootstrap: str | None = None) -> ClientSettings:
    """Read a client.properties file (None: plaintext defaults) into librdkafka settings."""
    if path is None:
        return client_settings({}, bootstrap)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ClientConfigError(f"{path}: unreadable ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise ClientConfigError(f"{path}: not UTF-8 text") from None
    entries, problems = parse_properties(text)
    if problems:
        raise ClientConfigError(f"{path}:{problems[0].line}: {problems[0].message}")
    try:
        return client_settings({e.key: e.value for e in entries}, bootstrap)
    except ClientConfigError as e:
        raise ClientConfigError(f"{path}: {e}") from None


def client_settings(props: dict[str, str], bootstrap: str | None = None) -> ClientSettings:
    """Map Java client properties onto librdkafka settings (see the module doc)."""
    out = ClientSettings()
    cfg = out.config
    servers = bootstrap or props.get("bootstrap.servers")
    if servers:
        cfg["bootstrap.servers"] = servers
    for key, value in props.items():
        if key in _NATIVE:
            cfg[key] = value
        elif key not in _HANDLED:
            out.ignored.append(key)

    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ClientConfigError(
            f"security.protocol={props['security.protocol']}: expected one of {', '.join(PROTOCOLS)}"
        )
    cfg["security.protocol"] = protocol
    if protocol in ("SSL", "SASL_SSL"):
        _ssl(props, cfg)
    if protocol.startswith("SASL"):
        _sasl(props, out, servers)
    elif "sasl.mechanism" in props or "sasl.jaas.config" in props:
        out.ignored += [k for k in ("sasl.mechanism", "sasl.jaas.config") if k in props]
    return out


def _store_type(props: dict[str, str], key: str, location: str | None) -> str:
    t = props.get(key, "").strip().upper()
    if t:
        return t
    if location and location.lower().endswith((".pem", ".crt", ".cer")):
        return "PEM"
    if location and location.lower().endswith((".p12", ".pfx")):
        return "PKCS12"
    return "JKS"  # Java's default store type


def _ssl(props: dict[str, str], cfg: dict) -> None:
    trust = props.get("ssl.truststore.location")
    if trust:
        kind = _store_type(props, "ssl.truststore.type", trust)
        if kind != "PEM":
            raise ClientConfigError(
                f"ssl.truststore.location={trust} is a {kind} truststore, which librdkafka cannot read: export the "
                "CA certificate as PEM (keytool -exportcert -rfc -keystore ... -file ca.pem) and set "
                "ssl.truststore.type=PEM or ssl.ca.location=ca.pem"
            )
        cfg["ssl.ca.location"] = trust
    if props.get("ssl.truststore.certificates"):
        cfg["ssl.ca.pem"] = props["ssl.truststore.certificates"]
    keystore = props.get("ssl.keystore.location")
    if keystore:
        kind = _store_type(props, "ssl.keystore.type", keystore)
        if kind == "PKCS12":
            cfg["ssl.keystore.location"] = keystore
            if props.get("ssl.keystore.password"):
                cfg["ssl.keystore.password"] = props["ssl.keystore.password"]
        elif kind == "PEM":
            cfg["ssl.certificate.location"] = keystore
            cfg["ssl.key.location"] = keystore
        else:
            raise ClientConfigError(
                f"ssl.keystore.location={keystore} is a {kind} keystore, which librdkafka cannot read: convert it "
                "to PKCS12 (keytool -importkeystore -deststoretype PKCS12) or PEM"
            )
    if props.get("ssl.keystore.certificate.chain"):
        cfg["ssl.certificate.pem"] = props["ssl.keystore.certificate.chain"]
    if props.get("ssl.keystore.key"):
        cfg["ssl.key.pem"] = props["ssl.keystore.key"]
    if "ssl.endpoint.identification.algorithm" in props:
        algo = props["ssl.endpoint.identification.algorithm"].strip().lower()
        cfg["ssl.endpoint.identification.algorithm"] = algo if algo else "none"


def _sasl(props: dict[str, str], out: ClientSettings, servers: str | None) -> None:
    cfg = out.config
    mechanism = (props.get("sasl.mechanism") or cfg.pop("sasl.mechanisms", None) or "GSSAPI").strip().upper()
    module, options = (None, {})
    if props.get("sasl.jaas.config"):
        module, options = parse_jaas(props["sasl.jaas.config"])
    iam = mechanism == "AWS_MSK_IAM" or (mechanism == "OAUTHBEARER" and module == IAM_LOGIN_MODULE)
    if iam:
        region = msk_region(servers, props.get("aws.region"))
        if not region:
            raise ClientConfigError(
                "AWS MSK IAM: no region (set aws.region in the file, use the MSK bootstrap "
                "host name, or set AWS_REGION)"
            )
        cfg["sasl.mechanisms"] = "OAUTHBEARER"
        cfg["oauth_cb"] = msk_iam_oauth_cb(
            region, profile=options.get("awsProfileName"), role_arn=options.get("awsRoleArn")
        )
        out.mechanism = "AWS_MSK_IAM"
        return
    if mechanism not in PASSWORD_MECHANISMS:
        raise ClientConfigError(
            f"sasl.mechanism={mechanism} is not supported here (PLAIN, SCRAM-SHA-256, "
            "SCRAM-SHA-512, AWS_MSK_IAM)"
        )
    cfg["sasl.mechanisms"] = mechanism
    out.mechanism = mechanism
    if "username" in options:
        cfg["sasl.username"] = options["username"]
    if "password" in options:
        cfg["sasl.password"] = options["password"]
    if not cfg.get("sasl.username") or cfg.get("sasl.password") is None:
        raise ClientConfigError(
            f'sasl.mechanism={mechanism} needs sasl.jaas.config with username="..." password="..."'
        )
