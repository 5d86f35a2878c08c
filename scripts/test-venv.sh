#!/usr/bin/env bash
# The test suite's PyPI packages (scripts/test-requirements.txt: the fixture
# writers of foreign formats, the S3 server and client) in a venv of their
# own, never in the system's Python: no root, no --break-system-packages.
# The venv is made from Debian's /usr/bin/python3 with --system-site-packages,
# so Debian's python3-* packages (numpy, h5py, lmdb, torch...) stay visible
# and nothing from PyPI replaces them: pip installs only what Debian lacks.
# Idempotent: does nothing when the venv holds this requirements file already.
# Usage: scripts/test-venv.sh VENV_DIR   (scripts/test.sh: BUILD_DIR/venv-test)
# Prints the venv's interpreter (VENV_DIR/bin/python3) on stdout.
set -euo pipefail
venv=${1:?usage: scripts/test-venv.sh VENV_DIR}
req=$(cd "$(dirname "$0")" && pwd)/test-requirements.txt
stamp=$venv/.test-requirements.txt
if [[ ! -x "$venv/bin/python3" ]]; then
  if ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
    echo "test-venv: /usr/bin/python3 cannot make a venv (apt-get install python3-venv)" >&2
    exit 1
  fi
  /usr/bin/python3 -m venv --system-site-packages "$venv" >&2
fi
if ! cmp -s "$req" "$stamp"; then
  echo "test-venv: installing scripts/test-requirements.txt into $venv" >&2
  # Upgrade nothing Debian has (numpy above all: Debian's scipy, h5py and
  # torch are built against its numpy 1.x).
  PIP_REQUIRE_VIRTUALENV=1 "$venv/bin/python3" -m pip install -q \
    --disable-pip-version-check --upgrade-strategy only-if-needed -r "$req" >&2
  # numpy must still be Debian's.
  "$venv/bin/python3" - <<'PY' >&2
import numpy, sys
if not numpy.__file__.startswith("/usr/lib/python3/"):
    sys.exit("test-venv: numpy %s from %s shadows Debian's python3-numpy"
             % (numpy.__version__, numpy.__file__))
PY
  cp "$req" "$stamp"
fi
echo "$venv/bin/python3"
