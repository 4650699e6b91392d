#!/usr/bin/env bash
# The dependency rule of docs/ARCHITECTURE.md, checked on the include lines
# (run by CTest as unit.layering; usage: scripts/check-layering.sh [repository
# root]). scripts/check-symbols.sh checks the same rule on the object files,
# which no include trick can fool; this check stays for its messages, which
# point at the line to change:
#   core/       core/ and Vulkan-free public headers (vkattn/version.h is
#               made from cmake/version.h.in); CMake compiles core/ once
#               more against headers that #error on Vulkan (cmake/no_vulkan)
#   shape/      core/ shape/ and Vulkan-free public headers
#   reference/  core/ shape/ reference/ and Vulkan-free public headers
#   weights/    core/ shape/ weights/ and Vulkan-free public headers (jansson)
#   vk/         core/ vk/, public headers, Vulkan and volk; vk/view.h, what
#               ops and layers see of a context, includes no other vk/ header
#   ops/        core/ shape/ ops/, public headers, the shaders' interface
#               headers (common/*_iface.h), the embedded SPIR-V, and of vk/
#               the view and the modules' interfaces ($ops_vk below)
#   layers/     core/ shape/ ops/ layers/, public headers, and of vk/ only
#               view, tensor, submit, prepare (the dry recording) and
#               record_mode (VKATTN_PREPARE / VKATTN_RUN_NOW); never reference/.
#               No raw Vulkan call (vk*, through volk or a function table), no
#               shader of their own (vka_spv_*, vka_kernel,
#               vka_record_dispatch), no barrier through the public hand-over
#               (vkattn_tensor_release/acquire): the ops' dispatches order
#               their accesses
#   ops/, layers/: never vk/context.h, the context's private state, neither
#               directly nor through a vk/ header that includes it
#   tools/attnbench, tests, examples: public headers (vkattn/...), Vulkan,
#               and their own headers (a bare name in their directory,
#               tests/common or tests/gpu); nothing under src/ but, for
#               tests/gpu, the platform header core/threads.h
#   shaders/    specialization constant ids and push constants come from the
#               interface headers (VKA_<K>_SPEC_*, { VKA_<K>_PUSH }), never
#               literals; src/ops/ never spells an n_spec count, and every
#               constant an interface header defines is set by an op and
#               declared by a shader
#   src/        only the folders above, with no folder inside them: a new
#               folder gets its place in the rule (and in check-symbols.sh)
#               before it gets code; every #include names its file literally
#               (no `#include MACRO`)
# Prints file:line: for each offence and exits 1; also when a directory it
# checks holds no file, so that it cannot pass by finding nothing.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
status=0
checked=0

fail() { # file line message
    echo "$1:$2: $3"
    status=1
}

# Public headers that include Vulkan, directly or through another one.
[ -f include/vkattn/vkattn.h ] || fail include/vkattn 0 "no public headers found"
vulkan_public=" "
declare -A public_includes # header -> the headers it includes, read once
while IFS=: read -r h line; do
    name=vkattn/${h#include/vkattn/}
    if [[ $line =~ [\<\"](vulkan/[^\>\"]*|volk\.h)[\>\"] ]]; then
        [[ $vulkan_public == *" $name "* ]] || vulkan_public="$vulkan_public$name "
    elif [[ $line =~ [\<\"](vkattn/[^\>\"]+)[\>\"] ]]; then
        public_includes[$name]+=" ${BASH_REMATCH[1]} "
    fi
done < <(grep -HE '^\s*#\s*include' include/vkattn/*.h 2>/dev/null;
    # vkattn/version.h is made at configure time from its template
    grep -hE '^\s*#\s*include' cmake/version.h.in 2>/dev/null | sed 's|^|include/vkattn/version.h:|')
changed=1
while [ $changed = 1 ]; do
    changed=0
    for name in "${!public_includes[@]}"; do
        [[ $vulkan_public == *" $name "* ]] && continue
        for v in $vulkan_public; do
            if [[ ${public_includes[$name]} == *" $v "* ]]; then
                vulkan_public="$vulkan_public$name "
                changed=1
                break
            fi
        done
    done
done

# The vk/ headers that include vk/context.h, directly or through another one:
# the context's private state, which no op or layer may reach (a static
# inline or a field read through it bends the rule where no symbol shows).
private_vk=" vk/context.h "
declare -A vk_includes # vk/ header -> the vk/ headers it includes
while IFS=: read -r h line; do
    [[ $line =~ [\"](vk/[a-z_]+\.h)[\"] ]] && vk_includes[vk/${h#src/vk/}]+=" ${BASH_REMATCH[1]} "
done < <(grep -HE '^\s*#\s*include' src/vk/*.h 2>/dev/null)
changed=1
while [ $changed = 1 ]; do
    changed=0
    for name in "${!vk_includes[@]}"; do
        [[ $private_vk == *" $name "* ]] && continue
        for v in $private_vk; do
            if [[ ${vk_includes[$name]} == *" $v "* ]]; then
                private_vk="$private_vk$name "
                changed=1
                break
            fi
        done
    done
done
if [ -f src/vk/view.h ] && [ -n "${vk_includes[vk/view.h]:-}" ]; then
    fail src/vk/view.h 0 "includes${vk_includes[vk/view.h]% }: the view includes no other vk/ header"
fi

# check_dir DIR MODE PATTERN...: every include in DIR/*.[ch] must match one
# of the extended regexes (the text between the quotes or <>); system
# headers, <name.h> or <sys/name.h>, always pass. MODE novulkan rejects
# Vulkan, volk and the public headers that include them; vulkan takes them
# all.
sys='[A-Za-z0-9_]+\.h|sys/[a-z_]+\.h'
check_dir() {
    local dir=$1 vulkan=$2
    shift 2
    local files=()
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] && files+=("$f")
    done
    if [ ${#files[@]} = 0 ]; then
        fail "$dir" 0 "no source files found: the check would pass vacuously"
        return
    fi
    checked=$((checked + ${#files[@]}))
    local f n line inc ok pat seen=0
    while IFS= read -r line; do
        f=${line%%:*}
        line=${line#*:}
        n=${line%%:*}
        line=${line#*:}
        if ! [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\<\"])([^\>\"]+)[\>\"] ]]; then
            fail "$f" "$n" "an #include that does not name its file literally: the rule cannot be checked"
            continue
        fi
        inc=${BASH_REMATCH[2]}
        seen=$((seen + 1))
        [[ ${BASH_REMATCH[1]} == '<' && $inc =~ ^($sys)$ ]] && continue
        if [[ $inc == vulkan/* || $inc == volk.h ]] && [ "$vulkan" != vulkan ]; then
            fail "$f" "$n" "includes <$inc>: this layer has no Vulkan"
            continue
        fi
        if [ "$vulkan" = novulkan ] && [[ $vulkan_public == *" $inc "* ]]; then
            fail "$f" "$n" "includes $inc, which pulls in Vulkan: this layer has no Vulkan"
            continue
        fi
        if [[ $dir == src/ops || $dir == src/layers ]] && [[ $private_vk == *" $inc "* ]]; then
            if [ "$inc" = vk/context.h ]; then
                fail "$f" "$n" "includes vk/context.h, the context's private state: ops and layers include vk/view.h"
            else
                fail "$f" "$n" "includes $inc, which reaches vk/context.h, the context's private state: ops and layers include vk/view.h"
            fi
            continue
        fi
        ok=0
        for pat in "$@"; do
            if [[ $inc =~ ^($pat)$ ]]; then
                ok=1
                break
            fi
        done
        [ $ok = 1 ] || fail "$f" "$n" "includes \"$inc\": not allowed in $dir/ (see scripts/check-layering.sh)"
    done < <(grep -nHE '^[[:space:]]*#[[:space:]]*include' "${files[@]}")
    [ $seen -gt 0 ] || fail "$dir" 0 "no include line recognised: the check would pass vacuously"
}

pub='vkattn/[a-z0-9_]+\.h'

# The folders of src/: each has its place in the rule below, none has a
# folder of its own.
known_src=" core shape reference weights vk ops layers "
for d in src/*/ src/*/*/; do
    [ -d "$d" ] || continue
    d=${d%/}
    if [[ $d == src/*/* ]]; then
        fail "$d" 0 "a folder inside a folder of src/: give it a place in the dependency rule first"
    elif [[ $known_src != *" ${d#src/} "* ]]; then
        fail "$d" 0 "a folder of src/ the dependency rule does not name: give it a place first"
    fi
done

check_dir src/core novulkan "$pub" 'core/[a-z0-9_]+\.h'
check_dir src/shape novulkan "$pub" '(core|shape)/[a-z0-9_]+\.h'
check_dir src/reference novulkan "$pub" '(core|shape|reference)/[a-z0-9_]+\.h'
check_dir src/weights novulkan "$pub" '(core|shape|weights)/[a-z0-9_]+\.h'
check_dir src/vk vulkan "$pub" '(core|vk)/[a-z0-9_]+\.h' 'vulkan/[a-z0-9_]+\.h' 'volk\.h'
# of vk/, ops see the view and the interfaces of the modules they drive
ops_vk='vk/(view|vk|dispatch|pipeline|tensor|pack|prepare|record_mode|submit|coopmat)\.h'
check_dir src/ops vulkan "$pub" '(core|shape|ops)/[a-z0-9_]+\.h' "$ops_vk" 'common/[a-z_]+_iface\.h' \
    'vka_shaders\.h'
check_dir src/layers vulkan "$pub" '(core|shape|ops|layers)/[a-z0-9_]+\.h' \
    'vk/(view|tensor|submit|prepare|record_mode)\.h'

# Apps of the public API: own headers by bare name, where they exist.
check_public() {
    local dir=$1
    shift
    local own="" f
    for f in "$dir"/*.h tests/common/*.h tests/gpu/*.h; do
        [ -f "$f" ] && own="$own|$(basename "$f" | sed 's/\./\\./g')"
    done
    # the threading test's threads come from the one platform header
    local platform='^$'
    [ "$dir" = tests/gpu ] && platform='core/threads\.h'
    check_dir "$dir" vulkan "$pub" 'vulkan/[a-z_]+\.h' 'volk\.h' 'cmocka\.h' 'jansson\.h' \
        "${own#|}" "$platform" "$@"
}
check_public tools/attnbench
check_public tests/gpu
# Five exceptions: test_register_budget compiles the register budget's pure
# host sources (no Vulkan; tests/CMakeLists.txt) and checks their tile tables,
# the kernel variants and the tuning table;
# test_dry_first compiles vk/prepare.c, the dry-first recording, device-free;
# test_slice_plan compiles vk/slice_plan.c, the slicer's decisions (no Vulkan);
# test_rope_reference compiles reference/rope.c, the head preparation's rows;
# test_bf16 compiles core/bf16.c, the bf16 conversions (internal symbols).
check_public tests/unit 'ops/(register_budget|gpu_tiles|flash_backward_gpu_tiles|variants|tuning_table)\.h' \
    'vk/(profile|prepare|slice_plan)\.h' 'reference/rope\.h' 'core/bf16\.h'
check_public tests/common
# examples/frame_budget.c embeds its own shaders (cmake/Shaders.cmake, HEADER)
check_public examples 'frame_budget_shaders\.h'
check_public tests/cross

# Layers compose ops: no command of their own, no shader of their own
# (comment lines aside).
while IFS=: read -r f n text; do
    [[ $text =~ ^[[:space:]]*(\*|/\*|//) ]] && continue
    fail "$f" "$n" "records a command or a shader itself; layers compose ops"
done < <(grep -nHE '\bvk[A-Z]|\.Cmd[A-Z]|vka_spv_|vka_kernel|vka_record_dispatch' /dev/null src/layers/*.[ch] 2>/dev/null)
# nor a barrier of their own through the public hand-over, which apps use to
# pass a tensor between queue families: within vkattn, ops order accesses
while IFS=: read -r f n text; do
    [[ $text =~ ^[[:space:]]*(\*|/\*|//) ]] && continue
    fail "$f" "$n" "records a barrier through vkattn_tensor_release/acquire; layers leave barriers to the ops' dispatches"
done < <(grep -nHE '\bvkattn_tensor_(release|acquire)\b' /dev/null src/layers/*.[ch] 2>/dev/null)

# Shader interfaces come from shaders/common/<kernel>_iface.h.
shopt -s nullglob
shaders=(shaders/*.comp shaders/common/*.glsl)
ops=(src/ops/*.c)
if [ ${#shaders[@]} = 0 ] || [ ${#ops[@]} = 0 ]; then
    fail shaders 0 "no shaders or ops found: the check would pass vacuously"
    shaders=(/dev/null) ops=(/dev/null)
fi
while IFS=: read -r f n text; do
    fail "$f" "$n" "a literal specialization constant id; use VKA_<K>_SPEC_* of the kernel's _iface.h"
done < <(grep -nHE '(constant_id|local_size_[xyz]_id)[[:space:]]*=[[:space:]]*[0-9]' "${shaders[@]}")
while IFS=: read -r f n text; do
    fail "$f" "$n" "a push-constant block not written as { VKA_<K>_PUSH } of the kernel's _iface.h"
done < <(grep -nHE 'push_constant' "${shaders[@]}" |
    grep -vE 'layout\(push_constant\) uniform Push \{ VKA_[A-Z_]+_PUSH \} p;' | grep -v '^[^:]*:[0-9]*:[[:space:]]*//')
while IFS=: read -r f n text; do
    fail "$f" "$n" "a literal n_spec; use VKA_<K>_N_SPEC of the kernel's _iface.h"
done < <(grep -nHE '\.n_spec[[:space:]]*=[[:space:]]*[0-9]' "${ops[@]}")

# (each file read once: a grep per constant took most of this script's time)
declare -A set_by_op declared_by_shader
spec_ids='VKA_[A-Z0-9_]+_SPEC_[A-Z0-9_]+'
while read -r id; do set_by_op[$id]=1; done < <(grep -ohwE "$spec_ids" "${ops[@]}" | sort -u)
while read -r id; do declared_by_shader[$id]=1; done < <(grep -ohwE "$spec_ids" "${shaders[@]}" | sort -u)
for h in shaders/common/*_iface.h; do
    [ -f "$h" ] || continue
    while IFS=: read -r n id; do
        id=${id#\#define }
        id=${id%% *}
        [ -n "${set_by_op[$id]:-}" ] || fail "$h" "$n" "$id is set by no op in src/ops/"
        [ -n "${declared_by_shader[$id]:-}" ] || fail "$h" "$n" "$id is declared by no shader"
    done < <(grep -nE '^#define VKA_[A-Z_]+_SPEC_[A-Z_]+ ' "$h")
done

if [ $status = 0 ]; then
    echo "layering: $checked files follow the dependency rule; ${#shaders[@]} shaders use their interface headers"
fi
exit $status
