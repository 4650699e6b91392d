"""Finding libvkattn: $VKATTN_LIBRARY first, then the installed layout, then the
build tree. Each case imports the package in a fresh interpreter."""
import os
import shutil
import subprocess
import sys

import pytest

import vkattn
from vkattn import _lib

PKG_PARENT = os.path.normpath(os.path.join(os.path.dirname(vkattn.__file__), ".."))


def _python(code, env_extra, drop=(), path=PKG_PARENT):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_extra)
    env["PYTHONPATH"] = path
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd="/")


def test_explicit_library_that_is_missing_fails_clearly():
    r = _python("import vkattn", {"VKATTN_LIBRARY": "/nonexistent/libvkattn.so"})
    assert r.returncode != 0
    assert "VKATTN_LIBRARY=/nonexistent/libvkattn.so: no such file" in r.stderr


def test_explicit_library_is_used():
    r = _python("import vkattn; print(vkattn.library_path)",
                {"VKATTN_LIBRARY": vkattn.library_path})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == vkattn.library_path


def test_other_minor_refused():
    """A library of another minor version (tests/abi's vkattn 0.1 stand-in) is refused
    at import, before any call that passes a struct."""
    stub = os.path.join(PKG_PARENT, "..", "build", "tests", "abi_0_1", "libvkattn.so.0")
    if not os.path.exists(stub):
        pytest.skip("no 0.1 stand-in at <checkout>/build/tests/abi_0_1")
    r = _python("import vkattn", {"VKATTN_LIBRARY": stub})
    assert r.returncode != 0
    assert "is vkattn 0.1.0; this package needs vkattn %d.%d.x" % _lib._ABI in r.stderr


def test_build_tree_without_env():
    build = os.path.join(PKG_PARENT, "..", "build", "src", _lib._NAMES[0])
    if not os.path.exists(build):
        pytest.skip("no build tree at <checkout>/build")
    r = _python("import vkattn; print(vkattn.library_path)", {}, drop=("VKATTN_LIBRARY",))
    assert r.returncode == 0, r.stderr
    assert os.path.samefile(r.stdout.strip(), build)


def test_cmake_install_layout(tmp_path):
    """`cmake --install` puts the package where it finds the installed library on
    its own, without VKATTN_LIBRARY or LD_LIBRARY_PATH."""
    build = os.environ.get("VKATTN_BUILD_DIR")
    cmake = shutil.which("cmake")
    if not build or not cmake:
        pytest.skip("VKATTN_BUILD_DIR (set by CTest) or cmake missing")
    prefix = tmp_path / "prefix"
    r = subprocess.run([cmake, "--install", build, "--prefix", str(prefix)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    site = prefix / "lib" / "python3" / "dist-packages"
    if not (site / "vkattn" / "__init__.py").exists():  # VKATTN_PYTHON_INSTALL_DIR changed
        found = list(prefix.rglob("vkattn/_install.py"))
        assert found, "the package was not installed"
        site = found[0].parent.parent
    r = _python("import vkattn; print(vkattn.library_path); print(len(vkattn.devices()) >= 0)",
                {}, drop=("VKATTN_LIBRARY", "LD_LIBRARY_PATH"), path=str(site))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith(str(prefix)), r.stdout
