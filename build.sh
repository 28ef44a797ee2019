#!/usr/bin/env bash
# build.sh: the two set-up commands of README.md.
#   ./build.sh study   install what is missing, build, simulate GPT-175B on 1,024 Frontier GCDs
#   ./build.sh test    install what is missing, build, run the whole test suite (ctest)
#   ./build.sh fuzz    build the libFuzzer harnesses with clang and run each FUZZ_SECONDS
#                      (default 600); crashes land in tests/fuzz/crashers/<harness>/
# Missing Debian packages are installed with apt-get when run as root; otherwise the script
# says which to install. Every step is idempotent. CI=true builds with -Werror.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(gcc g++ make cmake pkg-config libsimgrid-dev libyaml-dev libcmocka-dev libjemalloc-dev valgrind
  python3-yaml)
BUILD_DIR=${BUILD_DIR:-build}

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "build.sh: missing Debian packages: ${missing[*]}" >&2
    echo "build.sh: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "build.sh: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
}

build() {
  local werror=OFF
  [ "${CI:-}" = "true" ] && werror=ON
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTS_WERROR="$werror" >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}

case "${1:-}" in
  study)
    install_missing
    build
    "$BUILD_DIR/trainsim" run workloads/gpt-175b.yaml --gpus 1024 --tp 8 --pp 16
    ;;
  test)
    # chromium renders report.html (tests/report/render.sh); Slurm runs a sweep's job array
    # (tests/slurm/sweep_slurm.sh)
    # python3-venv, -pip, -setuptools, -wheel: the Python package's offline install
    # (tests/python/package.sh)
    install_missing chromium slurm-wlm munge python3-venv python3-pip python3-setuptools \
      python3-wheel
    build
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
    ;;
  fuzz)
    install_missing clang libfuzzer-14-dev libclang-rt-14-dev
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -DTS_FUZZ=ON \
      -DFUZZ_SECONDS="${FUZZ_SECONDS:-600}" >/dev/null
    cmake --build build-fuzz -j "$(nproc)" --target fuzz_units fuzz_platform fuzz_workload \
      fuzz_sim fuzz_argv fuzz_sweep
    cmake --build build-fuzz --target fuzz
    ;;
  *)
    echo "usage: ./build.sh study|test|fuzz" >&2
    exit 2
    ;;
esac
