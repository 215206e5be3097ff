#!/usr/bin/env bash
# Installs what staticformer needs on Debian 12 (run as root or with sudo available).
# Core: libboost-dev (Boost.Hana). Tests/examples/benchmarks: cmake, g++, clang, libfmt-dev,
# nlohmann-json3-dev, libgtest-dev, libbenchmark-dev, gnuplot-nox (training plot); ccache makes
# repeated builds of tools/test.sh faster (used when present).
# Optional cross tests: g++-aarch64-linux-gnu and qemu-user (NEON kernels under emulation);
# gcc-arm-none-eabi, libnewlib-arm-none-eabi, libstdc++-arm-none-eabi-newlib and qemu-system-arm
# (the inference core for a Cortex-M4; the firmware example run on QEMU's mps2-an386 board).
# PyTorch (python3-torch) is only needed for the tests against PyTorch and to regenerate the golden
# files: pass --golden. It also installs both BLAS libraries Debian's torch can use, the reference
# one (libblas3) and OpenBLAS (libopenblas0-serial, which the alternatives system then selects), so
# that the PyTorch tests run under each (cmake/StaticformerPytorchTests.cmake).
set -euo pipefail
pkgs=(cmake make g++ clang libclang-rt-14-dev ccache libboost-dev libfmt-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev gnuplot-nox
      g++-aarch64-linux-gnu qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
      qemu-system-arm)
[[ "${1:-}" == "--golden" ]] && pkgs+=(python3-torch libblas3 libopenblas0-serial)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
