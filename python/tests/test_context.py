"""Devices, contexts and lifetimes."""
import os

import numpy as np
import pytest

import conftest
import vkattn


def test_session_context_validates(ctx):
    """The tests' context has the validation layer on, so the log check means something."""
    if os.environ.get("VKATTN_TEST_NO_VALIDATION") or conftest.VALIDATION_MISSING:
        pytest.skip("validation off: %s" % (conftest.VALIDATION_MISSING or
                                            "VKATTN_TEST_NO_VALIDATION"))
    assert ctx.info()["validation"]


def test_devices_and_info(ctx):
    devs = vkattn.devices()
    assert devs and all(isinstance(d, vkattn.Device) for d in devs)
    assert any(d.usable for d in devs)
    info = ctx.info()
    assert info["device_name"] == ctx.device_name
    assert info["device_name"] in [d.name for d in devs]
    assert info["profile"] in vkattn.profiles()
    assert vkattn.profiles()[0] == "desktop"
    assert vkattn.library_version()[0] == 0


def test_context_by_index_and_name_closes():
    dev = [d for d in vkattn.devices() if d.usable][0]
    with vkattn.Context(dev.index) as c:
        assert c.device_name == dev.name
        layer = vkattn.Attention(context=c)
        out = layer([np.ones((1, 2, 3)), np.ones((1, 4, 3))])
        np.testing.assert_allclose(out, np.ones((1, 2, 3)), rtol=1e-6)
    assert c.closed and "closed" in repr(c)
    with pytest.raises(vkattn.InvalidArgumentError, match="closed"):
        layer([np.ones((1, 2, 3)), np.ones((1, 4, 3))])
    c.close()  # idempotent
    with vkattn.Context(dev.name[:4].upper(), profile="mobile-min") as c2:
        assert c2.info()["profile"] == "mobile-min"


def test_context_errors():
    with pytest.raises(vkattn.NoDeviceError, match="vkattn_context_create"):
        vkattn.Context(device=10_000)
    with pytest.raises(vkattn.NoDeviceError, match="vkattn_context_create"):
        vkattn.Context(device="no such device name")
    with pytest.raises(vkattn.InvalidArgumentError, match="profile"):
        vkattn.Context(profile="nope")
    with pytest.raises(vkattn.InvalidArgumentError, match="device"):
        vkattn.Context(device=1.5)


def test_layer_close_then_context_close(ctx):
    with vkattn.Context() as c:
        a = vkattn.MultiHeadAttention(2, 2, context=c)
        a(np.ones((1, 3, 4)), np.ones((1, 3, 4)))
        a.close()
        a.close()
        b = vkattn.MultiHeadAttention(2, 2, context=c)
        b(np.ones((1, 3, 4)), np.ones((1, 3, 4)))
        del b  # freed by its finalizer, before the context


def test_default_context():
    c = vkattn.default_context()
    assert c is vkattn.default_context()
    out = vkattn.Attention()([np.ones((1, 2, 3)), np.ones((1, 4, 3))])
    assert out.shape == (1, 2, 3)
