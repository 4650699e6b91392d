#!/usr/bin/env python3
"""How close each numeric check of the GPU tests runs to its bound, over seeds.

A bound that a few hundred seeds bring to within 2x of failing is one that CI
will sooner or later cross: CI draws a fresh seed in every pass of every run.
This runs test binaries with random seeds (each run in the configurations
asked for), collects each check site's worst err/bound through
VKATTN_TEST_MARGINS (tests/common/test_util.h, TU_WITHIN), and prints the
sites sorted by their worst ratio with the seed and configuration that gave it,
so a failing or close seed can be replayed with VKATTN_TEST_SEED.

  scripts/test-margins.py --build build --runs 20 gpu_test_optim gpu_test_mha
  scripts/test-margins.py --runs 10 --config gpu --all

Configurations: cpu (the default pass), gpu (subgroup 4 with the GPU kernels'
tuning, as CI's second pass), mobile (the mobile-min profile). Never part of
CI: it is a tool for the one who changes a kernel or a bound.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

CONFIGS = {
    "cpu": {},
    "gpu": {"LP_NATIVE_VECTOR_WIDTH": "128", "VKATTN_TEST_TUNING": "gpu"},
    "mobile": {"VKATTN_TEST_PROFILE": "mobile-min"},
}


def run_once(binary, config, seed, timeout):
    with tempfile.NamedTemporaryFile("r", suffix=".margins", delete=False) as f:
        path = f.name
    env = dict(os.environ, **CONFIGS[config])
    env.update(VKATTN_TEST_SEED=str(seed), VKATTN_TEST_MARGINS=path)
    try:
        proc = subprocess.run([binary], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
        ok = proc.returncode == 0
    except subprocess.TimeoutExpired:
        ok = False
    sites = {}
    with open(path) as f:
        for line in f:
            ratio, site = line.split()
            sites[site] = max(sites.get(site, 0.0), float(ratio))
    os.unlink(path)
    return ok, sites


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tests", nargs="*", help="test binaries' names (gpu_test_x)")
    ap.add_argument("--build", default="build", help="the build folder (default build)")
    ap.add_argument("--runs", type=int, default=10, help="seeds per test and configuration")
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS),
                    help="configuration(s) to run (default: cpu and gpu)")
    ap.add_argument("--all", action="store_true", help="every gpu_test_* of the build")
    ap.add_argument("--show", type=int, default=25, help="sites to print (default 25)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    args = ap.parse_args()
    tests_dir = os.path.join(args.build, "tests")
    names = sorted(n for n in os.listdir(tests_dir) if n.startswith("gpu_test_")) \
        if args.all else args.tests
    if not names:
        ap.error("name test binaries or pass --all")
    configs = args.config or ["cpu", "gpu"]
    worst = {}  # site -> (ratio, test, config, seed)
    failures = []
    for name in names:
        binary = os.path.join(tests_dir, name)
        if not os.access(binary, os.X_OK):
            sys.exit(f"test-margins: {binary} is not a built test")
        for config in configs:
            for _ in range(args.runs):
                seed = random.getrandbits(63) or 1
                ok, sites = run_once(binary, config, seed, args.timeout)
                if not ok:
                    failures.append((name, config, seed))
                    print(f"FAILED: {name} ({config}) VKATTN_TEST_SEED={seed}", flush=True)
                for site, ratio in sites.items():
                    if site not in worst or ratio > worst[site][0]:
                        worst[site] = (ratio, name, config, seed)
        print(f"# {name}: done", file=sys.stderr, flush=True)
    print(f"{'worst err/bound':>15}  site  (test, configuration, seed)")
    for site, (ratio, name, config, seed) in sorted(worst.items(), key=lambda kv: -kv[1][0])[:args.show]:
        print(f"{ratio:15.3g}  {site}  ({name}, {config}, {seed})")
    print(f"{len(worst)} sites, {len(failures)} failed runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
