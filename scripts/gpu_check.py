#!/usr/bin/env python3
"""The steps of scripts/gpu-check.sh (which sets up the machine and calls these):

  tests  LIST OUTDIR   run the GPU test suite from `ctest --show-only=json-v1`
  bench  ATTNBENCH OUTDIR   the fixed table of attnbench benches
  torch  OUTDIR        PyTorch on the same shapes (CUDA events, TF32 off)
  report OUTDIR        gpu-check.json and gpu-check.md from whatever the steps left

Each step writes its results as it goes (one JSON line per test or bench), so a
step stopped by its time limit still leaves what it finished. `--quick` shrinks
the shapes and the test list so the same path runs on any device (lavapipe) in
a few minutes. Standard library only: it runs on the bare GPU machine."""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

# The benches of issue 20 (the H100 rows and the ones the issue asks for), in
# the order they run: the most important first, so a time limit cuts the tail.
# id, what, attnbench arguments (full), arguments (--quick), warmup/repeat (full)
ROWS = [
    ("matmul_f32", "matmul 4096^3 fp32", "matmul --m 4096 --n 4096 --k 4096", "matmul --m 40 --n 36 --k 20", (3, 10)),
    ("matmul_f16", "matmul 4096^3 fp16", "matmul --m 4096 --n 4096 --k 4096 --fp16", "matmul --m 40 --n 36 --k 20 --fp16", (3, 10)),
    # cooperative matrices: each family forced (--coopmat nv|khr|nv2; a family
    # this build or device lacks is reported unsupported), then what AUTO's
    # self-test chooses
    ("matmul_f16_coopmat_nv", "matmul 4096^3 fp16, cooperative matrices NV", "matmul --m 4096 --n 4096 --k 4096 --fp16 --coopmat nv", "matmul --m 40 --n 36 --k 20 --fp16 --coopmat nv", (3, 10)),
    ("matmul_f16_coopmat_khr", "matmul 4096^3 fp16, cooperative matrices KHR", "matmul --m 4096 --n 4096 --k 4096 --fp16 --coopmat khr", "matmul --m 40 --n 36 --k 20 --fp16 --coopmat khr", (3, 10)),
    ("matmul_f16_coopmat_nv2", "matmul 4096^3 fp16, cooperative matrices NV2", "matmul --m 4096 --n 4096 --k 4096 --fp16 --coopmat nv2", "matmul --m 40 --n 36 --k 20 --fp16 --coopmat nv2", (3, 10)),
    ("matmul_f16_coopmat", "matmul 4096^3 fp16, cooperative matrices (AUTO's self-test)", "matmul --m 4096 --n 4096 --k 4096 --fp16 --coopmat auto", "matmul --m 40 --n 36 --k 20 --fp16 --coopmat auto", (3, 10)),
    ("sdpa_b4_f32", "SDPA fused B4 H16 T4096 d128 fp32", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused", "sdpa --heads 2 --tq 24 --dk 8 --fused", (1, 5)),
    ("sdpa_b4_f16", "SDPA fused B4 H16 T4096 d128 fp16", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused --fp16", "sdpa --heads 2 --tq 24 --dk 8 --fused --fp16", (1, 5)),
    # the cooperative-matrix fused kernel per family, beside the tiled one
    ("sdpa_b4_f16_coopmat_nv", "SDPA fused B4 H16 T4096 d128 fp16, cooperative matrices NV", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused --fp16 --coopmat nv", "sdpa --heads 2 --tq 24 --dk 8 --fused --fp16 --coopmat nv", (1, 5)),
    ("sdpa_b4_f16_coopmat_khr", "SDPA fused B4 H16 T4096 d128 fp16, cooperative matrices KHR", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused --fp16 --coopmat khr", "sdpa --heads 2 --tq 24 --dk 8 --fused --fp16 --coopmat khr", (1, 5)),
    ("sdpa_b4_f16_coopmat_nv2", "SDPA fused B4 H16 T4096 d128 fp16, cooperative matrices NV2", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused --fp16 --coopmat nv2", "sdpa --heads 2 --tq 24 --dk 8 --fused --fp16 --coopmat nv2", (1, 5)),
    ("sdpa_b4_f16_causal", "SDPA fused B4 H16 T4096 d128 fp16, causal", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused --fp16 --causal", "sdpa --heads 2 --tq 24 --dk 8 --fused --fp16 --causal", (1, 5)),
    ("sdpa_b4_f16_causal_coopmat", "SDPA fused B4 H16 T4096 d128 fp16, causal, cooperative matrices (AUTO's self-test)", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --fused --fp16 --causal --coopmat auto", "sdpa --heads 2 --tq 24 --dk 8 --fused --fp16 --causal --coopmat auto", (1, 5)),
    ("sdpa_b1_f32", "SDPA fused B1 H8 T512 d64 fp32", "sdpa --batch 1 --heads 8 --tq 512 --dk 64 --fused", "sdpa --heads 2 --tq 16 --dk 8 --fused", (3, 20)),
    ("mha_f32", "MultiHeadAttention B4 T1024 d_model 1024 H16 fp32", "mha --batch 4 --tq 1024 --heads 16 --dk 64 --dmodel 1024", "mha --tq 24 --heads 2 --dk 8 --dmodel 16", (3, 10)),
    ("mha_f16", "MultiHeadAttention B4 T1024 d_model 1024 H16 fp16", "mha --batch 4 --tq 1024 --heads 16 --dk 64 --dmodel 1024 --fp16", "mha --tq 24 --heads 2 --dk 8 --dmodel 16 --fp16", (3, 10)),
    ("mha_f16_coopmat", "MultiHeadAttention B4 T1024 d_model 1024 H16 fp16, cooperative matrices (AUTO's self-test)", "mha --batch 4 --tq 1024 --heads 16 --dk 64 --dmodel 1024 --fp16 --coopmat auto", "mha --tq 24 --heads 2 --dk 8 --dmodel 16 --fp16 --coopmat auto", (3, 10)),
    ("decode_f32", "decode H8 d64, 32768 keys, fp32", "decode --heads 8 --tv 32768 --dk 64", "decode --heads 2 --tv 256 --dk 8", (3, 20)),
    ("decode_f16", "decode H8 d64, 32768 keys, fp16 cache", "decode --heads 8 --tv 32768 --dk 64 --fp16", "decode --heads 2 --tv 256 --dk 8 --fp16", (3, 20)),
    # the split count (params.num_splits) against the default's 32 per row
    # here: whether more workgroups lift decode's bandwidth (issue 20)
    ("decode_f16_splits64", "decode H8 d64, 32768 keys, fp16 cache, 64 splits", "decode --heads 8 --tv 32768 --dk 64 --fp16 --splits 64", "decode --heads 2 --tv 256 --dk 8 --fp16 --splits 2", (3, 20)),
    ("decode_f16_splits256", "decode H8 d64, 32768 keys, fp16 cache, 256 splits", "decode --heads 8 --tv 32768 --dk 64 --fp16 --splits 256", "decode --heads 2 --tv 256 --dk 8 --fp16 --splits 4", (3, 20)),
    ("decode_f32_splits256", "decode H8 d64, 32768 keys, fp32, 256 splits", "decode --heads 8 --tv 32768 --dk 64 --splits 256", "decode --heads 2 --tv 256 --dk 8 --splits 4", (3, 20)),
    ("bwd_b1_fused_f32", "SDPA backward B1 H8 T1024 d64 fp32, fused", "sdpa --batch 1 --heads 8 --tq 1024 --dk 64 --backward --fused", "sdpa --heads 2 --tq 16 --dk 8 --backward --fused", (2, 10)),
    ("bwd_b1_chained_f32", "SDPA backward B1 H8 T1024 d64 fp32, chained", "sdpa --batch 1 --heads 8 --tq 1024 --dk 64 --backward --unfused", "sdpa --heads 2 --tq 16 --dk 8 --backward --unfused", (2, 10)),
    ("bwd_b1_fused_f16", "SDPA backward B1 H8 T1024 d64 fp16, fused", "sdpa --batch 1 --heads 8 --tq 1024 --dk 64 --backward --fused --fp16", "sdpa --heads 2 --tq 16 --dk 8 --backward --fused --fp16", (2, 10)),
    ("bwd_b4_fused_f32", "SDPA backward B4 H16 T4096 d128 fp32, fused", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --backward --fused", "sdpa --heads 2 --tq 24 --dk 8 --backward --fused", (1, 3)),
    ("bwd_b4_fused_f16", "SDPA backward B4 H16 T4096 d128 fp16, fused", "sdpa --batch 4 --heads 16 --tq 4096 --dk 128 --backward --fused --fp16", "sdpa --heads 2 --tq 24 --dk 8 --backward --fused --fp16", (1, 3)),
    ("mha_bwd_f32", "MultiHeadAttention backward B4 T1024 d_model 1024 H16 fp32", "mha --batch 4 --tq 1024 --heads 16 --dk 64 --dmodel 1024 --backward", "mha --tq 24 --heads 2 --dk 8 --dmodel 16 --backward", (1, 5)),
    ("mha_train_f32", "MultiHeadAttention training step B4 T1024 d_model 1024 H16 fp32", "mha --batch 4 --tq 1024 --heads 16 --dk 64 --dmodel 1024 --train-step", "mha --tq 24 --heads 2 --dk 8 --dmodel 16 --train-step", (1, 5)),
]

# attnbench's usage exits (2) that mean "this build has no such path yet",
# not a broken script: reported as unsupported, not as failures.
UNSUPPORTED = re.compile(r"no f16 path|does not apply|not supported|UNSUPPORTED", re.I)

# The GPU suite under --quick: a few fast tests that still cover the harness,
# validation, a matmul and the f16 fused kernel's choice.
QUICK_TESTS = ["gpu.test_context", "gpu.test_profile", "attnbench.devices", "example.attention"]


def families_lines(d):
    """The cooperative-matrix families of the default device, from
    `attnbench devices --json`: offered, built, and their self-test."""
    try:
        with open(os.path.join(d, "devices.json")) as f:
            devs = json.load(f)["devices"]
    except (OSError, ValueError, KeyError):
        return []
    dev = next((x for x in devs if x.get("default")), devs[0] if devs else None)
    fams = ((dev or {}).get("cooperative_matrix") or {}).get("families")
    if not fams:
        return []
    out = ["", "Cooperative-matrix families (AUTO's self-test, `attnbench devices`):", "",
           "| family | offered | built | self-test | runs | detail |", "|---|---|---|---|---|---|"]
    for name, x in fams.items():
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            name, "yes" if x.get("offered") else "no", "yes" if x.get("built") else "no",
            x.get("self_test", "?"), "yes" if x.get("running") else "no", x.get("detail", "")))
    return out


def write_line(path, obj):
    with open(path, "a") as f:
        f.write(json.dumps(obj) + "\n")
        f.flush()


def read_lines(path):
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass  # a line cut by a time limit
    return out


def rewrite(value, pairs):
    """value (a string or a list of them) with each old path of `pairs` that
    stands as a whole path or path prefix replaced by its new path, in one
    pass: the build folder usually lies inside the source folder, and a
    second pass must not rewrite what the first one wrote. "/a/build" is not
    a prefix of "/a/build2"."""
    if isinstance(value, list):
        return [rewrite(v, pairs) for v in value]
    pairs = sorted(((o, n) for o, n in pairs if o and n and o != n), key=lambda p: -len(p[0]))
    if not pairs or not isinstance(value, str):
        return value
    new = dict(pairs)
    rx = re.compile(r"(?<![\w./+-])(%s)(?![\w.+-])" % "|".join(re.escape(o) for o, _ in pairs))
    return rx.sub(lambda m: new[m.group(1)], value)


def under(path, root):
    return bool(root) and (path == root or path.startswith(root.rstrip("/") + "/"))


def relocate(command, roots):
    """The command with argv[0] found on this machine: CTest writes the
    absolute path of the build machine's tools (/usr/bin/cmake), which the
    GPU machine may keep elsewhere on PATH. A missing program outside `roots`
    (the build and source folders) is looked up by name; returns (command,
    None), or (None, why) when this machine does not have it. A missing
    build product stays as it is: running it fails, as it should."""
    exe = command[0] if command else ""
    if not os.path.isabs(exe) or os.path.exists(exe) or any(under(exe, r) for r in roots):
        return command, None
    found = shutil.which(os.path.basename(exe))
    if found:
        return [found] + list(command[1:]), None
    return None, "%s not on this machine" % os.path.basename(exe)


def setup_order(tests):
    """Fixture setups in an order that honours DEPENDS and FIXTURES_REQUIRED
    among them (CTest's order), else the listing's."""
    by_fixture = {f: t["name"] for t in tests for f in t["fixtures_setup"]}
    names = {t["name"] for t in tests}
    done, out = set(), []

    def visit(t, seen):
        if t["name"] in done or t["name"] in seen:
            return
        seen.add(t["name"])
        for n in t["depends"] + [by_fixture.get(f) for f in t["fixtures_required"]]:
            if n in names:
                visit(next(x for x in tests if x["name"] == n), seen)
        done.add(t["name"])
        out.append(t)
    for t in tests:
        visit(t, set())
    return out


def cmd_tests(a):
    """Runs the tests of a `ctest --show-only=json-v1` listing with the
    build's and the source's absolute paths rewritten and each program found
    on this machine (relocate): fixture setups first, in order, then the
    others in parallel, each under its own timeout. A test whose program this
    machine lacks is skipped, with why; so is one whose fixture's setup was
    skipped, and one whose fixture's setup failed fails without running, as
    under CTest."""
    with open(a.list) as f:
        listing = json.load(f)
    pairs = [(a.from_build, a.to_build), (a.from_source, a.to_source)]
    roots = [a.to_build, a.to_source]
    tests = []
    for t in listing.get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if a.quick and t["name"] not in QUICK_TESTS:
            continue
        command, why = relocate(rewrite(t.get("command", []), pairs), roots)
        tests.append({
            "name": t["name"],
            "command": command,
            "why": why,
            "cwd": rewrite(props.get("WORKING_DIRECTORY", a.to_build or os.getcwd()), pairs),
            "env": rewrite(props.get("ENVIRONMENT", []), pairs),
            "skip_rc": props.get("SKIP_RETURN_CODE"),
            "fixtures_setup": list(props.get("FIXTURES_SETUP", [])),
            "fixtures_required": list(props.get("FIXTURES_REQUIRED", [])),
            "depends": list(props.get("DEPENDS", [])),
            "timeout": min(float(props.get("TIMEOUT", a.timeout)), a.timeout),
        })
    out = os.path.join(a.outdir, "tests.jsonl")
    with open(os.path.join(a.outdir, "tests-planned.json"), "w") as f:
        json.dump([t["name"] for t in tests], f)
    logs = os.path.join(a.outdir, "test-logs")
    os.makedirs(logs, exist_ok=True)
    setups = {}  # fixture -> (setup test, its status), as the setups finish

    def blocked(t):
        """(status, why) when a fixture the test needs was not set up."""
        for f in t["fixtures_required"]:
            name, status = setups.get(f, (None, "passed"))
            if status != "passed":
                return ("skipped" if status == "skipped" else "failed",
                        "fixture %s: its setup %s %s" % (f, name, status))
        return None

    def run(t):
        start = time.time()
        log = os.path.join(logs, t["name"] + ".log")
        status, why = ("skipped", t["why"]) if not t["command"] else blocked(t) or (None, None)
        if not status and not os.path.isdir(t["cwd"]):  # CTest fails it too
            status, why = "failed", "no working directory %s" % t["cwd"]
        if status:
            rc = None
            with open(log, "w") as lf:
                lf.write("gpu_check.py: not run: %s\n" % why)
        else:
            env = dict(os.environ)
            for kv in t["env"]:
                k, _, v = kv.partition("=")
                env[k] = v
            try:
                with open(log, "w") as lf:
                    lf.write("gpu_check.py: %s\n" % " ".join(t["command"]))
                    lf.flush()
                    p = subprocess.run(t["command"], cwd=t["cwd"], env=env, stdout=lf,
                                       stderr=subprocess.STDOUT, timeout=t["timeout"])
                rc = p.returncode
                status = ("passed" if rc == 0 else "skipped"
                          if t["skip_rc"] is not None and rc == int(t["skip_rc"]) else "failed")
            except subprocess.TimeoutExpired:
                rc, status = None, "timeout"
            except OSError as e:
                rc, status = None, "failed"
                with open(log, "a") as lf:
                    lf.write("gpu_check.py: %s\n" % e)
        for f in t["fixtures_setup"]:
            setups[f] = (t["name"], status)
        row = {"name": t["name"], "status": status, "rc": rc, "seconds": round(time.time() - start, 2)}
        if why:
            row["why"] = why
        write_line(out, row)

    for t in setup_order([t for t in tests if t["fixtures_setup"]]):
        run(t)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        list(pool.map(run, [t for t in tests if not t["fixtures_setup"]]))
    return 0


def cmd_bench(a):
    out = os.path.join(a.outdir, "bench.jsonl")
    rows = ROWS if not a.only else [r for r in ROWS if r[0] in a.only.split(",")]
    for rid, what, full, quick, (warmup, repeat) in rows:
        args = (quick if a.quick else full).split()
        args = ["bench"] + args + ["--json", "--pipeline-stats"]
        if a.quick:
            args += ["--warmup", "0", "--repeat", "1", "--no-peak"]
        else:
            args += ["--warmup", str(warmup), "--repeat", str(repeat)]
        start = time.time()
        row = {"id": rid, "what": what, "args": " ".join(args)}
        try:
            p = subprocess.run([a.attnbench] + args, capture_output=True, text=True,
                               timeout=a.timeout)
            row["rc"] = p.returncode
            row["stderr"] = p.stderr[-2000:]
            try:
                row["result"] = json.loads(p.stdout) if p.returncode == 0 else None
            except ValueError:
                row["result"] = None
            if p.returncode == 0 and row["result"] is not None:
                row["status"] = "ok"
            elif p.returncode == 2 and UNSUPPORTED.search(p.stderr):
                row["status"] = "unsupported"
            else:
                row["status"] = "failed"
        except subprocess.TimeoutExpired:
            row.update(rc=None, status="timeout", result=None)
        row["seconds"] = round(time.time() - start, 2)
        write_line(out, row)
    return 0


def cmd_torch(a):
    """The same shapes in PyTorch: CUDA events around each call, median of
    the timed calls after the warm-up; TF32 off, so fp32 is fp32."""
    out = os.path.join(a.outdir, "torch.jsonl")
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        write_line(out, {"id": None, "status": "skipped", "why": "torch has no CUDA device"})
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    q = a.quick
    write_line(out, {"id": None, "torch": torch.__version__, "device": torch.cuda.get_device_name(0)})

    def timed(fn, warmup, repeat):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        return statistics.median(times)

    def mm(dt):
        n = 96 if q else 4096
        x, y = torch.randn(n, n, device=dev, dtype=dt), torch.randn(n, n, device=dev, dtype=dt)
        return lambda: x @ y

    def sdpa(b, h, t, d, dt, backward=False, causal=False):
        if q:
            b, h, t, d = 1, 2, 48, 32
        x = [torch.randn(b, h, t, d, device=dev, dtype=dt, requires_grad=backward) for _ in range(3)]
        if not backward:
            return lambda: F.scaled_dot_product_attention(*x, is_causal=causal)
        o = F.scaled_dot_product_attention(*x)
        g = torch.randn_like(o)
        return lambda: torch.autograd.grad(o, x, g, retain_graph=True)

    def decode(dt):
        L = 256 if q else 32768
        qq = torch.randn(1, 8, 1, 64, device=dev, dtype=dt)
        k, v = (torch.randn(1, 8, L, 64, device=dev, dtype=dt) for _ in range(2))
        return lambda: F.scaled_dot_product_attention(qq, k, v)

    def mha(dt, mode="forward"):
        b, t, dm, h = (1, 24, 16, 2) if q else (4, 1024, 1024, 16)
        m = torch.nn.MultiheadAttention(dm, h, batch_first=True, device=dev, dtype=dt)
        x = [torch.randn(b, t, dm, device=dev, dtype=dt, requires_grad=mode != "forward") for _ in range(3)]
        if mode == "forward":
            return lambda: m(*x, need_weights=False)
        if mode == "backward":
            o = m(*x, need_weights=False)[0]
            g = torch.randn_like(o)
            return lambda: torch.autograd.grad(o, x + list(m.parameters()), g, retain_graph=True)
        opt = torch.optim.Adam(m.parameters())
        target = torch.randn(b, t, dm, device=dev, dtype=dt)

        def step():
            opt.zero_grad()
            loss = F.mse_loss(m(*x, need_weights=False)[0], target)
            loss.backward()
            opt.step()
        return step

    f32, f16 = torch.float32, torch.float16
    make = {
        "matmul_f32": lambda: mm(f32), "matmul_f16": lambda: mm(f16),
        "matmul_f16_coopmat": lambda: mm(f16), "mha_f16_coopmat": lambda: mha(f16),
        "matmul_f16_coopmat_nv": lambda: mm(f16), "matmul_f16_coopmat_khr": lambda: mm(f16),
        "matmul_f16_coopmat_nv2": lambda: mm(f16),
        "sdpa_b4_f16_coopmat_nv": lambda: sdpa(4, 16, 4096, 128, f16),
        "sdpa_b4_f16_coopmat_khr": lambda: sdpa(4, 16, 4096, 128, f16),
        "sdpa_b4_f16_coopmat_nv2": lambda: sdpa(4, 16, 4096, 128, f16),
        "sdpa_b4_f32": lambda: sdpa(4, 16, 4096, 128, f32),
        "sdpa_b4_f16": lambda: sdpa(4, 16, 4096, 128, f16),
        "sdpa_b4_f16_causal": lambda: sdpa(4, 16, 4096, 128, f16, causal=True),
        "sdpa_b4_f16_causal_coopmat": lambda: sdpa(4, 16, 4096, 128, f16, causal=True),
        "sdpa_b1_f32": lambda: sdpa(1, 8, 512, 64, f32),
        "mha_f32": lambda: mha(f32), "mha_f16": lambda: mha(f16),
        "decode_f32": lambda: decode(f32), "decode_f16": lambda: decode(f16),
        "decode_f16_splits64": lambda: decode(f16), "decode_f16_splits256": lambda: decode(f16),
        "decode_f32_splits256": lambda: decode(f32),
        "bwd_b1_fused_f32": lambda: sdpa(1, 8, 1024, 64, f32, True),
        "bwd_b1_chained_f32": lambda: sdpa(1, 8, 1024, 64, f32, True),
        "bwd_b1_fused_f16": lambda: sdpa(1, 8, 1024, 64, f16, True),
        "bwd_b4_fused_f32": lambda: sdpa(4, 16, 4096, 128, f32, True),
        "bwd_b4_fused_f16": lambda: sdpa(4, 16, 4096, 128, f16, True),
        "mha_bwd_f32": lambda: mha(f32, "backward"),
        "mha_train_f32": lambda: mha(f32, "train"),
    }
    for rid, what, _, _, (warmup, repeat) in ROWS:
        start = time.time()
        row = {"id": rid}
        try:
            row["median_ms"] = timed(make[rid](), 1 if q else warmup, 2 if q else repeat)
            row["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - one row's failure must not end the step
            row.update(status="failed", error=str(e)[:300])
        row["seconds"] = round(time.time() - start, 2)
        write_line(out, row)
        torch.cuda.empty_cache()
    return 0


# Driver statistics (names as the driver gives them) that size memory an
# invocation uses beyond its registers: a spill when above 0.
SPILL_STAT = re.compile(r"spill|local memory|scratch|stack|private memory", re.I)
# A per-invocation size of 2^32 bytes or more is not a size: NVIDIA's driver
# 580 reports "Local Memory Size" about 2^36 (68719476700 as attnbench prints
# it) for every pipeline, a 38-register decode kernel with "Stack Size" 0
# included. Reported unreadable.
IMPLAUSIBLE_BYTES = 1 << 32
# The registers per invocation a driver allocates at most (device name, lower
# case, contains the key): a kernel at the cap has most likely spilled.
REGISTER_CAPS = {"nvidia": 255}


def pipeline_summary(result):
    """Max registers and what attnbench's pipeline_stats say about spills:
    spill is "yes" (a size statistic above 0), "likely" (registers at the
    driver's cap), "unreadable" (a size statistic that is no size, and nothing
    else says yes), "no", or None (the driver reports no such statistic);
    spill_why says which statistic of which pipeline, unreadable lists those
    set aside, and pipeline_stats keeps the raw statistics."""
    result = result or {}
    stats = result.get("pipeline_stats") or []
    device = str(result.get("device") or "").lower()
    cap = next((c for k, c in REGISTER_CAPS.items() if k in device), None)
    regs, seen, spilled, at_cap, unreadable = None, False, [], [], []
    for p in stats:
        name = p.get("pipeline", "?")
        for stat, v in (p.get("stats") or {}).items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            if "register" in stat.lower():
                regs = v if regs is None else max(regs, v)
                if cap is not None and v >= cap:
                    at_cap.append("%s: %s %.0f (the driver's cap)" % (name, stat, v))
            if SPILL_STAT.search(stat):
                seen = True
                if v >= IMPLAUSIBLE_BYTES:
                    unreadable.append({"pipeline": name, "statistic": stat, "value": v})
                elif v > 0:
                    spilled.append("%s: %s %.0f B" % (name, stat, v))
    if spilled:
        spill, why = "yes", spilled
    elif at_cap:
        spill, why = "likely", at_cap
    elif unreadable:
        spill, why = "unreadable", ["%s: %s %.0f" % (u["pipeline"], u["statistic"], u["value"])
                                    for u in unreadable]
    else:
        spill, why = ("no" if seen else None), []
    names = sorted({p.get("pipeline", "?") for p in stats})
    return {"pipelines": names, "max_registers": regs, "spill": spill,
            "spill_why": "; ".join(why) or None, "unreadable": unreadable,
            "pipeline_stats": stats}


def spill_cell(row, notes):
    """The table's spill cell; an unreadable statistic gets a footnote,
    one per statistic and value (added to notes, in order)."""
    s = row["spill"]
    if s == "unreadable":
        marks = []
        for u in row["unreadable"]:
            key = (u["statistic"], u["value"])
            if key not in notes:
                notes.append(key)
            mark = "[%d]" % (notes.index(key) + 1)
            if mark not in marks:
                marks.append(mark)
        return "? " + "".join(marks)
    return {None: "-", "yes": "**yes**", "likely": "**likely** (registers at cap)",
            "no": "no"}[s]


def tests_table(tests, missing):
    """Markdown lines: the tests that did not pass, grouped by status and
    why (a skip says what this machine lacks), a few names each."""
    groups = {}
    for t in tests:
        if t["status"] != "passed":
            groups.setdefault((t["status"], t.get("why") or ""), []).append(t["name"])
    if missing:
        groups[("not run", "the step's time limit")] = list(missing)
    if not groups:
        return []
    out = ["", "| tests | count | why | which |", "|---|---|---|---|"]
    for (status, why), names in sorted(groups.items(), key=lambda g: (g[0][0], -len(g[1]))):
        names = sorted(names)
        shown = ", ".join(names[:6]) + (" and %d more" % (len(names) - 6) if len(names) > 6 else "")
        out.append("| %s | %d | %s | %s |" % (status, len(names), why or "-", shown))
    return out


def cmd_report(a):
    d = a.outdir

    def load(name):
        try:
            with open(os.path.join(d, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
    steps = load("steps.json") or {}
    tests = read_lines(os.path.join(d, "tests.jsonl"))
    bench = {r["id"]: r for r in read_lines(os.path.join(d, "bench.jsonl"))}
    torch_rows = read_lines(os.path.join(d, "torch.jsonl"))
    torch_by_id = {r["id"]: r for r in torch_rows if r.get("id")}
    torch_meta = next((r for r in torch_rows if r.get("id") is None), None)
    counts = {}
    for t in tests:
        counts[t["status"]] = counts.get(t["status"], 0) + 1
    done = {t["name"] for t in tests}
    missing = [n for n in (load("tests-planned.json") or []) if n not in done]
    if missing:  # the step's time limit ended the run first
        counts["not run"] = len(missing)
    rows = []
    for rid, what, _, _, _ in ROWS:
        b = bench.get(rid) or {}
        res = b.get("result") or {}
        t = torch_by_id.get(rid) or {}
        ms, tms = res.get("median_ms"), t.get("median_ms")
        rows.append({
            "id": rid, "what": what, "status": b.get("status", "not run"), "args": b.get("args"),
            "median_ms": ms, "gflops": res.get("gflops"), "gbps": res.get("gbps"),
            "flops_fraction": res.get("flops_fraction"),
            "bandwidth_fraction": res.get("bandwidth_fraction"),
            "device": res.get("device"), "path": res.get("path"),
            "torch_ms": tms, "torch_status": t.get("status", "not run"),
            "vkattn_over_torch": (tms / ms) if ms and tms else None,
            **pipeline_summary(res),
        })
    report = {"quick": a.quick, "steps": steps,
              "tests": {"counts": counts, "results": tests, "not_run": missing},
              "benches": rows, "torch": torch_meta}
    with open(os.path.join(d, "gpu-check.json"), "w") as f:
        json.dump(report, f, indent=1)

    def num(x, fmt):
        return "-" if x is None else fmt % x
    lines = ["# gpu-check%s" % (" --quick" if a.quick else ""), ""]
    dev = steps.get("device") or next((r["device"] for r in rows if r["device"]), "?")
    lines.append("Device: %s. PyTorch: %s." % (
        dev, (torch_meta or {}).get("torch") or steps.get("torch", "not run")))
    lines.append("GPU tests: %s." % (", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())) or "not run"))
    lines += families_lines(d)
    lines += tests_table(tests, missing)
    lines += ["", "vkattn: attnbench GPU timestamps, median ms; PyTorch: CUDA events, median ms, TF32 off. "
              "vkattn / PyTorch = PyTorch's time over vkattn's (above 100% is vkattn faster).", "",
              "| shape | vkattn ms | rate | PyTorch ms | vkattn / PyTorch | max registers | spill | status |",
              "|---|---|---|---|---|---|---|---|"]
    notes = []  # (statistic, value) of unreadable spill statistics
    for r in rows:
        if r["id"].startswith("decode") and r["gbps"]:
            rate = "%.0f GB/s" % r["gbps"]  # memory-bound: judged by bytes
        elif r["gflops"]:
            rate = ("%.1f TFLOP/s" % (r["gflops"] / 1000) if r["gflops"] >= 1000 else
                    "%.3g GFLOP/s" % r["gflops"])
        else:
            rate = "%.0f GB/s" % r["gbps"] if r["gbps"] else "-"
        # --quick runs other shapes than the label's: show what ran
        shape = r["what"] if not a.quick else "`%s`" % (r["args"] or r["id"])
        spill = spill_cell(r, notes)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            shape, num(r["median_ms"], "%.3f"), rate, num(r["torch_ms"], "%.3f"),
            num(r["vkattn_over_torch"] and 100 * r["vkattn_over_torch"], "%.0f%%"),
            num(r["max_registers"], "%g"), spill, r["status"]))
    if notes:
        lines.append("")
    for i, (stat, value) in enumerate(notes):
        which = sorted({u["pipeline"] for r in rows for u in r["unreadable"]
                        if (u["statistic"], u["value"]) == (stat, value)})
        lines.append("[%d] spill unknown: the driver's \"%s\" reads %.0f (>= 2^32: not a "
                     "per-invocation size), so it is not counted as a spill; pipelines: %s." % (
                         i + 1, stat, value, ", ".join(which)))
    with open(os.path.join(d, "gpu-check.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tests")
    t.add_argument("list")
    t.add_argument("outdir")
    t.add_argument("--from-build", default="")
    t.add_argument("--to-build", default="")
    t.add_argument("--from-source", default="")
    t.add_argument("--to-source", default="")
    t.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    t.add_argument("--timeout", type=float, default=300)
    b = sub.add_parser("bench")
    b.add_argument("attnbench")
    b.add_argument("outdir")
    b.add_argument("--timeout", type=float, default=60)
    b.add_argument("--only", default="")
    p = sub.add_parser("torch")
    p.add_argument("outdir")
    r = sub.add_parser("report")
    r.add_argument("outdir")
    for s in (t, b, p, r):
        s.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    return {"tests": cmd_tests, "bench": cmd_bench, "torch": cmd_torch, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
