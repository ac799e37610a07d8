#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernels users run: one test per Debian 12 6.1 kernel (generic,
cloud, PREEMPT_RT), each booted under qemu (TCG) with the static offcpu
and workloads, running the checks of tests/kernels/checks.sh inside. A
test fails with the guest's failing lines; a kernel whose package cannot
be downloaded fails saying so.

Run as root from the repository root after `make test-build` (or `make
test-kernels`). Prints one line per kernel and ends with "N passed, N failed".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import matrix  # noqa: E402
import harness as t  # noqa: E402


def test_debian_6_1():
    matrix.run_kernel("debian_6_1")


def test_debian_6_1_cloud():
    matrix.run_kernel("debian_6_1_cloud")


def test_debian_6_1_rt():
    matrix.run_kernel("debian_6_1_rt")


if __name__ == "__main__":
    sys.exit(t.run_suite(globals()))
