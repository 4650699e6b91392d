"""Contexts (one Vulkan device each) and the device list.

A Context creates its own headless device; layers and vkattn.sdpa run on it.
Layers built without an explicit context use default_context(), created on
first use with the defaults (the best device, no validation).
"""
import collections
import threading
import weakref

from ._lib import context_create, ffi, lib, version_tuple
from .errors import check, invalid

_DEVICE_TYPES = {0: "other", 1: "integrated", 2: "discrete", 3: "virtual", 4: "cpu"}
_LEVELS = {"error": 0, "warn": 1, "info": 2, "debug": 3}
_LEVEL_NAMES = {v: k for k, v in _LEVELS.items()}

Device = collections.namedtuple("Device", "index name vendor_id type api_version usable")


def devices():
    """The Vulkan devices of the system loader, as Device tuples (type is "discrete",
    "integrated", "virtual", "cpu" or "other"; api_version is (major, minor, patch))."""
    count = ffi.new("uint32_t *")
    check(lib.vkattn_enumerate_devices(ffi.NULL, count))
    infos = ffi.new("vkattn_device_info[]", max(count[0], 1))
    check(lib.vkattn_enumerate_devices(infos, count))
    return [Device(d.index, ffi.string(d.name).decode(errors="replace"), d.vendor_id,
                   _DEVICE_TYPES.get(d.device_type, "other"),
                   _api_version(d.api_version), bool(d.usable))
            for d in infos[0:count[0]]]


def profiles():
    """The device profile names Context(profile=...) accepts, "desktop" first."""
    count = ffi.new("uint32_t *")
    names = lib.vkattn_profile_names(count)
    return [ffi.string(names[i]).decode() for i in range(count[0])]


def _api_version(v):
    return ((v >> 22) & 0x7F, (v >> 12) & 0x3FF, v & 0xFFF)


def _destroy_context(handle, children, keepalive):
    # Layers first: the C API requires a context to outlive what it created.
    for fin in list(children):
        fin()
    lib.vkattn_context_destroy(handle)


class Context:
    """One vkattn context on its own device.

    device: None (the best device: discrete, integrated, virtual, then CPU),
    an int (index in devices()) or a str (case-insensitive substring of the name).
    profile: a device profile name (profiles()), None = the device's own limits.
    validation: enable the Khronos validation layer (UnsupportedError if it is
    not installed). log: a callable(level, source, message) receiving the
    library's messages up to log_level ("error", "warn", "info", "debug");
    source is "library" or "validation". It is called on the thread that made
    the vkattn call; exceptions it raises are printed and ignored.

    Close with close() or a with-block; layers still alive on the context are
    closed with it. Calls on one context are serialized by a lock.
    """

    def __init__(self, device=None, *, profile=None, validation=False, log=None,
                 log_level="warn"):
        desc = ffi.new("vkattn_context_desc *")
        keep = []  # cdata the C desc points at, alive until create returns
        if isinstance(device, bool) or not (device is None or isinstance(device, (int, str))):
            raise invalid("Context: device must be None, an int index or a name; got %r"
                          % (device,))
        if isinstance(device, int):
            if device < 0:
                raise invalid("Context: device index %d is negative" % device)
            desc.use_device_index = True
            desc.device_index = device
        elif isinstance(device, str):
            keep.append(ffi.new("char[]", device.encode()))
            desc.device_name = keep[-1]
        if profile is not None:
            keep.append(ffi.new("char[]", str(profile).encode()))
            desc.profile = keep[-1]
        desc.enable_validation = bool(validation)
        callback = None
        if log is not None:
            if log_level not in _LEVELS:
                raise invalid("Context: log_level %r is not one of %s"
                              % (log_level, ", ".join(_LEVELS)))

            def on_log(user, level, source, message):
                log(_LEVEL_NAMES.get(level, str(level)),
                    "validation" if source == 1 else "library",
                    ffi.string(message).decode(errors="replace"))

            callback = ffi.callback("vkattn_log_fn", on_log)
            desc.log = callback
            desc.log_level = _LEVELS[log_level]
        out = ffi.new("vkattn_context **")
        check(context_create(desc, out))
        self._handle = out[0]
        self._lock = threading.RLock()
        self._children = []  # finalizers of layers on this context
        self._finalizer = weakref.finalize(self, _destroy_context, self._handle,
                                           self._children, callback)

    @property
    def closed(self):
        return not self._finalizer.alive

    def close(self):
        """Destroys the device and every layer still alive on it. Idempotent."""
        with self._lock:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _ptr(self):
        if self.closed:
            raise invalid("this vkattn.Context is closed")
        return self._handle

    def _adopt(self, finalizer):
        """Registers a child's finalizer, run before the context is destroyed."""
        self._children[:] = [f for f in self._children if f.alive] + [finalizer]

    def info(self):
        """The device and the limits vkattn assumes, as a dict (vkattn_context_info)."""
        with self._lock:
            info = ffi.new("vkattn_context_info *")
            check(lib.vkattn_context_get_info(self._ptr(), info), self._handle)
        out = {}
        for name, _ in ffi.typeof("vkattn_context_info").fields:
            value = getattr(info, name)
            if name in ("device_name", "profile"):
                value = ffi.string(value).decode(errors="replace")
            elif name in ("max_workgroup_size", "max_workgroup_count"):
                value = tuple(value)
            elif name == "device_type":
                value = _DEVICE_TYPES.get(value, "other")
            elif name == "api_version":
                value = _api_version(value)
            out[name] = value
        return out

    @property
    def device_name(self):
        return self.info()["device_name"]

    def __repr__(self):
        if self.closed:
            return "<vkattn.Context closed>"
        return "<vkattn.Context %r>" % self.device_name


_default = None
_default_lock = threading.Lock()


def default_context():
    """The context layers use when given none: created on first use with the defaults."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Context()
        return _default


def library_version():
    """(major, minor, patch) of the libvkattn actually loaded."""
    return version_tuple(lib.vkattn_get_version())
