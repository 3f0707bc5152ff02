#!/usr/bin/env bash
# Installs everything kafka-auditor and its tests need on a fresh Debian machine:
# the Python package with its dev extras (pyspark, pytest, ...); when run as root, the Debian
# packages the integration tests start for real (ZooKeeper, Chromium, a JDK: Spark runs on its
# JRE and tests/test_coordinator.py compiles Java with javac); then the compiled rule plans.
set -euo pipefail
cd "$(dirname "$0")"

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  need=()
  [ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
  if [ ${#need[@]} -gt 0 ]; then
    echo "install.sh: apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
else
  echo "install.sh: not root: skipping Debian packages (zookeeper, chromium, a JDK); their tests will be skipped (and fail under CI=true)" >&2
fi

# constraints.txt: the versions the suite passed on (tools/lock.py), so that a fresh machine
# installs what CI tested rather than whatever newer release a range admits (issue 38).
python3 -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[dev]'
python3 tools/lock.py --check
# Bytecode for our own modules, as pip writes it for an installed wheel (an editable install
# does not, and PYTHONDONTWRITEBYTECODE stops Python writing it later): compiling ~60 modules
# from source was ~0.08 s of every `lint` and `check` start (bench/bench_startup.py).
python3 -m compileall -q auditor checks
# The compiled plans of every rule (auditor/engine/plans.py): built here from this checkout,
# not committed, so they always match the code. Without them the first `check` spends ~6 s
# and the first Spark `fleet` ~50 s compiling. Skipped when the code has not changed.
if ! python3 -m auditor.engine.plan_bundle --check >/dev/null; then
  echo "install.sh: compiling the rule plans (~2 minutes on 2 cores, once per code change; progress per engine below)"
  python3 -m auditor.engine.plan_bundle
fi
echo "install.sh: done ($(kafka-audit --version))"
