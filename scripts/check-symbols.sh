#!/usr/bin/env bash
# The dependency rule of docs/ARCHITECTURE.md, checked on what links: which
# folder's objects reference which folder's symbols. The include check
# (scripts/check-layering.sh) reads #include lines; this one cannot be fooled
# by a header that includes another, a hand-written prototype or an
# `#include MACRO`, because it reads the object files the library is made of.
#
# usage: scripts/check-symbols.sh OBJECT...
#        scripts/check-symbols.sh --list FILE   (one object path a line)
#   Each object's folder is the path component after the last `*.dir/`
#   (CMake's layout, e.g. .../vkattn.dir/layers/mha.c.o -> layers) or, without
#   one, its parent directory's name. Run by CTest as unit.layering_symbols on
#   $<TARGET_OBJECTS:...> of the library.
#
# The rule (a folder may use symbols defined in):
#   core       core
#   shape      core shape
#   reference  core shape reference
#   weights    core shape weights
#   vk         core vk volk
#   ops        core shape vk ops shaders
#   layers     core shape ops layers; of vk/ only view (vk/view.h, what layers
#              see of a context), tensor, submit, record_mode and prepare, except public
#              vkattn_* functions, which layers may call wherever they are
#              defined (outside reference/) but for vkattn_tensor_release and
#              vkattn_tensor_acquire, which record a barrier
#   shaders    nothing (generated SPIR-V arrays)
#   volk       nothing
# A symbol no object defines (libc, libm, jansson, the loader) passes. An
# object in a folder the rule does not name fails: a new folder must be given
# its place here first.
# Prints one line per offence and exits 1; exits 2 on bad usage or when no
# object was given, so that it cannot pass by checking nothing.
set -u
if [ "${1:-}" = --list ]; then
    [ $# = 2 ] && [ -f "$2" ] || { echo "check-symbols: --list needs one readable file" >&2; exit 2; }
    mapfile -t listed < <(grep -v '^[[:space:]]*$' "$2")
    set -- "${listed[@]}"
fi
if [ $# = 0 ]; then
    echo "check-symbols: no object files given" >&2
    exit 2
fi
command -v nm >/dev/null || { echo "check-symbols: nm not found (binutils)" >&2; exit 2; }

for o in "$@"; do
    if [ ! -f "$o" ]; then
        echo "check-symbols: $o: no such object file" >&2
        exit 2
    fi
done
mapfile -t objects < <(realpath -- "$@") || exit 2
listing=$(mktemp)
trap 'rm -f "$listing"' EXIT
# "object folder module symbol type": the folder is the component after
# .../<target>.dir/ (CMake's layout) or else the object's parent directory;
# volk's object comes from outside the tree (/usr/include/volk.c)
nm -A -P "${objects[@]}" | awk '{
    o = $1; sub(/:$/, "", o)
    n = split(o, part, "/")
    module = part[n]; sub(/\..*$/, "", module)
    folder = (n > 1) ? part[n - 1] : "."
    if (o ~ /\.dir\/[^\/]+\/.+/) { rel = o; sub(/^.*\.dir\//, "", rel); folder = rel; sub(/\/.*$/, "", folder) }
    if (module == "volk") folder = "volk"
    print o, folder, module, $2, $3
}' >"$listing" || exit 2

awk '
function allowed(user, def_folder, def_module, sym) {
    # the public hand-over records a barrier: layers leave those to the ops
    if (user == "layers" && sym ~ /^vkattn_tensor_(release|acquire)$/) return 0
    if (user == def_folder) return 1
    if (rule[user] !~ (" " def_folder " ")) {
        if (user == "layers" && def_folder == "vk" && (def_module ~ /^(view|tensor|submit|prepare|record_mode)$/ || sym ~ /^vkattn_/))
            return 1
        return 0
    }
    return 1
}
BEGIN {
    rule["core"] = " core "
    rule["shape"] = " core shape "
    rule["reference"] = " core shape reference "
    rule["weights"] = " core shape weights "
    rule["vk"] = " core vk volk "
    rule["ops"] = " core shape vk ops shaders "
    rule["layers"] = " core shape ops layers "
    rule["shaders"] = " "
    rule["volk"] = " "
}
# first pass: who defines what (global symbols: upper-case types but U)
NR == FNR {
    if ($5 ~ /^[A-TV-Z]$/) { def_folder[$4] = $2; def_module[$4] = $3 }
    if (!($2 in rule) && !seen_folder[$2]++) {
        printf "%s: an object in folder %s/, which the dependency rule does not name (scripts/check-symbols.sh)\n", $1, $2
        bad = 1
    }
    objects[$1] = 1
    next
}
$5 == "U" && ($4 in def_folder) {
    d = def_folder[$4]; m = def_module[$4]
    if (!allowed($2, d, m, $4)) {
        printf "%s: %s/ uses %s, defined in %s/%s: not allowed by the dependency rule\n", $1, $2, $4, d, m
        bad = 1
    }
}
END {
    n = 0
    for (o in objects) n++
    if (bad) exit 1
    printf "symbols: %d objects follow the dependency rule\n", n
}' "$listing" "$listing"
