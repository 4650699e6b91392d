#!/usr/bin/env python3
"""scripts/gpu_check.py without a GPU: how the `tests` step finds a listing's
programs on another machine (the H100 has no /usr/bin/cmake). Standard
library only, like the script.

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

def read(path):
    with open(path) as f:
        return f.read()


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
        self.assertIn("| skipped | 2 | vkattn-no-such-tool not on this machine | needs_tool, "
                      "sets_up_tool |", md)


if __name__ == "__main__":
    unittest.main(verbosity=2)
