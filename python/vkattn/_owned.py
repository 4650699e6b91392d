"""The lifetime every context-owned device object of the binding shares
(vkattn.Tensor, vkattn.KVCache): a handle freed by close(), a with-block, the
garbage collector or its context, whichever comes first."""
import weakref

from .errors import invalid


class ContextOwned:
    _what = "object"  # names the object in the "closed" error

    def _own(self, handle, destroy):
        """Takes `handle` (created under self._context's lock, which the caller holds)."""
        self._handle = handle
        self._finalizer = weakref.finalize(self, destroy, handle)
        self._context._adopt(self._finalizer)

    def _owner(self):
        return self

    @property
    def context(self):
        return self._context

    @property
    def closed(self):
        return not self._owner()._finalizer.alive

    def close(self):
        """Frees the device memory now. Idempotent."""
        with self._context._lock:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _ptr(self, who=None):
        if self.closed:
            raise invalid("%s: the %s is closed (or its context is)"
                          % (who or self._what, self._what))
        return self._handle
