#!/usr/bin/env python3
"""Rewrites C/C++ sources (and the code in Markdown files) from vkattn 0.2's
API to 0.3's. Usage: scripts/migrate-0.3.py [--dry-run] PATH...  (files or
folders; folders are walked for .c .h .cc .cpp .hpp .cxx .md).

What it rewrites (calls may span lines; comments and strings inside the
arguments are kept as they are):
  vkattn_X_run(a, ...)            -> vkattn_X_record(a, VKATTN_RUN_NOW, ...)
  vkattn_X_prepare(a, ...)        -> vkattn_X_record(a, VKATTN_PREPARE, ...)
  vkattn_X_run_cached(a, ...)     -> vkattn_X_record_cached(a, VKATTN_RUN_NOW, ...)
  vkattn_X_prepare_cached(a, ...) -> vkattn_X_record_cached(a, VKATTN_PREPARE, ...)
  vkattn_kv_cache_append_run / _reset_run -> *_record(c, VKATTN_RUN_NOW, ...)
and the further cuts of 0.3 (_other_rules below): the references' _typed twins
(merged into the plain names, which take the element types, NULL = f32), the
references of the dropout and head backward (the forward on the gradient),
the tensor queries (vkattn_tensor_get_info), the KV cache's keys, values and
overflowed (its desc; vkattn_kv_cache_lengths). The scalar f16 conversions
cannot be rewritten: they are reported with their array form. It is idempotent: a second run
changes nothing. Names inside string literals are left alone (messages); names
in comments are rewritten like code. It prints each change as
FILE:LINE: old -> new, and, as
"left:", each use of a 0.2 name it could not rewrite (a function pointer, a
name in prose): fix those by hand. A file whose first lines say "migrate-0.3: keep" is
skipped.
"""
import bisect
import os
import re
import sys

# Every 0.2 *_record whose *_run / *_prepare went away (one list: the stems).
RECORD_STEMS = """
    additive additive_backward additive_attention additive_attention_backward
    attention attention_backward bahdanau bahdanau_backward dropout dropout_backward
    gqa gqa_backward heads_merge heads_merge_backward heads_split heads_split_backward
    matmul matmul_backward mha mha_backward mse optim_step sdpa sdpa_backward
    sdpa_decode softmax softmax_backward
""".split()
CACHED_STEMS = ["mha", "gqa"]
KV_STEMS = ["kv_cache_append", "kv_cache_reset"]


def _mode_rules():
    rules = {}
    for s in RECORD_STEMS:
        rules["vkattn_%s_run" % s] = ("insert", "vkattn_%s_record" % s, 1, "VKATTN_RUN_NOW")
        rules["vkattn_%s_prepare" % s] = ("insert", "vkattn_%s_record" % s, 1, "VKATTN_PREPARE")
    for s in CACHED_STEMS:
        rules["vkattn_%s_run_cached" % s] = ("insert", "vkattn_%s_record_cached" % s, 1,
                                             "VKATTN_RUN_NOW")
        rules["vkattn_%s_prepare_cached" % s] = ("insert", "vkattn_%s_record_cached" % s, 1,
                                                 "VKATTN_PREPARE")
    for s in KV_STEMS:
        rules["vkattn_%s_run" % s] = ("insert", "vkattn_%s_record" % s, 1, "VKATTN_RUN_NOW")
    return rules


# name -> rule. Kinds:
#   ("insert", new_name, position, text): rename, insert `text` as argument
#       number `position` (0-based).
#   ("insert_if", new_name, position, text, old_argc): the same, only where
#       the call has old_argc arguments (the name stays: idempotent).
#   ("rename", new_name): the same arguments.
#   ("expr", template): the call becomes template.format(*args).
#   ("hint", text): not rewritten; reported with what to write instead.
# The references' typed twins merged into the plain names, which now take the
# element types after their params (NULL = all f32): name -> 0.2 argument count.
TYPED_REFERENCES = {"matmul": 5, "softmax": 6, "additive": 5, "heads_split": 3,
                    "heads_merge": 3, "dropout": 3, "sdpa": 9, "sdpa_decode": 7}


def _other_rules():
    rules = {}
    for name, argc in TYPED_REFERENCES.items():
        plain = "vkattn_reference_" + name
        rules[plain + "_typed"] = ("rename", plain)
        rules[plain] = ("insert_if", plain, 1, "NULL", argc)
    rules.update({
        # no backward of their own: the forward on the gradient
        "vkattn_reference_dropout_backward": ("expr", "vkattn_reference_dropout({0}, NULL, {1}, {2})"),
        "vkattn_reference_heads_split_backward":
            ("expr", "vkattn_reference_heads_merge({0}, NULL, {1}, {2})"),
        "vkattn_reference_heads_merge_backward":
            ("expr", "vkattn_reference_heads_split({0}, NULL, {1}, {2})"),
        # one query for what a tensor is
        "vkattn_tensor_rank": ("expr", "vkattn_tensor_get_info({0}).desc.rank"),
        "vkattn_tensor_dim": ("expr", "vkattn_tensor_get_info({0}).desc.dims[{1}]"),
        "vkattn_tensor_dtype": ("expr", "vkattn_tensor_get_info({0}).desc.dtype"),
        "vkattn_tensor_count": ("expr", "vkattn_tensor_get_info({0}).count"),
        "vkattn_tensor_buffer": ("expr", "vkattn_tensor_get_info({0}).buffer"),
        # the KV cache: its tensors are in its desc; lengths and flag in one download
        "vkattn_kv_cache_keys": ("expr", "vkattn_kv_cache_get_desc({0}).keys"),
        "vkattn_kv_cache_values": ("expr", "vkattn_kv_cache_get_desc({0}).values"),
        "vkattn_kv_cache_lengths": ("insert_if", "vkattn_kv_cache_lengths", 2, "NULL", 2),
        "vkattn_kv_cache_overflowed": ("expr", "vkattn_kv_cache_lengths({0}, NULL, {1})"),
        # one value: the array forms with count 1 (no expression can say it)
        "vkattn_f32_to_f16_bits": ("hint", "vkattn_f32_to_f16_array(&bits, &value, 1)"),
        "vkattn_f16_bits_to_f32": ("hint", "vkattn_f16_to_f32_array(&value, &bits, 1)"),
    })
    return rules


RULES = _mode_rules()
RULES.update(_other_rules())


def _split_args(text, start):
    """text[start] is '('. Returns (end, [(arg_start, arg_end)...]) with end
    the index after the matching ')', or None if unbalanced."""
    depth, i, args, arg_start = 0, start, [], start + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            q, i = c, i + 1
            while i < n and text[i] != q:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append((arg_start, i))
                return i + 1, args
        elif c == "," and depth == 1:
            args.append((arg_start, i))
            arg_start = i + 1
        i += 1
    return None


def _argc(text, args):
    if len(args) == 1 and not text[args[0][0]:args[0][1]].strip():
        return 0
    return len(args)


NAME_RE = None


def _string_spans(text):
    """(start, end) of every C string literal, outside comments: a name in a
    string (a message a test matches) is not a call."""
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                spans.append((i, j))
            i = j + 1
        else:
            i += 1
    return spans


def rewrite(text):
    """Returns (new_text, [(offset, old, new)], [offset of names left])."""
    global NAME_RE
    if NAME_RE is None:
        NAME_RE = re.compile(r"\b(" + "|".join(sorted(RULES, key=len, reverse=True)) + r")\b")
    out, changes, left, pos = [], [], [], 0
    strings = _string_spans(text)
    starts = [a for a, _ in strings]
    for m in NAME_RE.finditer(text):
        if m.start() < pos:
            continue
        k = bisect.bisect_right(starts, m.start()) - 1
        if k >= 0 and strings[k][0] < m.start() < strings[k][1]:
            continue  # inside a string literal
        name = m.group(1)
        rule = RULES[name]
        j = m.end()
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if j >= len(text) or text[j] != "(":
            if rule[0] != "insert_if":  # a name that still exists is no leftover
                left.append((m.start(), name))
            continue
        split = _split_args(text, j)
        if split is None:
            left.append((m.start(), name))
            continue
        end, args = split
        argc = _argc(text, args)
        kind = rule[0]
        if kind == "hint":
            left.append((m.start(), "%s (use %s)" % (name, rule[1])))
            continue
        if kind == "rename":
            call = text[m.start():end]
            new = rule[1] + call[len(name):]
        elif kind in ("insert", "insert_if"):
            new_name, position, extra = rule[1], rule[2], rule[3]
            if kind == "insert_if" and argc != rule[4]:
                continue  # already the new form
            if position > argc:
                left.append((m.start(), name))
                continue
            call = text[m.start():end]
            if position == 0:
                sep = "" if argc == 0 else ", "
                at = args[0][0] - m.start()
                new = new_name + text[m.end():args[0][0]] + extra + sep + call[at:]
            else:
                at = args[position - 1][1] - m.start()
                new = new_name + call[len(name):at] + ", " + extra + call[at:]
        else:  # expr
            parts = [text[a:b].strip() for a, b in args]
            try:
                new = rule[1].format(*parts)
            except IndexError:
                left.append((m.start(), name))
                continue
            call = text[m.start():end]
        out.append(text[pos:m.start()])
        out.append(new)
        changes.append((m.start(), call, new))
        pos = end
    out.append(text[pos:])
    return "".join(out), changes, left


SKIP_MARK = "migrate-0.3: keep"  # in a file's first lines: left alone
EXTS = (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".md")


def files_of(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs[:] = [d for d in dirs if not d.startswith(".") and d != "build"]
                for n in sorted(names):
                    if n.endswith(EXTS):
                        yield os.path.join(root, n)
        else:
            yield p


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def one_line(s):
    return " ".join(s.split())


def main(argv):
    dry = "--dry-run" in argv
    paths = [a for a in argv if a != "--dry-run"]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    total = 0
    for path in files_of(paths):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            print("%s: skipped (%s)" % (path, e), file=sys.stderr)
            continue
        if SKIP_MARK in text[:300]:
            continue  # a file that must keep its 0.2 calls (the script's own test)
        new, changes, left = rewrite(text)
        for off, old, rep in changes:
            print("%s:%d: %s -> %s" % (path, line_of(text, off), one_line(old), one_line(rep)))
        for off, name in left:
            print("%s:%d: left: %s: fix by hand" % (path, line_of(text, off), name))
        if changes and not dry:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
        total += len(changes)
    print("%d call(s) %s" % (total, "would change" if dry else "changed"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
