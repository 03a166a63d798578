#!/usr/bin/env bash
# Installs the Debian packages r3fuzz needs to build and test. Idempotent: does
# nothing (not even apt-get update) when everything is already installed.
#   ./setup.sh               what building and running r3fuzz needs (./run.sh)
#   ./setup.sh --with-torch  that, plus python3-torch and python3-pytest, which the example tests run
#                            engine capture code with (./test.sh); a large download, kept out of run.sh
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ clang
  libclang-rt-14-dev   # libFuzzer, ASan and UBSan runtimes for clang 14
  llvm                 # llvm-profdata, llvm-symbolizer
  libgtest-dev libgmock-dev librapidcheck-dev
  nlohmann-json3-dev libcli11-dev
  python3 ccache
)
TORCH_PACKAGES=(python3-torch python3-numpy python3-pytest)  # numpy: torch's own, and vLLM's connector API

case "${1:-}" in
  "") ;;
  --with-torch) PACKAGES+=("${TORCH_PACKAGES[@]}") ;;
  *) echo "setup.sh: error: unknown argument '$1' (usage: setup.sh [--with-torch])" >&2; exit 2 ;;
esac

die() { echo "setup.sh: error: $*" >&2; exit 1; }

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: setup.sh supports Debian/Ubuntu only"

missing=()
for pkg in "${PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "setup.sh: all ${#PACKAGES[@]} packages installed, nothing to do"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 ||
    die "not root and sudo is unavailable; install as root: apt-get install ${missing[*]}"
  SUDO=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
echo "setup.sh: missing ${#missing[@]} package(s): ${missing[*]}"
echo "setup.sh: apt-get update"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
  die "apt-get update failed"
echo "setup.sh: apt-get install ${missing[*]}"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}" ||
  die "apt-get install failed for: ${missing[*]}"

for pkg in "${missing[@]}"; do
  is_installed "$pkg" || die "$pkg still not installed after apt-get install"
done
echo "setup.sh: installed ${#missing[@]} package(s)"
