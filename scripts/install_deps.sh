#!/usr/bin/env bash
# Installs the Debian packages dcpsched needs to build and test, skipping
# those already present. Run as root (or with sudo) on Debian 12.
#   scripts/install_deps.sh           install what is missing
#   scripts/install_deps.sh --check   only say what is missing (exit 1 if any)
set -euo pipefail

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *) echo "usage: scripts/install_deps.sh [--check]" >&2; exit 2 ;;
esac

packages=(
  cmake ninja-build g++ pkg-config
  libabsl-dev            # absl::Status, StrCat, flat_hash_map
  googletest libgtest-dev libgmock-dev
  librapidcheck-dev      # property tests
  nlohmann-json3-dev     # JSON (golden vectors, schedule output)
  libcli11-dev           # dcpsched command line
  libbenchmark-dev       # benchmarks
  clang-14 libclang-rt-14-dev  # libFuzzer and its sanitizers
  llvm-14                # llvm-cov-14, llvm-profdata-14: scripts/coverage.sh
  clang-19 libclang-rt-19-dev llvm-19  # MC/DC: scripts/coverage.sh --mcdc (-fcoverage-mcdc, llvm-cov-19)
  librsvg2-bin           # rsvg-convert: the SVG tests render schedule pictures
  lld                    # fast linking of mutant builds (mutation/run_mutants.py)
  python3-clang-14 libclang1-14  # libclang: the mutant generator reads the C++ AST
  pybind11-dev python3-pybind11 python3-dev python3-pytest  # Python module, its tests
  libssl-dev             # SHA-256 (OpenSSL) for the schedule_digest test
  python3-yaml           # the CI configuration test parses the workflows
  zip unzip              # OSS-Fuzz seed corpora ($OUT/*_seed_corpus.zip), artifacts
  python3-setuptools python3-wheel python3-venv python3-pip  # pip package, its venv test
  patchelf               # the wheel carries its Abseil libraries (python/bundle_libs.py)
  python3-torch          # torch.distributed (gloo, CPU): the distributed conformance harness
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

if ((check_only)); then
  echo "install_deps: missing ${missing[*]}" >&2
  exit 1
fi

echo "install_deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
