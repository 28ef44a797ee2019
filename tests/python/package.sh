#!/usr/bin/env bash
# The Python package as a user installs it: a fresh virtual environment over Debian's python3
# packages, `pip install --no-build-isolation --no-index` of a copy of python/ (offline), then
# its tests (python/tests) against the trainsim executable of the same build.
# usage: package.sh LIBTRAINSIM TRAINSIM WORK_DIR (run from the source tree). Exit 77 = skipped,
# with the reason (a failure under CI=true), where Debian's python3-venv, pip, setuptools or wheel are missing.
set -euo pipefail
library=$(realpath "$1")
trainsim=$(realpath "$2")
work=$3
skip() { # CI installs these (build.sh test): there, a missing one is a failure
  echo "SKIPPED: $*"
  [ "${CI:-}" = true ] && exit 1
  exit 77
}
python=/usr/bin/python3 # Debian's, whose packages the install may use
[ -x "$python" ] || python=$(command -v python3)
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
  skip "$python has no venv/ensurepip (apt-get install python3-venv)"
{ "$python" -c 'import setuptools, wheel' && "$python" -m pip --version; } >/dev/null 2>&1 ||
  skip "$python lacks pip, setuptools or wheel (apt-get install python3-pip python3-wheel)"

rm -rf "$work"
mkdir -p "$work"
"$python" -m venv --system-site-packages "$work/venv"
cp -r python "$work/src" # pip builds in the tree it is given: not in the sources
rm -rf "$work/src/build" "$work/src/"*.egg-info
TRAINSIM_LIBRARY=$library "$work/venv/bin/pip" install --no-build-isolation --no-index \
  --quiet "$work/src"
# The installed package carries its own copy of the library.
cmp "$library" "$work/venv/lib/"python3*/site-packages/trainsim/libtrainsim.so
TRAINSIM_BIN=$trainsim TRAINSIM_WORK=$work "$work/venv/bin/python" -m unittest discover \
  -s python/tests -v
