"""The new user's first steps: `pip install ./python` into a fresh virtual
environment, offline (Debian's setuptools, numpy and cffi through
--system-site-packages), then `import vkattn` from anywhere finds the library this
build made, and says its version; a wrong library is named with its path.

The install copies the package source to a temporary folder first, so the
checkout gets no build/ or egg-info. About 7 s (venv with pip, one wheel build)."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import vkattn
from vkattn import _lib

PKG_SRC = os.path.normpath(os.path.join(os.path.dirname(vkattn.__file__), ".."))


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("VKATTN_LIBRARY", "PYTHONPATH")}
    env.update(PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def test_pip_install_into_fresh_venv(tmp_path):
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    probe = subprocess.run([py, "-c", "import venv, ensurepip, setuptools, numpy, cffi"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("%s lacks venv/ensurepip, setuptools, numpy or cffi (Debian: "
                    "python3-venv python3-setuptools python3-numpy python3-cffi): %s"
                    % (py, probe.stderr.strip().splitlines()[-1:]))
    src = tmp_path / "src"
    shutil.copytree(PKG_SRC, src, ignore=shutil.ignore_patterns(
        "tests", "__pycache__", "build", "*.egg-info"))
    venv = tmp_path / "v"
    subprocess.run([py, "-m", "venv", "--system-site-packages", str(venv)], check=True,
                   capture_output=True)
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation",
                        "--no-index", str(src)], capture_output=True, text=True, env=_env())
    assert r.returncode == 0, r.stdout + r.stderr
    # the build's library, from the _build.py CMake wrote (else VKATTN_LIBRARY)
    built = os.path.exists(os.path.join(PKG_SRC, "vkattn", "_build.py"))
    env = _env() if built else _env(VKATTN_LIBRARY=vkattn.library_path)
    r = subprocess.run([str(venv / "bin" / "python"), "-c",
                        "import vkattn; print(vkattn.__version__); print(vkattn.library_path); "
                        "print(vkattn.__file__)"],
                       capture_output=True, text=True, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    version, path, where = r.stdout.split()
    assert version == vkattn.__version__
    assert os.path.samefile(path, vkattn.library_path)
    assert where.startswith(str(venv))  # the installed copy, not the checkout


def test_version_is_the_library_s():
    major, minor, patch = _lib.version_tuple(_lib.lib.vkattn_get_version())
    assert vkattn.__version__ == "%d.%d.%d" % (major, minor, patch)
    text = open(os.path.join(PKG_SRC, "pyproject.toml")).read()
    assert re.search(r'^version = "%s"$' % re.escape(vkattn.__version__), text, re.M), \
        "python/pyproject.toml's version is not the library's %s" % vkattn.__version__


def test_wrong_library_names_vkattn_and_the_path():
    other = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/"
                              "libm.so.6", "/lib64/libm.so.6") if os.path.exists(p)), None)
    if other is None:
        pytest.skip("no libm.so.6 to stand in for a wrong library")
    r = subprocess.run([sys.executable, "-c", "import vkattn"], capture_output=True, text=True,
                       env=_env(VKATTN_LIBRARY=other, PYTHONPATH=PKG_SRC), cwd="/")
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert "vkattn: %s is not libvkattn" % other in last, last
    assert "symbol" not in last
