"""vkattn/_weight_table.py, generated from the library's weight tables
(src/shape/layer_weights.h) by scripts/gen-weight-table.py, against a fresh
generation: editing the C table without regenerating fails here. Skipped, with
the reason, where the C sources are not at hand (an installed package)."""
import importlib.util
import os

import pytest

from vkattn import _weight_table

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "gen-weight-table.py")


def _generator():
    if not os.path.exists(os.path.join(ROOT, "src", "shape", "layer_weights.h")):
        pytest.skip("no C sources next to the package (src/shape/layer_weights.h)")
    spec = importlib.util.spec_from_file_location("gen_weight_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_table_is_current():
    gen = _generator()
    with open(_weight_table.__file__) as f:
        assert f.read() == gen.generate(ROOT), \
            "vkattn/_weight_table.py is stale: run scripts/gen-weight-table.py"


def test_generator_refuses_an_unknown_constant(tmp_path):
    """A table the generator cannot read fails loudly, naming the weight, rather
    than writing a wrong table."""
    gen = _generator()
    shape = tmp_path / "src" / "shape"
    shape.mkdir(parents=True)
    for name in ("layer_weights.h", "layer_weights.c"):
        with open(os.path.join(ROOT, "src", "shape", name)) as f:
            text = f.read()
        if name.endswith(".h"):
            text = text.replace("VKA_AXIS_UNITS, VKA_AXIS_NONE,", "VKA_AXIS_UNIT, VKA_AXIS_NONE,")
        (shape / name).write_text(text)
    with pytest.raises(SystemExit, match="score_kernel.*VKA_AXIS_UNIT"):
        gen.generate(str(tmp_path))


def test_every_layer_has_a_table():
    """Each layer class's spec names a table; its weights are the table's in order."""
    from vkattn import _specs
    specs = [_specs.AttentionSpec(use_scale=True, score_mode="concat"),
             _specs.AdditiveAttentionSpec(), _specs.BahdanauSpec(3),
             _specs.MultiHeadAttentionSpec(2, 3, use_gate=True,
                                           open_model=(1e-6, None, None, True)),
             _specs.GroupedQueryAttentionSpec(3, 4, 2, use_gate=True,
                                              open_model=(1e-6, None, None, True))]
    assert sorted(s.layer for s in specs) == sorted(_weight_table.TABLES)
    for s in specs:  # every option on: every weight, in the table's order
        assert [f for f, _, _ in s.layout((4, 5, 6))] == \
            [w.member for w in _weight_table.TABLES[s.layer]]
