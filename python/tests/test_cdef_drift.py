"""The package's C declarations (vkattn/_cdef.py) against the headers.

_cdef.py is generated from the headers by scripts/gen-cdef.py: regenerating it
must give the checked-in file. A tiny C program, built here with the system compiler, prints sizeof and offsetof
of every struct and field the package declares and the value of every enum
constant; they must equal what cffi computed from the declarations. The program
also repeats the package's function prototypes after the headers, so a changed
signature fails to compile ("conflicting types"). Skipped, with the reason, when
no C compiler or no vkattn headers are at hand.

Headers: $VKATTN_INCLUDE_DIRS (os.pathsep-separated; CTest sets the source and
build include dirs), else the checkout's include/ and build/include.
"""
import importlib.util
import os
import re
import shutil
import subprocess

import pytest

import vkattn
from vkattn import _cdef
from vkattn._lib import ffi, lib

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _include_dirs():
    env = os.environ.get("VKATTN_INCLUDE_DIRS")
    if env:
        return [d for d in env.split(os.pathsep) if d]
    return [os.path.join(ROOT, "include"), os.path.join(ROOT, "build", "include")]


def _headers_or_skip():
    incs = _include_dirs()
    if not any(os.path.exists(os.path.join(d, "vkattn", "version.h")) for d in incs):
        pytest.skip("vkattn headers with the generated version.h not found in %s "
                    "(set VKATTN_INCLUDE_DIRS)" % incs)
    return incs


def test_generated_declarations_are_current():
    incs = _headers_or_skip()
    script = os.path.join(ROOT, "scripts", "gen-cdef.py")
    if not os.path.exists(script):
        pytest.skip("no scripts/gen-cdef.py next to the package")
    spec = importlib.util.spec_from_file_location("gen_cdef", script)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(_cdef.__file__) as f:
        assert f.read() == gen.generate(incs), \
            "vkattn/_cdef.py is stale: run scripts/gen-cdef.py"


def _python_layout():
    lines = []
    for s in _cdef.STRUCTS:
        t = ffi.typeof(s)
        lines.append("S %s %d" % (s, ffi.sizeof(t)))
        for name, field in t.fields:
            lines.append("F %s.%s %d %d" % (s, name, field.offset, ffi.sizeof(field.type)))
    for e in _cdef.ENUMS:
        for value, name in sorted(ffi.typeof(e).elements.items()):
            lines.append("E %s %d" % (name, value))
    return lines


def _c_program():
    out = ["#include <stddef.h>", "#include <stdio.h>", "#include <vkattn/vkattn.h>",
           "/* the package's prototypes, repeated: a mismatch is a conflicting type */",
           _cdef.FUNCTIONS, "int main(void) {"]
    for s in _cdef.STRUCTS:
        out.append('printf("S %s %%zu\\n", sizeof(%s));' % (s, s))
        for name, _ in ffi.typeof(s).fields:
            out.append('printf("F %s.%s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                       % (s, name, s, name, s, name))
    for e in _cdef.ENUMS:
        for value, name in sorted(ffi.typeof(e).elements.items()):
            out.append('printf("E %s %%lld\\n", (long long)%s);' % (name, name))
    out += ["return 0;", "}"]
    return "\n".join(out)


def test_declarations_match_headers(tmp_path):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler (cc, gcc or $CC) to build the layout probe")
    incs = _headers_or_skip()
    src = tmp_path / "probe.c"
    src.write_text(_c_program())
    exe = tmp_path / "probe"
    cmd = [cc, "-std=c11", "-Wall", "-Werror", "-o", str(exe), str(src)]
    cmd += ["-I" + d for d in incs]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, "the prototypes in vkattn/_cdef.py do not match the " \
        "headers:\n" + r.stderr[-4000:]
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    c_lines = got.splitlines()
    py_lines = _python_layout()
    diff = [(c, p) for c, p in zip(c_lines, py_lines) if c != p]
    assert len(c_lines) == len(py_lines)
    assert not diff, "layout drift (C header, package):\n" + "\n".join(
        "%s   |   %s" % d for d in diff[:40])


def test_every_declared_function_is_exported():
    names = re.findall(r"\b(vkattn_\w+)\s*\(", _cdef.FUNCTIONS)
    assert len(names) > 30
    for n in names:
        getattr(lib, n)  # AttributeError if the library lacks the symbol


def test_result_codes_match_library():
    for code, cls in vkattn.errors.BY_CODE.items():
        assert ffi.string(lib.vkattn_result_name(code)).decode() == cls.name
    assert ffi.string(lib.vkattn_result_name(-12)).decode() == "VKATTN_UNKNOWN_RESULT", \
        "the library has a result code the package does not know"
