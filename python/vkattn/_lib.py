"""Finds and opens libvkattn (cffi ABI mode: no compiler needed at install time).

Search order, first hit wins:
  1. $VKATTN_LIBRARY: a path to the library file (an error if it cannot be opened,
     or is not libvkattn)
  2. next to the package: the directory _install.py names (written by
     `cmake --install`), then the package directory itself
  3. the library the CMake build that last configured this source wrote into
     _build.py (git-ignored; `pip install ./python` copies it along, so the
     installed package finds the library it was built with)
  4. the build tree of a source checkout: <repo>/build/src
  5. the system loader path (libvkattn.so.0.<minor>, then libvkattn.so)

The package is written against one ABI version (_ABI, docs/INTEGRATION.md "ABI and
versions"): while vkattn is 0.x each minor may change public struct layouts, so a
library of another minor is refused before any other call, as the loader refuses it
to a C app.
"""
import os

import cffi

from . import _cdef

ffi = cffi.FFI()
ffi.cdef(_cdef.TYPES + _cdef.FUNCTIONS)

_ABI = _cdef.ABI  # the (major, minor) of the headers _cdef.py was generated from
_NAMES = ("libvkattn.so.%d.%d" % _ABI, "libvkattn.so")
_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    """(path, explicit) pairs in search order."""
    env = os.environ.get("VKATTN_LIBRARY")
    if env:
        yield env, True
        return
    try:
        from . import _install  # written at install time only
        libdir = _install.LIBDIR
        if not os.path.isabs(libdir):
            libdir = os.path.normpath(os.path.join(_HERE, libdir))
        for n in _NAMES:
            yield os.path.join(libdir, n), False
    except ImportError:
        pass
    for n in _NAMES:
        yield os.path.join(_HERE, n), False
    try:
        from . import _build  # written by CMake's configure step
        yield _build.LIBRARY, False
    except ImportError:
        pass
    build = os.path.normpath(os.path.join(_HERE, "..", "..", "build", "src"))
    for n in _NAMES:
        yield os.path.join(build, n), False
    for n in _NAMES:
        yield n, False  # bare name: the dynamic loader searches its path


def _open():
    tried = []
    for path, explicit in _candidates():
        if os.sep in path and not os.path.exists(path):
            if explicit:
                raise OSError("vkattn: VKATTN_LIBRARY=%s: no such file" % path)
            tried.append("%s (no such file)" % path)
            continue
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            if explicit:
                raise OSError("vkattn: VKATTN_LIBRARY=%s cannot be opened: %s" % (path, e)) from e
            tried.append("%s (%s)" % (path, e))
    raise OSError("vkattn: libvkattn not found: set VKATTN_LIBRARY to the library file, or "
                  "install vkattn (cmake --install). Tried: " + "; ".join(tried or ["nothing"]))


lib, path = _open()

# The two modes a *_record takes in place of a command buffer (vkattn/context.h).
PREPARE = ffi.cast("VkCommandBuffer", 1)
RUN_NOW = ffi.cast("VkCommandBuffer", 2)


def version_tuple(v):
    """(major, minor, patch) of a VKATTN_VERSION number."""
    return (v >> 22, (v >> 12) & 0x3FF, v & 0xFFF)


try:  # a library that is not libvkattn: name it, not cffi's missing symbol
    _version = lib.vkattn_get_version()
except AttributeError:
    raise ImportError("vkattn: %s is not libvkattn (it has no vkattn_get_version); set "
                      "VKATTN_LIBRARY to the libvkattn.so.%d.%d file" % ((path,) + _ABI)) from None

if version_tuple(_version)[:2] != _ABI:
    raise ImportError("vkattn: %s is vkattn %d.%d.%d; this package needs vkattn %d.%d.x (while "
                      "vkattn is 0.x, each minor version has its own ABI)"
                      % ((path,) + version_tuple(_version) + _ABI))

# the library's version, "0.4.0": the package's __version__
version = "%d.%d.%d" % version_tuple(_version)

# vkattn_context_create under its exported name (VKATTN_ABI_NAME in vkattn/version.h)
context_create = getattr(lib, "vkattn_context_create_abi_%d_%d" % _ABI)
