#!/usr/bin/env python3
"""Writes python/vkattn/_weight_table.py from the library's weight tables, so the
Python package does not restate them (issue 35, item 1).

  scripts/gen-weight-table.py           rewrite python/vkattn/_weight_table.py
  scripts/gen-weight-table.py --check   exit 1 (with a diff) if it is stale

Reads the X-macro lists of src/shape/layer_weights.h (each weight's member, Keras
name, the desc options it exists under, rank, axes, how its device tensor starts
and how Keras counts its fans) and, from src/shape/layer_weights.c, which list each
Keras layer class uses. The generated module is checked in: an installed package
has no C sources. python/tests/test_weight_table_drift.py regenerates and compares.
Pure python3, no dependency.
"""
import difflib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEADER = os.path.join("src", "shape", "layer_weights.h")
SOURCE = os.path.join("src", "shape", "layer_weights.c")
OUTPUT = os.path.join("python", "vkattn", "_weight_table.py")

FIELDS = ("member", "keras", "needs", "rank", "axis0", "axis1", "axis2", "device", "fans")


def _code(text):
    """text without comments, continuation lines joined."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return text.replace("\\\n", " ")


def _enum_names(code, prefix):
    """The constants NAME of `prefix`NAME declared in the code's enums, in order."""
    names = []
    for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", code, re.S):
        for item in body.split(","):
            m = re.match(r"\s*%s(\w+)" % prefix, item)
            if m:
                names.append(m.group(1))
    if not names:
        raise SystemExit("%s: no enum constants %s*" % (HEADER, prefix))
    return names


def _flags(expr, prefix, known, where, zero=None):
    """"VKA_X_A | VKA_X_B" -> ("a", "b"), each checked against the enum; `zero`, the
    constant that means none, is left out."""
    out = []
    for part in expr.split("|"):
        part = part.strip()
        if part == zero:
            continue
        if not part.startswith(prefix) or part[len(prefix):] not in known:
            raise SystemExit("%s: %s: %r is not a %s* constant" % (HEADER, where, part, prefix))
        out.append(part[len(prefix):].lower())
    return tuple(out)


def _weight(args, lists, axes, needs, device, fans):
    where = "%s, %s" % (lists, args[0])
    f = dict(zip(FIELDS, args))
    keras = re.fullmatch(r'"([^"]+)"', f["keras"])
    if not keras or not f["rank"].isdigit():
        raise SystemExit("%s: %s: cannot read the Keras name or the rank" % (HEADER, where))
    rank = int(f["rank"])
    names = [f["axis%d" % i] for i in range(3)]
    for n in names:
        if not n.startswith("VKA_AXIS_") or n[9:] not in axes:
            raise SystemExit("%s: %s: %r is not a vka_weight_axis" % (HEADER, where, n))
    used = [n[9:].lower() for n in names[:rank]]
    if "none" in used or any(n != "VKA_AXIS_NONE" for n in names[rank:]):
        raise SystemExit("%s: %s: rank %d but axes %s" % (HEADER, where, rank, names))
    fan = f["fans"]
    if not fan.startswith("VKA_FANS_") or fan[9:] not in fans:
        raise SystemExit("%s: %s: %r is not a VKA_FANS_* constant" % (HEADER, where, fan))
    return (f["member"], keras.group(1),
            _flags(f["needs"], "VKA_WEIGHT_IF_", needs, where, "VKA_WEIGHT_ALWAYS"),
            rank, tuple(used), _flags(f["device"], "VKA_DEVICE_", device, where),
            fan[9:].lower())


def _lists(code, axes, needs, device, fans):
    """{"MHA": [weight, ...], ...} from the #define VKA_<NAME>_WEIGHTS(X) lists."""
    out = {}
    for m in re.finditer(r"#\s*define\s+VKA_(\w+)_WEIGHTS\(X\)(.*)", code):
        entries = re.findall(r"\bX\(([^()]*)\)", m.group(2))
        if not entries:
            raise SystemExit("%s: VKA_%s_WEIGHTS lists no X(...)" % (HEADER, m.group(1)))
        weights = []
        for e in entries:
            args = [a.strip() for a in e.split(",")]
            if len(args) != len(FIELDS):
                raise SystemExit("%s: VKA_%s_WEIGHTS: X(%s) has %d arguments, not %d"
                                 % (HEADER, m.group(1), e, len(args), len(FIELDS)))
            weights.append(_weight(args, "VKA_%s_WEIGHTS" % m.group(1), axes, needs,
                                   device, fans))
        out[m.group(1)] = weights
    return out


def _layers(code, lists):
    """[(Keras class name, list name)] of the vka_*_weight_table definitions."""
    arrays = dict(re.findall(r"vka_weight_info\s+(\w+)\[\]\s*=\s*\{\s*VKA_(\w+)_WEIGHTS\(",
                             code))
    out = []
    for layer, array in re.findall(
            r"const\s+vka_weight_table\s+\w+\s*=\s*\{\s*\"(\w+)\"\s*,\s*(\w+)\s*,", code):
        if arrays.get(array) not in lists:
            raise SystemExit("%s: %s's list %s is not a VKA_*_WEIGHTS expansion"
                             % (SOURCE, layer, array))
        out.append((layer, arrays[array]))
    if not out:
        raise SystemExit("%s: no vka_weight_table definitions" % SOURCE)
    return out


def _lit(v):
    """A Python literal of v (str, int or tuple of str), in double quotes."""
    if isinstance(v, tuple):
        return "(%s)" % (_lit(v[0]) + "," if len(v) == 1 else ", ".join(map(_lit, v)))
    return '"%s"' % v if isinstance(v, str) else str(v)


def generate(root=ROOT):
    """The text of _weight_table.py from the C sources under root."""
    header = _code(open(os.path.join(root, HEADER)).read())
    source = _code(open(os.path.join(root, SOURCE)).read())
    axes = _enum_names(header, "VKA_AXIS_")
    lists = _lists(header, axes, _enum_names(header, "VKA_WEIGHT_IF_"),
                   _enum_names(header, "VKA_DEVICE_"), _enum_names(header, "VKA_FANS_"))
    out = ['"""Each layer\'s weights as the library declares them (src/shape/layer_weights.h),',
           "in Keras's get_weights order. GENERATED by scripts/gen-weight-table.py: do not",
           "edit; python/tests/test_weight_table_drift.py fails when it is stale.",
           "",
           "Weight fields: member (of the C weights struct), keras (its name in a Keras",
           "file), needs (the desc options it exists under: all of them), rank (0: a",
           "scalar, a float in the C struct), axes (the widths its dims are, resolved",
           "from the desc), device (how a new layer's device tensor starts; \"f32\": kept",
           "in f32 by a float16 layer), fans (how Keras counts its fans).",
           '"""',
           "from collections import namedtuple",
           "",
           'Weight = namedtuple("Weight", "member keras needs rank axes device fans")',
           "",
           "# Keras class name -> its weights"]
    out.append("TABLES = {")
    for layer, name in _layers(source, lists):
        out.append("    %s: (" % _lit(layer))
        for w in lists[name]:
            head = "        Weight(%s, " % ", ".join(_lit(v) for v in w[:2])
            tail = ", ".join(_lit(v) for v in w[2:]) + "),"
            if len(head) + len(tail) > 99:  # the project's line width
                head = head.rstrip() + "\n" + " " * 15
            out.append(head + tail)
        out.append("    ),")
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv):
    text = generate()
    path = os.path.join(ROOT, OUTPUT)
    if argv[1:] == ["--check"]:
        old = open(path).read() if os.path.exists(path) else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), OUTPUT, "regenerated"))
            print("%s is stale: run scripts/gen-weight-table.py" % OUTPUT)
            return 1
        return 0
    if argv[1:]:
        print(__doc__.strip())
        return 2
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
