#!/usr/bin/env bash
# The layering checks must fail on every way around the dependency rule that a
# review found to pass the include check once (issue 24): a vk/ function
# reached through another vk/ header, a hand-written prototype, `#include
# MACRO`, a raw Vulkan call in a layer through a function table, a file in a
# new folder; and issue 35's: a layer's barrier through the public hand-over,
# the context's private header reached from ops/layers, core reaching Vulkan. Each case is made in a scratch copy (the include check) or as
# tiny objects (the symbol check), and the check must exit 1 naming it.
# usage: tests/unit/layering_selftest.sh REPOSITORY_ROOT C_COMPILER
set -u
root=$1
cc=${2:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
cases=0

# expect STATUS NEEDLE CMD...: CMD exits STATUS and prints NEEDLE
expect() {
    local want=$1 needle=$2
    shift 2
    cases=$((cases + 1))
    local out
    out=$("$@" 2>&1)
    local got=$?
    if [ "$got" != "$want" ] || ! grep -qF -- "$needle" <<<"$out"; then
        echo "FAIL: $* exited $got (want $want), output lacks '$needle':"
        sed 's/^/    /' <<<"$out"
        failures=$((failures + 1))
    fi
}

# ---------------------------------------------------------------- include check
tree() { # a fresh small tree that follows the rule: one file in each folder checked
    rm -rf "$work/tree"
    local d
    for d in include/vkattn src/core src/shape src/reference src/weights src/vk src/ops \
        src/layers shaders tools/attnbench tests/gpu tests/unit tests/common tests/cross examples; do
        mkdir -p "$work/tree/$d"
    done
    printf '#include <stdint.h>\n' >"$work/tree/include/vkattn/vkattn.h"
    for d in core shape reference weights vk ops layers; do
        printf '#include "vkattn/vkattn.h"\n#include <stdint.h>\n' >"$work/tree/src/$d/a.c"
    done
    printf '#include "vk/view.h"\n' >>"$work/tree/src/layers/a.c"
    printf '#include "vk/view.h"\n' >>"$work/tree/src/ops/a.c"
    printf '#include "vkattn/vkattn.h"\n' >"$work/tree/src/vk/view.h"
    printf '#include "vk/view.h"\nstruct vkattn_context { int x; };\n' >"$work/tree/src/vk/context.h"
    printf '#include "vk/view.h"\n' >"$work/tree/src/vk/dispatch.h"
    printf '#version 450\nvoid main() {}\n' >"$work/tree/shaders/a.comp"
    for d in tools/attnbench tests/gpu tests/unit tests/common tests/cross examples; do
        printf '#include "vkattn/vkattn.h"\n' >"$work/tree/$d/a.c"
    done
}
layering="$root/scripts/check-layering.sh"

tree
expect 0 "follow the dependency rule" bash "$layering" "$work/tree"

tree
printf '#define HDR "vk/pipeline.h"\n#include HDR\n' >"$work/tree/src/layers/sneaky.c"
expect 1 "does not name its file literally" bash "$layering" "$work/tree"

tree
printf '#include "vk/view.h"\nvoid f(struct vkattn_context *c) { c->vkt.vkCmdFillBuffer(0, 0, 0, 0, 0); }\n' \
    >"$work/tree/src/layers/raw.c"
expect 1 "records a command or a shader itself" bash "$layering" "$work/tree"

tree
printf '#include "vk/view.h"\nvoid f(void) { vkDeviceWaitIdle(0); }\n' >"$work/tree/src/layers/wait.c"
expect 1 "records a command or a shader itself" bash "$layering" "$work/tree"

# issue 35's three bends: a layer's barrier through the public hand-over
tree
printf '#include "vk/view.h"\nvoid f(void) { vkattn_tensor_release(0, 0, 0, 0, 0); }\n' \
    >"$work/tree/src/layers/handover.c"
expect 1 "records a barrier through vkattn_tensor_release" bash "$layering" "$work/tree"

# a static inline (or a field) of the context reached through vk/context.h,
# directly or through a vk/ header that includes it
tree
printf '#include "vk/context.h"\nstatic inline int g(struct vkattn_context *c) { return c->x; }\n' \
    >"$work/tree/src/ops/inline.c"
expect 1 "includes vk/context.h, the context's private state" bash "$layering" "$work/tree"

tree
printf '#include "vk/context.h"\n' >>"$work/tree/src/vk/dispatch.h"
printf '#include "vk/dispatch.h"\n' >"$work/tree/src/ops/through.c"
expect 1 "includes vk/dispatch.h, which reaches vk/context.h" bash "$layering" "$work/tree"

tree
printf '#include "vk/dispatch.h"\n' >>"$work/tree/src/vk/view.h"
expect 1 "the view includes no other vk/ header" bash "$layering" "$work/tree"

# core reaching Vulkan through a public header, or through the generated
# version header's template
tree
printf '#include <vulkan/vulkan.h>\n' >"$work/tree/include/vkattn/context.h"
printf '#include "vkattn/context.h"\n' >>"$work/tree/src/core/a.c"
expect 1 "includes vkattn/context.h, which pulls in Vulkan" bash "$layering" "$work/tree"

tree
mkdir -p "$work/tree/cmake"
printf '#include <volk.h>\n' >"$work/tree/cmake/version.h.in"
printf '#include "vkattn/version.h"\n' >>"$work/tree/src/core/a.c"
expect 1 "includes vkattn/version.h, which pulls in Vulkan" bash "$layering" "$work/tree"

tree
mkdir -p "$work/tree/src/layers/extra"
printf 'int x;\n' >"$work/tree/src/layers/extra/x.c"
expect 1 "a folder inside a folder of src/" bash "$layering" "$work/tree"

tree
mkdir -p "$work/tree/src/plugins"
printf '#include "vk/pipeline.h"\n' >"$work/tree/src/plugins/p.c"
expect 1 "a folder of src/ the dependency rule does not name" bash "$layering" "$work/tree"

# ---------------------------------------------------------------- symbol check
symbols="$root/scripts/check-symbols.sh"
obj() { # FOLDER NAME SOURCE: compile SOURCE as .../lib.dir/FOLDER/NAME.c.o
    mkdir -p "$work/lib.dir/$1"
    printf '%s\n' "$3" >"$work/src.c"
    "$cc" -c -o "$work/lib.dir/$1/$2.c.o" "$work/src.c" || exit 2
    echo "$work/lib.dir/$1/$2.c.o"
}
rm -rf "$work/lib.dir"
scratch=$(obj vk scratch 'int vka_scratch_get_thing(void) { return 1; }')
tensor=$(obj vk tensor 'int vka_tensor_thing(void) { return 2; }')
pipeline=$(obj vk pipeline 'int vkattn_pipeline_public(void) { return 3; }')
volk=$(obj usr volk 'void (*vkCmdDispatch)(void);')
op=$(obj ops matmul 'extern int vka_tensor_thing(void); int vka_matmul(void) { return vka_tensor_thing(); }')
good=$(obj layers good 'extern int vka_tensor_thing(void); extern int vka_matmul(void); extern int vkattn_pipeline_public(void);
int layer_good(void) { return vka_tensor_thing() + vka_matmul() + vkattn_pipeline_public(); }')
base=("$scratch" "$tensor" "$pipeline" "$volk" "$op" "$good")
expect 0 "objects follow the dependency rule" bash "$symbols" "${base[@]}"

# a vk/ function outside context/tensor/submit/prepare, declared by hand
proto=$(obj layers proto 'int vka_scratch_get_thing(void); int f(void) { return vka_scratch_get_thing(); }')
expect 1 "layers/ uses vka_scratch_get_thing, defined in vk/scratch" bash "$symbols" "${base[@]}" "$proto"

# volk's global function pointers: a raw Vulkan call from a layer
raw=$(obj layers raw 'extern void (*vkCmdDispatch)(void); void f(void) { vkCmdDispatch(); }')
expect 1 "layers/ uses vkCmdDispatch, defined in volk/volk" bash "$symbols" "${base[@]}" "$raw"

# a layer reaching past the view into the context's own module
ctxo=$(obj vk context 'int vka_context_create(void) { return 5; }')
past=$(obj layers past 'extern int vka_context_create(void); int k(void) { return vka_context_create(); }')
expect 1 "layers/ uses vka_context_create, defined in vk/context" bash "$symbols" "${base[@]}" "$ctxo" "$past"

# a layer recording a barrier through the public hand-over
handover=$(obj vk tensor_handover 'int vkattn_tensor_release(void) { return 4; }')
release=$(obj layers release 'extern int vkattn_tensor_release(void); int h(void) { return vkattn_tensor_release(); }')
expect 1 "layers/ uses vkattn_tensor_release" bash "$symbols" "${base[@]}" "$handover" "$release"

# an op calling up into a layer
up=$(obj ops up 'extern int layer_good(void); int g(void) { return layer_good(); }')
expect 1 "ops/ uses layer_good, defined in layers/good" bash "$symbols" "${base[@]}" "$up"

# an object in a folder the rule does not know
new=$(obj plugins p 'int p(void) { return 0; }')
expect 1 "an object in folder plugins/" bash "$symbols" "${base[@]}" "$new"

# nothing to check is an error, not a pass
: >"$work/empty.txt"
expect 2 "no object files given" bash "$symbols" --list "$work/empty.txt"

echo "layering self-test: $((cases - failures)) passed, $failures failed"
[ $failures = 0 ]
