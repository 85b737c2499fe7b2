#!/usr/bin/env bash
# Installs the Debian packages dcpsched needs to build and test, skipping
# those already present. Run as root (or with sudo) on Debian 12.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libabsl-dev            # absl::Status, StrCat, flat_hash_map
  googletest libgtest-dev libgmock-dev
  librapidcheck-dev      # property tests
  nlohmann-json3-dev     # JSON (golden vectors, schedule output)
  libcli11-dev           # dcpsched command line
  libbenchmark-dev       # benchmarks
  clang-14 libclang-rt-14-dev  # libFuzzer and its sanitizers
  librsvg2-bin           # rsvg-convert: the SVG tests render schedule pictures
  lld                    # fast linking of mutant builds (mutation/run_mutants.sh)
  pybind11-dev python3-pybind11 python3-dev python3-pytest  # Python module, its tests
  python3-setuptools python3-wheel python3-venv python3-pip  # pip package, its venv test
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

echo "install_deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
