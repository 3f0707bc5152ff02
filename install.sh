#!/usr/bin/env bash
# Installs everything kafka-auditor and its tests need on a fresh Debian machine:
# the Python package with its dev extras (pyspark, pytest, ...), and, when run as root,
# the Debian packages the integration tests start for real (ZooKeeper, Chromium, Java).
set -euo pipefail
cd "$(dirname "$0")"

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  need=()
  [ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
  if [ ${#need[@]} -gt 0 ]; then
    echo "install.sh: apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
else
  echo "install.sh: not root: skipping Debian packages (zookeeper, chromium); their tests will be skipped" >&2
fi

python3 -m pip install -q --disable-pip-version-check -e '.[dev]'
echo "install.sh: done ($(kafka-audit --version))"
