#!/usr/bin/env bash
# Every public header compiles on its own (it includes what it uses), and the
# Vulkan-free ones stay Vulkan-free: each layer's <layer>_host.h and the
# shared host headers must not reach <vulkan/vulkan_core.h> or volk.h, even
# through another vkattn header, since src/reference/ and src/weights/
# implement them and an app that only uses the CPU references or converts
# weights builds without Vulkan (docs/ARCHITECTURE.md, "The public headers of
# a layer"). A poisoned vulkan/vulkan_core.h (and volk.h) is put first on
# their include path, so any route to Vulkan stops the compile.
# usage: scripts/check-headers.sh SOURCE_DIR C_COMPILER BUILD_INCLUDE_DIR [VULKAN_INCLUDE_DIRS]
#        (VULKAN_INCLUDE_DIRS: ':'-separated; empty = the compiler's default path)
set -u
root=$1
cc=$2
build_inc=$3
IFS=: read -r -a vk_dirs <<<"${4:-}"
vk_flags=()
for d in "${vk_dirs[@]}"; do [ -n "$d" ] && vk_flags+=("-I$d"); done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/poison/vulkan" "$work/bad/vkattn"
echo '#error "a Vulkan-free vkattn header reached vulkan/vulkan_core.h"' \
    >"$work/poison/vulkan/vulkan_core.h"
echo '#error "a Vulkan-free vkattn header reached volk.h"' >"$work/poison/volk.h"

flags=(-std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only)
status=0

# compile HEADER [extra flags...]: the header alone, plus a declaration so
# that a header with nothing to declare (export.h) is no empty unit
compile() {
    local h=$1
    shift
    printf '#include <%s>\nint vkattn_header_check;\n' "$h" |
        "$cc" "${flags[@]}" "$@" -x c - 2>&1
}

# The Vulkan-free public headers: every layer's _host.h and the shared ones.
host_headers() {
    local d=$1
    ls "$d"/vkattn/*_host.h 2>/dev/null | sed "s|^$d/||"
    for h in layer_call.h safetensors.h layer_params.h weights.h reference.h \
        reference_backward.h op_params.h train_params.h dtype.h result.h half.h philox.h; do
        [ -f "$d/vkattn/$h" ] && echo "vkattn/$h"
    done
}

# Self-test first: a _host.h that reaches Vulkan through vkattn/tensor.h must fail.
printf '#include "vkattn/tensor.h"\n' >"$work/bad/vkattn/selftest_host.h"
if out=$(compile vkattn/selftest_host.h -I"$work/poison" -I"$work/bad" -I"$root/include" \
    -I"$build_inc"); then
    echo "check-headers: the poisoned vulkan_core.h did not stop a _host.h that includes tensor.h"
    status=1
elif ! grep -q 'reached vulkan/vulkan_core.h' <<<"$out"; then
    echo "check-headers: the self-test failed for another reason:"
    sed 's/^/    /' <<<"$out"
    status=1
fi

n=0
for f in "$root"/include/vkattn/*.h; do
    h=vkattn/${f##*/}
    n=$((n + 1))
    if ! out=$(compile "$h" -I"$root/include" -I"$build_inc" "${vk_flags[@]}"); then
        echo "include/$h: does not compile on its own:"
        sed 's/^/    /' <<<"$out"
        status=1
    fi
done
m=0
for h in $(host_headers "$root/include"); do
    m=$((m + 1))
    if ! out=$(compile "$h" -I"$work/poison" -I"$root/include" -I"$build_inc"); then
        echo "include/$h: must stay Vulkan-free (include only Vulkan-free vkattn headers):"
        sed 's/^/    /' <<<"$out"
        status=1
    fi
done
[ "$status" = 0 ] &&
    echo "headers: $n public headers compile on their own; $m of them are Vulkan-free"
exit $status
