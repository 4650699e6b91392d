#!/usr/bin/env python3
"""The variant sweep of scripts/gpu-check.sh --sweep: every prepared variant
of the GPU kernel families (vkattn_context_advanced.variants, src/ops/
variants.c; 0 = the library's own choice, timed as the baseline) checked
against the CPU reference on one small shape, then timed on the target
shapes, each run one `attnbench bench ... --variant FAMILY=N`.

    gpu_sweep.py ATTNBENCH OUTDIR [--quick] [--budget SECONDS]

Writes, as it goes, OUTDIR/sweep.jsonl (a line per run), then sweep.md (the
table: ms, TFLOP/s, registers and shared memory from the driver's pipeline
statistics where it gives them, pass/fail) and sweep.json (the device class,
the rows, and per group the winner: the fastest variant that passed, which
src/ops/tuning_table.c takes as a row keyed on the class). --quick: small
shapes, the check run is the timed run, no causal cooperative-matrix group,
on any device (lavapipe: the emulated cooperative-matrix family and the GPU
tuning). Runs stop at --budget seconds (300; the rest: "not run: time
limit"). Exit status: 0 when every variant that fits passed its check, 1
otherwise (a failed check, an error, a run over its time limit), 2 on bad
usage.
"""
import json
import os
import re
import subprocess
import sys
import time

# Variants per family, as vkattn/advanced.h's VKATTN_VARIANTS_*.
COUNTS = {"matmul": 7, "matmul_coopmat": 6, "flash": 6, "flash_coopmat": 6, "flash_backward": 6,
          "flash_backward_coopmat": 6}
# The fused backward's cooperative-matrix kernels take the forward's
# flash_coopmat variants (src/ops/variant_select.c): the --variant to pass.
VARIANT_OF = {"flash_backward_coopmat": "flash_coopmat"}
# --quick runs of a group only these variants (its rows are the forward's,
# checked there; the library's and a multi-warp one keep lavapipe's run short).
QUICK_VARIANTS = {"sdpa_bwd_f16_coopmat": (0, 3)}
# The pipelines (attnbench's pipeline_stats names) each family runs.
PIPELINES = {"matmul": "matmul_gpu", "matmul_coopmat": "matmul_coopmat",
             "flash": "flash_tiled", "flash_coopmat": "flash_coopmat",
             "flash_backward": "flash_backward", "flash_backward_coopmat": "flash_backward_coopmat"}

SDPA = "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused --fp16"
# (group, family, what, target, quick target, check shape, flags, full
# (warmup, repeat), quick?) -- flags: the context the family runs under; the
# full run lets AUTO's self-test pick the cooperative-matrix family. In the
# order that matters if the budget runs out: tensor cores, the backward, the
# tiled kernel, matmul_gpu.
GROUPS = [
    ("matmul_f16_coopmat", "matmul_coopmat", "matmul 4096^3 fp16, tensor cores",
     "matmul --m 4096 --n 4096 --k 4096 --fp16", "matmul --m 72 --n 136 --k 40 --fp16",
     "matmul --m 72 --n 136 --k 40 --fp16", "--coopmat auto", (2, 5), True),
    ("sdpa_f16_coopmat", "flash_coopmat", "SDPA B4 H16 T4096 d128 fp16, tensor cores",
     SDPA, "sdpa --heads 2 --tq 24 --dk 16 --fused --fp16",
     "sdpa --heads 2 --tq 40 --dk 128 --fused --fp16", "--coopmat auto", (1, 3), True),
    ("sdpa_f16_coopmat_causal", "flash_coopmat",
     "SDPA B4 H16 T4096 d128 fp16 causal, tensor cores", SDPA + " --causal", None,
     "sdpa --heads 2 --tq 40 --dk 128 --fused --fp16 --causal", "--coopmat auto", (1, 3), False),
    ("sdpa_bwd_f16", "flash_backward", "SDPA backward B4 H16 T4096 d128 fp16",
     SDPA + " --backward", "sdpa --heads 2 --tq 24 --dk 16 --fused --fp16 --backward",
     "sdpa --heads 2 --tq 40 --dk 128 --fused --fp16 --backward", "--coopmat off", (1, 2), True),
    ("sdpa_bwd_f16_coopmat", "flash_backward_coopmat",
     "SDPA backward B4 H16 T4096 d128 fp16, tensor cores", SDPA + " --backward",
     "sdpa --heads 2 --tq 24 --dk 16 --fused --fp16 --backward",
     "sdpa --heads 2 --tq 40 --dk 128 --fused --fp16 --backward", "--coopmat auto", (1, 2), True),
    ("sdpa_f16", "flash", "SDPA B4 H16 T4096 d128 fp16, tiled", SDPA,
     "sdpa --heads 2 --tq 24 --dk 16 --fused --fp16",
     "sdpa --heads 2 --tq 40 --dk 128 --fused --fp16", "--coopmat off", (1, 3), True),
    ("sdpa_f16_causal", "flash", "SDPA B4 H16 T4096 d128 fp16 causal, tiled",
     SDPA + " --causal", "sdpa --heads 2 --tq 24 --dk 16 --fused --fp16 --causal",
     "sdpa --heads 2 --tq 40 --dk 128 --fused --fp16 --causal", "--coopmat off", (1, 3), True),
    ("matmul_f16", "matmul", "matmul 4096^3 fp16, matmul_gpu",
     "matmul --m 4096 --n 4096 --k 4096 --fp16", "matmul --m 72 --n 136 --k 40 --fp16",
     "matmul --m 72 --n 136 --k 40 --fp16", "--coopmat off", (2, 5), True),
]


def write_line(path, row):
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")


def last_json(text):
    i = text.find("{")
    return json.loads(text[i:text.rfind("}") + 1]) if i >= 0 else None


DEADLINE = [float("inf")]  # time.time() at which the budget ends (main sets it)


def run(attnbench, args, timeout):
    """One attnbench run: (status, result or None, stderr tail); never past
    the budget's end."""
    timeout = max(5, min(timeout, int(DEADLINE[0] - time.time())))
    try:
        p = subprocess.run([attnbench, "bench"] + args, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, "over %d s" % timeout
    err = p.stderr.strip()[-300:]
    if p.returncode == 2 and "--variant:" in p.stderr:
        return "unfit", None, err[err.find("does not fit"):][:160]
    try:
        res = last_json(p.stdout)
    except ValueError:
        res = None
    if "attnbench: validation:" in p.stderr:
        return "validation", res, err[err.find("attnbench: validation:"):][:200]
    if p.returncode not in (0, 1) or res is None:
        return "error", res, err or "exit %d" % p.returncode
    ok = res.get("max_rel_err") is not None and res["max_rel_err"] <= res.get("bound", 0)
    return ("pass" if ok else "fail"), res, err


def pipeline_figures(res, family):
    """The largest register count and shared-memory size the driver reports
    for the family's pipelines (None where it reports none)."""
    regs = shared = None
    for p in (res or {}).get("pipeline_stats") or []:
        if not str(p.get("pipeline", "")).startswith(PIPELINES[family]):
            continue
        for stat, v in (p.get("stats") or {}).items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            if "register" in stat.lower():
                regs = v if regs is None else max(regs, v)
            elif re.search(r"shared", stat, re.I):
                shared = v if shared is None else max(shared, v)
    return regs, shared


def device_class(attnbench, coopmat):
    """What the tuning table keys on: vendor id, subgroup size, shared memory
    and the cooperative-matrix families running (never a device id)."""
    try:
        p = subprocess.run([attnbench, "devices", "--json", "--coopmat", coopmat],
                           capture_output=True, text=True, timeout=60)
        devs = json.loads(p.stdout)["devices"]
    except (subprocess.TimeoutExpired, ValueError, KeyError):
        return {"name": "?"}
    d = next((x for x in devs if x.get("default")), devs[0] if devs else {})
    fams = (d.get("cooperative_matrix") or {}).get("families") or {}
    lim = d.get("limits") or {}
    return {"name": d.get("name"), "vendor_id": d.get("vendor_id"),
            "subgroup_size": lim.get("subgroup_size"),
            "max_shared_memory": lim.get("max_shared_memory"),
            "coopmat_running": sorted(k for k, v in fams.items() if v.get("running"))}


def tflops(res):
    g = (res or {}).get("gflops")
    return None if g is None else g / 1000.0


def main(argv):
    if len(argv) < 2:
        print("usage: gpu_sweep.py ATTNBENCH OUTDIR [--quick] [--budget SECONDS]", file=sys.stderr)
        return 2
    attnbench, out = argv[0], argv[1]
    quick = "--quick" in argv[2:]
    budget = 300.0
    if "--budget" in argv:
        budget = float(argv[argv.index("--budget") + 1])
    lines = os.path.join(out, "sweep.jsonl")
    if os.path.exists(lines):
        os.remove(lines)
    # one pipeline cache for every run: each process compiles only what is new
    base = ["--no-peak", "--json", "--pipeline-cache", os.path.join(out, "sweep-pipelines.bin")]
    if quick:  # lavapipe: the GPU shapes, the families' kernels, under validation
        base += ["--tuning", "gpu", "--validation"]
    t0 = time.time()
    DEADLINE[0] = t0 + budget
    cls = device_class(attnbench, "emulate" if quick else "auto")
    rows, bad = [], []
    for gid, fam, what, target, qtarget, check, flags, (warm, rep), in_quick in GROUPS:
        if quick and not in_quick:
            continue
        fl = flags.split()
        if quick and fl == ["--coopmat", "auto"]:
            fl = ["--coopmat", "emulate"]
        for v in range(COUNTS[fam] + 1):
            if quick and v not in QUICK_VARIANTS.get(gid, (v,)):
                continue
            row = {"group": gid, "family": fam, "what": what, "variant": v,
                   "args": (qtarget if quick else target)}
            if time.time() - t0 > budget:
                row.update(status="not run: time limit")
                rows.append(row)
                write_line(lines, row)
                bad.append("%s variant %d: not run (time limit)" % (gid, v))
                continue
            start = time.time()
            var = ["--variant", "%s=%d" % (VARIANT_OF.get(fam, fam), v)]
            if quick:  # one run: checked and timed on the small shape
                st, res, why = run(attnbench, qtarget.split() + fl + var + base +
                                   ["--check", "--warmup", "0", "--repeat", "1"], 60)
                timed = res
            else:
                st, res, why = run(attnbench, check.split() + fl + var + base +
                                   ["--check", "--warmup", "0", "--repeat", "1"], 60)
                timed = None
                if st == "pass":
                    st2, timed, why2 = run(attnbench, target.split() + fl + var + base +
                                           ["--pipeline-stats", "--warmup", str(warm),
                                            "--repeat", str(rep)], 90)
                    if st2 not in ("pass", "fail"):  # no --check: "fail" is no error
                        st, why = st2, why2
                    names = [str(p.get("pipeline")) for p in (timed or {}).get("pipeline_stats")
                             or []]
                    if st == "pass" and names and not any(
                            n.startswith(PIPELINES[fam]) for n in names):
                        # the driver names what ran: another family (a failed self-test)
                        st, why = "not taken", "pipelines: " + ", ".join(sorted(set(names)))
            regs, shared = pipeline_figures(timed, fam)
            row.update(status=st, why=why if st != "pass" else None,
                       max_rel_err=(res or {}).get("max_rel_err"),
                       ms=(timed or {}).get("median_ms") if st == "pass" else None,
                       tflops=tflops(timed) if st == "pass" else None,
                       registers=regs, shared_bytes=shared,
                       seconds=round(time.time() - start, 2))
            rows.append(row)
            write_line(lines, row)
            if st not in ("pass", "unfit"):
                bad.append("%s variant %d: %s" % (gid, v, st))
    winners = {}
    for gid, fam, *_ in GROUPS:
        ok = [r for r in rows if r["group"] == gid and r.get("ms") is not None]
        if ok:
            w = min(ok, key=lambda r: r["ms"])
            base_ms = next((r["ms"] for r in ok if r["variant"] == 0), None)
            winners[gid] = {"family": fam, "variant": w["variant"], "ms": w["ms"],
                            "library_choice_ms": base_ms}
    seconds = round(time.time() - t0, 1)
    with open(os.path.join(out, "sweep.json"), "w") as f:
        json.dump({"quick": quick, "seconds": seconds, "device_class": cls,
                   "winners": winners, "rows": rows, "problems": bad}, f, indent=1)
    with open(os.path.join(out, "sweep.md"), "w") as f:
        f.write("# Variant sweep%s\n\n" % (" (--quick)" if quick else ""))
        f.write("Device: %s; class: vendor 0x%x, subgroup %s, shared memory %s, "
                "cooperative matrices running: %s. %s s.\n\n" % (
                    cls.get("name"), cls.get("vendor_id") or 0, cls.get("subgroup_size"),
                    cls.get("max_shared_memory"), ", ".join(cls.get("coopmat_running") or [])
                    or "none", seconds))
        f.write("| group | variant | status | ms | TFLOP/s | registers | shared bytes | "
                "max rel err | note |\n|---|---|---|---|---|---|---|---|---|\n")
        fmt = lambda x, p: "-" if x is None else p % x  # noqa: E731
        for r in rows:
            win = winners.get(r["group"], {}).get("variant") == r["variant"]
            f.write("| %s | %d%s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["group"], r["variant"], " (library's)" if r["variant"] == 0 else "",
                r["status"], fmt(r.get("ms"), "%.3f"), fmt(r.get("tflops"), "%.1f"),
                fmt(r.get("registers"), "%.0f"), fmt(r.get("shared_bytes"), "%.0f"),
                fmt(r.get("max_rel_err"), "%.2g"),
                "**winner**" if win else (r.get("why") or "").replace("|", "/")[:80]))
    print("gpu-sweep: %d runs in %s s; %s" % (len(rows), seconds,
                                             "problems: " + ", ".join(bad) if bad else
                                             "every variant that fits passed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
