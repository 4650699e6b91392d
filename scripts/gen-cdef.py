#!/usr/bin/env python3
"""Writes python/vkattn/_cdef.py, the package's cffi declarations, from the public
headers, so the package does not copy them by hand (issue 35, item 1).

  scripts/gen-cdef.py [INCLUDE_DIR ...]           rewrite python/vkattn/_cdef.py
  scripts/gen-cdef.py --check [INCLUDE_DIR ...]   exit 1 (with a diff) if it is stale

INCLUDE_DIRs: where vkattn/vkattn.h and the generated vkattn/version.h are
(default: include/ and build/include). Reads vkattn/vkattn.h and the headers it
includes, in the preprocessor's order, and keeps what cffi's ABI mode can take:
every type and prototype, with the X-macro lists and integer #defines expanded,
the static inline helpers, VKATTN_API and the preprocessor lines dropped, and
vkattn_context_create under its ABI name (VKATTN_ABI_NAME). Vulkan's types come
from the short preamble below, the one hand-written part: a header that uses a
Vulkan type the preamble lacks fails here. The generated module is checked in (an
installed package has no headers); python/tests/test_cdef_drift.py regenerates
and compares, and compares cffi's layouts with the compiler's. Pure python3.
"""
import difflib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUTPUT = os.path.join("python", "vkattn", "_cdef.py")

# Vulkan's types as the headers use them: handles are pointers to opaque structs
# (vulkan_core.h on 64-bit targets), flags 32-bit.
VULKAN = r"""
typedef struct VkInstance_T *VkInstance;
typedef struct VkPhysicalDevice_T *VkPhysicalDevice;
typedef struct VkDevice_T *VkDevice;
typedef struct VkQueue_T *VkQueue;
typedef struct VkCommandBuffer_T *VkCommandBuffer;
typedef struct VkPipelineCache_T *VkPipelineCache;
typedef struct VkDeviceMemory_T *VkDeviceMemory;
typedef struct VkBuffer_T *VkBuffer;
typedef uint64_t VkDeviceSize;
typedef uint32_t VkAccessFlags;
typedef uint32_t VkPipelineStageFlags;
typedef void (*PFN_vkVoidFunction)(void);
typedef PFN_vkVoidFunction (*PFN_vkGetInstanceProcAddr)(VkInstance instance, const char *pName);
"""


def _find(name, dirs):
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.exists(path):
            return path
    raise SystemExit("%s not found in %s" % (name, ", ".join(dirs)))


def _headers(name, dirs, seen, out):
    """name and the vkattn/ headers it includes, each after its own includes."""
    if name in seen:
        return
    seen.add(name)
    text = open(_find(name, dirs)).read()
    for inc in re.findall(r'^\s*#\s*include\s+"(vkattn/\w+\.h)"', text, re.M):
        _headers(inc, dirs, seen, out)
    out.append((name, text))


def _args(text, i):
    """The macro arguments of the call whose "(" is at text[i]: ([arg, ...], end)."""
    args, depth, start, quote = [], 0, i + 1, False
    for j in range(i, len(text)):
        c = text[j]
        if quote:
            quote = c != '"' or text[j - 1] == "\\"
        elif c == '"':
            quote = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(text[start:j].strip())
                return args, j + 1
        elif c == "," and depth == 1:
            args.append(text[start:j].strip())
            start = j + 1
    raise SystemExit("unbalanced macro call at %r" % text[i - 40:i + 40])


def _expand(text, functions):
    """text with the function-like macros expanded (bodies rescanned, as cpp)."""
    pattern = re.compile(r"\b(%s)\s*\(" % "|".join(functions)) if functions else None
    for _ in range(100):
        m = pattern.search(text) if pattern else None
        if not m:
            return text
        params, body = functions[m.group(1)]
        args, end = _args(text, m.end() - 1)
        if len(args) != len(params):
            raise SystemExit("%s takes %d arguments; given %r" % (m.group(1), len(params), args))
        for p, a in zip(params, args):
            body = re.sub(r"\b%s\b" % p, lambda _, a=a: a, body)
        text = text[:m.start()] + re.sub(r"\s*##\s*", "", body) + text[end:]
    raise SystemExit("macro expansion does not end")


def _drop_inline(text):
    """text without its static inline function definitions."""
    while True:
        m = re.search(r"\bstatic\s+inline\b[^{;]*\{", text)
        if not m:
            return text
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[:m.start()] + text[i:]


def declarations(dirs):
    """The headers' types and prototypes as cffi text: (types, functions, structs, enums,
    (major, minor) of vkattn/version.h)."""
    order = []
    _headers("vkattn/vkattn.h", dirs, set(), order)
    functions, objects, parts = {}, {}, []
    for name, text in order:
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text).replace("\\\n", " ")
        text = re.sub(r"#\s*ifdef\s+__cplusplus.*?#\s*endif", "", text, flags=re.S)
        kept = []
        for line in text.split("\n"):
            m = re.match(r"\s*#\s*define\s+(\w+)(\(([\w\s,]*)\))?\s*(.*)", line)
            if m and m.group(2):
                functions[m.group(1)] = ([p.strip() for p in m.group(3).split(",")],
                                         m.group(4).strip())
            elif m and m.group(1) != "VKATTN_API" and m.group(4).strip():
                objects[m.group(1)] = m.group(4).strip()
            if not line.strip().startswith("#"):
                kept.append(line)
        parts.append((name, "\n".join(kept)))
    types, protos, structs, enums = [], [], [], []
    for name, text in parts:
        text = _drop_inline(re.sub(r"\bVKATTN_API\b", "", text))
        # object-like macros once (the ABI rename refers to its own name), then calls
        text = re.sub(r"\b(%s)\b" % "|".join(objects),
                      lambda m: objects[m.group(1)], text)
        text = _expand(text, functions)
        text = re.sub(r"\b(\d+)[uU]\b", r"\1", text)  # integer suffixes, for cffi's parser
        t, f = [], []
        for decl in _split(text):
            (f if re.match(r"(?!typedef\b)[^(]*\b\w+\s*\(", decl) else t).append(decl)
            structs += re.findall(r"^typedef\s+struct\s+(\w+)\s*\{", decl)
            enums += re.findall(r"^typedef\s+enum\s+(\w+)\s*\{", decl)
        if t:
            types.append("/* ---- %s */\n%s" % (name[7:], "\n\n".join(t)))
        if f:
            protos.append("/* ---- %s */\n%s" % (name[7:], "\n".join(f)))
    abi = tuple(int(objects.get("VKATTN_VERSION_" + k, "-1")) for k in ("MAJOR", "MINOR"))
    if min(abi) < 0:
        raise SystemExit("vkattn/version.h gives no VKATTN_VERSION_MAJOR and _MINOR")
    return ("\n\n".join([VULKAN.strip()] + types), "\n\n".join(protos), structs, enums, abi)


def _split(text):
    """Top-level declarations, each ended by the ";" outside braces, whitespace squeezed."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == ";" and depth == 0:
            decl = text[start:i + 1].strip()
            start = i + 1
            if decl != ";":
                out.append(_tidy(decl))
    if text[start:].strip():
        raise SystemExit("text after the last declaration: %r" % text[start:].strip()[:80])
    return out


def _tidy(decl):
    """One declaration as the header lays it out, blank lines dropped, an expanded
    X-macro list one enumerator a line."""
    lines = []
    for line in decl.split("\n"):
        line = line.rstrip()
        if re.fullmatch(r"\s*(\w+ = -?\w+, *){2,}", line):
            indent = line[:len(line) - len(line.lstrip())]
            lines += [indent + e.strip() + "," for e in line.split(",") if e.strip()]
        elif line.strip():
            lines.append(line)
    return "\n".join(lines)


def _tuple(names):
    body, line = [], "   "
    for n in names:
        item = ' "%s",' % n
        if len(line) + len(item) > 99:
            body.append(line)
            line = "   "
        line += item
    body.append(line)
    return "(\n%s\n)" % "\n".join(body)


def generate(dirs):
    types, functions, structs, enums, abi = declarations(dirs)
    return "\n".join([
        '"""The C declarations the package uses, for cffi\'s ABI mode. GENERATED from',
        "include/vkattn/*.h (and the build's vkattn/version.h) by scripts/gen-cdef.py:",
        "do not edit; python/tests/test_cdef_drift.py fails when it is stale, and compares",
        "cffi's sizeof, offsetof and enum values with the compiler's and compiles",
        "FUNCTIONS next to the headers.",
        '"""',
        "",
        "ABI = %r  # the (major, minor) of the headers: the library's must match" % (abi,),
        "",
        'TYPES = r"""', types, '"""',
        "",
        'FUNCTIONS = r"""', functions, '"""',
        "",
        "# The structs and enums the drift test compares with the headers.",
        "STRUCTS = " + _tuple(structs),
        "ENUMS = " + _tuple(enums),
        ""])


def main(argv):
    check = argv[1:2] == ["--check"]
    dirs = argv[1 + check:] or [os.path.join(ROOT, "include"),
                                os.path.join(ROOT, "build", "include")]
    if any(d.startswith("-") for d in dirs):
        print(__doc__.strip())
        return 2
    text = generate(dirs)
    path = os.path.join(ROOT, OUTPUT)
    if check:
        old = open(path).read() if os.path.exists(path) else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), OUTPUT, "regenerated"))
            print("%s is stale: run scripts/gen-cdef.py" % OUTPUT)
            return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
