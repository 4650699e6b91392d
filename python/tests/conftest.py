"""Shared fixtures: one validated context on the default device, a seeded RNG,
and a check after every test that the validation layer reported nothing.

Environment (as for the C tests): VKATTN_REQUIRE_DEVICE set = no device is a
failure, not a skip; VKATTN_TEST_SEED=N replays a run; VKATTN_TEST_PROFILE
picks a device profile; VKATTN_TEST_NO_VALIDATION turns the layer off.
"""
import os
import random
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import vkattn  # noqa: E402

BASE_SEED = int(os.environ.get("VKATTN_TEST_SEED", random.randrange(2**31)))
_messages = []
VALIDATION_MISSING = []  # why the session context runs without the layer, if it does


def pytest_report_header(config):
    return "vkattn: %s, VKATTN_TEST_SEED=%d" % (vkattn.library_path, BASE_SEED)


def _log(level, source, message):
    # As the C harness: any validation warning or error fails the test.
    if source == "validation" and level in ("error", "warn"):
        _messages.append("VALIDATION %s: %s" % (level, message))


def _skip_or_fail(reason):
    if os.environ.get("VKATTN_REQUIRE_DEVICE"):
        pytest.fail("no device, and VKATTN_REQUIRE_DEVICE is set: " + reason)
    pytest.skip("no Vulkan device: " + reason)


@pytest.fixture(scope="session")
def ctx():
    validation = not os.environ.get("VKATTN_TEST_NO_VALIDATION")
    profile = os.environ.get("VKATTN_TEST_PROFILE") or None
    try:
        c = vkattn.Context(validation=validation, profile=profile, log=_log)
    except vkattn.UnsupportedError as e:
        if "validation" not in str(e):
            raise
        print("validation layer not installed; running without it: %s" % e, file=sys.stderr)
        VALIDATION_MISSING.append(str(e))
        c = vkattn.Context(profile=profile, log=_log)
    except (vkattn.NoVulkanError, vkattn.NoDeviceError) as e:
        _skip_or_fail(str(e))
    yield c
    c.close()


@pytest.fixture(autouse=True)
def no_validation_messages():
    del _messages[:]
    yield
    assert not _messages, "\n".join(_messages)


@pytest.fixture
def rng(request):
    """A generator seeded from the run's seed and the test's name."""
    return np.random.default_rng([BASE_SEED, zlib.crc32(request.node.nodeid.encode())])


def assert_close(got, want, rtol=1e-4, atol=1e-5):
    """|got - want| <= atol * max(1, max|want|) + rtol * |want|, elementwise: fp32 on
    the device against double (numpy float64 or the library's reference)."""
    want = np.asarray(want, np.float64)
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale)
