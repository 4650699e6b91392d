#!/usr/bin/env python3
"""The layout of every public struct, frozen per minor version (docs/INTEGRATION.md,
"ABI and versions").

  scripts/abi-layout.py write BUILD_DIR   regenerate tests/unit/abi_layout.h: compiles a
                                          small program against include/ and
                                          BUILD_DIR/include that prints sizeof, _Alignof
                                          and offsetof of every struct and field
  scripts/abi-layout.py check SRC_DIR     (CTest unit.abi_layout_names) every struct and
                                          field the headers declare is in the table, and
                                          nothing else: a struct or field added without
                                          regenerating the table fails, even where
                                          padding hides it from sizeof

tests/unit/test_abi_layout.c compiles the table and compares it with the compiler's
layout, so a changed layout without a new minor version fails CI. Only structs
defined as `typedef struct name {...} name;` in include/vkattn/*.h are public
structs (opaque handles have no layout).
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TABLE = os.path.join("tests", "unit", "abi_layout.h")
STRUCT_RE = re.compile(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", re.S)


def public_structs(root):
    """[(struct, [field, ...])] in header order, headers sorted by name."""
    inc = os.path.join(root, "include", "vkattn")
    out = []
    for h in sorted(os.listdir(inc)):
        if not h.endswith(".h"):
            continue
        text = open(os.path.join(inc, h)).read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        for m in STRUCT_RE.finditer(text):
            if "{" in m.group(2):
                sys.exit("%s: %s has a nested struct or union; teach %s about it"
                         % (h, m.group(3), sys.argv[0]))
            out.append((m.group(3), fields(m.group(2))))
    return out


def fields(body):
    names = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        if "(" in decl:  # a function pointer: type (*name)(args)
            names.append(re.search(r"\(\s*\*\s*(\w+)\s*\)", decl).group(1))
            continue
        for part in decl.split(","):
            part = re.sub(r"\[[^\]]*\]", "", part).strip()
            names.append(re.findall(r"\w+", part)[-1])
    return names


def table_names(path):
    """[(struct, [field, ...])] as the table lists them."""
    out = []
    for line in open(path):
        m = re.match(r"ABI_STRUCT\((\w+),", line)
        if m:
            out.append((m.group(1), []))
        m = re.match(r"ABI_FIELD\((\w+), (\w+),", line)
        if m:
            out[-1][1].append(m.group(2))
    return out


def write(build):
    structs = public_structs(ROOT)
    prog = ["#include <stddef.h>", "#include <stdio.h>", "#include <vkattn/vkattn.h>",
            "#include <vkattn/advanced.h>", "#include <vkattn/peak.h>", "int main(void) {",
            'printf("%d %d\\n", VKATTN_VERSION_MAJOR, VKATTN_VERSION_MINOR);']
    for s, fs in structs:
        prog.append('printf("ABI_STRUCT(%s, %%zu, %%zu)\\n", sizeof(%s), _Alignof(%s));'
                    % (s, s, s))
        for f in fs:
            prog.append('printf("ABI_FIELD(%s, %s, %%zu, %%zu)\\n", offsetof(%s, %s), '
                        'sizeof(((%s *)0)->%s));' % (s, f, s, f, s, f))
    prog += ["return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
        open(src, "w").write("\n".join(prog) + "\n")
        subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-o", exe, src,
                        "-I" + os.path.join(ROOT, "include"),
                        "-I" + os.path.join(build, "include")], check=True)
        lines = subprocess.run([exe], check=True, capture_output=True,
                               text=True).stdout.splitlines()
    major, minor = lines[0].split()
    head = [
        "/* tests/unit/abi_layout.h - written by scripts/abi-layout.py; do not edit.",
        " *",
        " * The layout of every public struct of vkattn %s.%s on 64-bit platforms"
        % (major, minor),
        " * (LP64 and LLP64 agree here): ABI_STRUCT(type, sizeof, _Alignof) and",
        " * ABI_FIELD(type, field, offsetof, sizeof). tests/unit/test_abi_layout.c",
        " * compares it with the compiler; docs/INTEGRATION.md, \"ABI and versions\". */",
        "#define ABI_LAYOUT_MAJOR %s" % major,
        "#define ABI_LAYOUT_MINOR %s" % minor,
    ]
    with open(os.path.join(ROOT, TABLE), "w") as f:
        f.write("\n".join(head + lines[1:]) + "\n")
    print("%s: %d structs, %d fields of vkattn %s.%s"
          % (TABLE, len(structs), sum(len(fs) for _, fs in structs), major, minor))


def check(root):
    want = public_structs(root)
    have = table_names(os.path.join(root, TABLE))
    if want == have:
        print("ok: the %d public structs and their %d fields are all in %s"
              % (len(want), sum(len(fs) for _, fs in want), TABLE))
        return 0
    w, h = dict(want), dict(have)
    for s in w:
        if s not in h:
            print("%s: a public struct that %s does not list" % (s, TABLE))
        elif w[s] != h[s]:
            added = [f for f in w[s] if f not in h[s]]
            gone = [f for f in h[s] if f not in w[s]]
            print("%s: %s%s%s" % (s, "new fields %s; " % ", ".join(added) if added else "",
                                  "fields gone %s; " % ", ".join(gone) if gone else "",
                                  "the fields differ from %s (order or names)" % TABLE))
    for s in h:
        if s not in w:
            print("%s: in %s but no longer in the headers" % (s, TABLE))
    if [s for s, _ in want] != [s for s, _ in have] and set(w) == set(h):
        print("the structs are listed in another order than the headers declare them")
    print("A public struct changed. Within a minor version (0.3.x) public structs do not "
          "change: undo it. For the next minor: bump project(VERSION) in CMakeLists.txt, "
          "build, run scripts/abi-layout.py write BUILD_DIR, and say in CHANGELOG.md what "
          "an app must do (docs/INTEGRATION.md, \"ABI and versions\").")
    return 1


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    if sys.argv[1] == "write":
        write(os.path.abspath(sys.argv[2]))
    else:
        sys.exit(check(os.path.abspath(sys.argv[2])))
