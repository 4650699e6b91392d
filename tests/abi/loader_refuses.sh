#!/usr/bin/env bash
# The ABI rule on ELF (docs/INTEGRATION.md, "ABI and versions"), shown with an
# app built against vkattn 0.1 (tests/abi/app_0_1.c, linked against a stand-in
# with 0.1's soname, libvkattn.so.0):
#   1. the library's SONAME carries the minor: libvkattn.so.<major>.<minor>;
#   2. the library exports vkattn_context_create only under its ABI name;
#   3. control: the app runs, and passes, with the 0.1 stand-in it was linked with;
#   4. run with today's library, the loader refuses it (no libvkattn.so.0):
#      nothing is called, so nothing is written or read past the 0.1 structs;
#   5. even given today's library under the 0.1 file name (a copied or renamed
#      file: what the soname cannot catch), the dynamic linker refuses it at load,
#      since vkattn_context_create is exported only as vkattn_context_create_abi_M_N.
# Usage: loader_refuses.sh APP STUB_DIR LIBRARY EXPECTED_SONAME ABI_SYMBOL
set -euo pipefail
app=$1 stub_dir=$2 lib=$3 soname=$4 abi_symbol=$5
fail() { echo "FAIL: $*"; exit 1; }

got=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$got" = "$soname" ] || fail "$lib has SONAME '$got', not $soname: the soname must \
change with every minor version while vkattn is 0.x (src/CMakeLists.txt, VKATTN_SOVERSION)"
echo "ok 1: SONAME $got"

syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
grep -qx "$abi_symbol" <<<"$syms" || fail "$lib does not export $abi_symbol"
if grep -qx vkattn_context_create <<<"$syms"; then
  fail "$lib exports vkattn_context_create without the ABI suffix: an app of another \
minor could call it (vkattn/context.h, VKATTN_ABI_NAME)"
fi
echo "ok 2: exports $abi_symbol, no bare vkattn_context_create"

readelf -d "$app" | grep -q 'NEEDED.*\[libvkattn\.so\.0\]' || fail "$app does not need libvkattn.so.0"
if readelf -d "$app" | grep -qE 'RPATH|RUNPATH'; then
  fail "$app has an RPATH or RUNPATH: the test must choose the library"
fi
out=$(LD_LIBRARY_PATH="$stub_dir" "$app" 2>&1) || fail "the 0.1 app fails with the 0.1 \
stand-in it was linked with: $out"
echo "ok 3: with the 0.1 library: $out"

# Today's library alone in a folder, under its soname and link name: a build
# folder may still hold an earlier build's libvkattn.so.0, which the app would
# rightly load.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/today" "$tmp/renamed"
cp "$lib" "$tmp/today/$soname"
ln -s "$soname" "$tmp/today/libvkattn.so"
set +e
out=$(LD_LIBRARY_PATH="$tmp/today" "$app" 2>&1)
rc=$?
set -e
case "$out" in
  *"libvkattn.so.0: cannot open shared object file"*)
    echo "ok 4: with today's library the loader refuses (exit $rc): $out" ;;
  *) fail "the 0.1 app was not refused by the loader (exit $rc): $out" ;;
esac

cp "$lib" "$tmp/renamed/libvkattn.so.0"
set +e
out=$(LD_BIND_NOW=1 LD_LIBRARY_PATH="$tmp/renamed" "$app" 2>&1)
rc=$?
set -e
case "$out" in
  *"undefined symbol: vkattn_context_create"*)
    echo "ok 5: today's library under the 0.1 file name is refused at load (exit $rc): $out" ;;
  *) fail "the 0.1 app ran with today's library renamed libvkattn.so.0 (exit $rc): $out" ;;
esac
