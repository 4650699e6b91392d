#!/usr/bin/env python3
"""scripts/gpu_check.py without a GPU: how the `tests` step finds a listing's
programs on another machine (the H100 has no /usr/bin/cmake), and what the
report makes of the driver's pipeline statistics (NVIDIA's "Local Memory
Size" of 2^36 is no spill). Standard library only, like the script.

    python3 tests/scripts/test_gpu_check.py SCRIPTS_DIR"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
sys.dont_write_bytecode = True  # nothing written into the source tree
import gpu_check as gc  # noqa: E402

NVIDIA = "NVIDIA H100 80GB HBM3"
# a row of attnbench's pipeline_stats as the H100's driver 580 gave it
H100_DECODE = {"Register Count": 38.0, "Binary Size": 23040.0, "Stack Size": 0.0,
               "Local Memory Size": 68719476700.0, "Shared Memory Size": 1552.0}


def read(path):
    with open(path) as f:
        return f.read()


def result(device, *stats):
    return {"device": device,
            "pipeline_stats": [{"pipeline": "p%d" % i, "index": i, "stats": s}
                               for i, s in enumerate(stats)]}


class Spill(unittest.TestCase):
    def test_implausible_size_is_unreadable_not_a_spill(self):
        s = gc.pipeline_summary(result(NVIDIA, H100_DECODE))
        self.assertEqual(s["spill"], "unreadable")
        self.assertEqual(s["max_registers"], 38)
        self.assertEqual(s["unreadable"], [{"pipeline": "p0", "statistic": "Local Memory Size",
                                            "value": 68719476700.0}])
        self.assertIn("Local Memory Size 68719476700", s["spill_why"])
        # the raw statistics stay in the JSON
        self.assertEqual(s["pipeline_stats"][0]["stats"], H100_DECODE)

    def test_bound_is_two_to_the_32(self):
        just_below = dict(H100_DECODE, **{"Local Memory Size": float((1 << 32) - 1)})
        self.assertEqual(gc.pipeline_summary(result(NVIDIA, just_below))["spill"], "yes")
        at = dict(H100_DECODE, **{"Local Memory Size": float(1 << 32)})
        self.assertEqual(gc.pipeline_summary(result(NVIDIA, at))["spill"], "unreadable")

    def test_a_real_size_is_a_spill(self):
        spilled = dict(H100_DECODE, **{"Local Memory Size": 1024.0})
        s = gc.pipeline_summary(result(NVIDIA, H100_DECODE, spilled))
        self.assertEqual(s["spill"], "yes")
        self.assertEqual(s["spill_why"], "p1: Local Memory Size 1024 B")

    def test_registers_at_the_cap_are_a_likely_spill(self):
        capped = dict(H100_DECODE, **{"Register Count": 255.0})
        s = gc.pipeline_summary(result(NVIDIA, H100_DECODE, capped))
        self.assertEqual(s["spill"], "likely")
        self.assertIn("p1: Register Count 255 (the driver's cap)", s["spill_why"])
        under = dict(H100_DECODE, **{"Register Count": 254.0})
        self.assertEqual(gc.pipeline_summary(result(NVIDIA, under))["spill"], "unreadable")
        # the cap is NVIDIA's: another vendor's 255 says nothing
        other = {"Register Count": 255.0, "Scratch Memory Size": 0.0}
        self.assertEqual(gc.pipeline_summary(result("AMD Radeon", other))["spill"], "no")

    def test_zero_sizes_are_no_spill_and_none_is_unknown(self):
        self.assertEqual(gc.pipeline_summary(result(NVIDIA, {"Register Count": 40.0,
                                                            "Stack Size": 0.0}))["spill"], "no")
        self.assertIsNone(gc.pipeline_summary(result("llvmpipe", {"Binary Size": 9.0}))["spill"])
        self.assertIsNone(gc.pipeline_summary(None)["spill"])
        # shared memory is no spill
        self.assertEqual(gc.pipeline_summary(result(NVIDIA, {"Shared Memory Size": 4096.0,
                                                            "Stack Size": 0.0}))["spill"], "no")

    def test_report_shows_question_mark_and_footnote(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "bench.jsonl"), "w") as f:
                for rid in ("matmul_f32", "decode_f32"):
                    f.write(json.dumps({"id": rid, "status": "ok", "args": "x",
                                        "result": dict(result(NVIDIA, H100_DECODE),
                                                       median_ms=1.0)}) + "\n")
            gc.cmd_report(argparse.Namespace(outdir=d, quick=False))
            md = read(os.path.join(d, "gpu-check.md"))
            rows = json.loads(read(os.path.join(d, "gpu-check.json")))["benches"]
        self.assertNotIn("**yes**", md)
        self.assertIn("| 38 | ? [1] | ok |", md)
        self.assertEqual(md.count("[1] spill unknown"), 1)
        self.assertIn('"Local Memory Size" reads 68719476700', md)
        self.assertEqual(rows[0]["pipeline_stats"][0]["stats"], H100_DECODE)


class Relocate(unittest.TestCase):
    def test_rewrite_is_one_pass_on_whole_paths(self):
        pairs = [("/b/build", "/a/b/gpu-bundle/build"), ("/b", "/a/b")]
        self.assertEqual(gc.rewrite("-DX=/b/build/t", pairs), "-DX=/a/b/gpu-bundle/build/t")
        self.assertEqual(gc.rewrite(["/b/src/x.cmake", "/b"], pairs), ["/a/b/src/x.cmake", "/a/b"])
        self.assertEqual(gc.rewrite("/b/build2/t /bx /c/b", pairs), "/a/b/build2/t /bx /c/b")

    def test_a_missing_tool_is_found_by_name_or_named(self):
        sh = shutil.which("sh")
        self.assertEqual(gc.relocate(["/nonexistent/sh", "-c", "true"], []),
                         ([sh, "-c", "true"], None))
        self.assertEqual(gc.relocate(["/nonexistent/vkattn-no-such-tool"], []),
                         (None, "vkattn-no-such-tool not on this machine"))
        # a missing build product is not looked up: running it fails
        self.assertEqual(gc.relocate(["/x/build/tests/sh"], ["/x/build"]),
                         (["/x/build/tests/sh"], None))
        self.assertEqual(gc.relocate(["relative"], []), (["relative"], None))

    def test_tests_step_runs_relocated_and_skips_what_is_missing(self):
        def test(name, command, **props):
            return {"name": name, "command": command,
                    "properties": [{"name": k, "value": v} for k, v in props.items()]}
        with tempfile.TemporaryDirectory() as d:
            build = os.path.join(os.path.realpath(d), "build")
            os.makedirs(build)
            listing = {"tests": [
                test("uses", ["/nonexistent/sh", "-c", "test \"$W\" = \"$(pwd -P)\""],
                     FIXTURES_REQUIRED=["dir"], ENVIRONMENT=["W=/old/build"],
                     WORKING_DIRECTORY="/old/build"),
                test("makes_dir", ["/nonexistent/sh", "-c", "true"], FIXTURES_SETUP=["dir"]),
                test("needs_tool", ["/nonexistent/vkattn-no-such-tool", "-P", "/old/src/x"]),
                test("needs_skipped", ["/nonexistent/sh", "-c", "true"],
                     FIXTURES_REQUIRED=["tool"]),
                test("sets_up_tool", ["/nonexistent/vkattn-no-such-tool"], FIXTURES_SETUP=["tool"]),
                test("lost_product", ["/old/build/tests/gone"]),
                test("lost_folder", ["/nonexistent/sh", "-c", "true"],
                     WORKING_DIRECTORY="/old/build/gone"),
            ]}
            with open(os.path.join(d, "tests.json"), "w") as f:
                json.dump(listing, f)
            gc.cmd_tests(argparse.Namespace(
                list=os.path.join(d, "tests.json"), outdir=d, quick=False, jobs=2, timeout=30,
                from_build="/old/build", to_build=build, from_source="/old/src", to_source=d))
            got = {t["name"]: t for t in gc.read_lines(os.path.join(d, "tests.jsonl"))}
            gc.cmd_report(argparse.Namespace(outdir=d, quick=False))
            md = read(os.path.join(d, "gpu-check.md"))
        self.assertEqual(got["makes_dir"]["status"], "passed")
        self.assertEqual(got["uses"]["status"], "passed")  # env and cwd rewritten alike
        self.assertEqual((got["needs_tool"]["status"], got["needs_tool"]["why"]),
                         ("skipped", "vkattn-no-such-tool not on this machine"))
        self.assertEqual(got["sets_up_tool"]["status"], "skipped")
        self.assertEqual(got["needs_skipped"]["status"], "skipped")
        self.assertIn("fixture tool", got["needs_skipped"]["why"])
        self.assertEqual(got["lost_product"]["status"], "failed")
        self.assertEqual((got["lost_folder"]["status"], got["lost_folder"]["why"]),
                         ("failed", "no working directory %s/gone" % build))
        self.assertIn("| skipped | 2 | vkattn-no-such-tool not on this machine | needs_tool, "
                      "sets_up_tool |", md)


if __name__ == "__main__":
    unittest.main(verbosity=2)
