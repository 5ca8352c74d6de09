"""The 'false passes and lost data' matrix (docs/ROBUSTNESS.md): run from the repository root with
qlabench importable; prints a markdown table. A few minutes on a 2-core CPU box."""
import glob, os, signal, subprocess, sys, tempfile, time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401
import pyarrow.parquet as pq

W = Path(tempfile.mkdtemp(prefix="qlabench-matrix22-"))
Q = [sys.executable, "-m", "qlabench"]
SUITE = """name = "m22"
device = "cpu"
[sweep]
backends = ["synthetic"]
modes = ["fwd"]
seqlen = [64, 128]
heads = [{ h_qk = 1, h_v = 1 }]
K = 32
V = 32
dtype = "float32"
[timing]
timer = "wall"
warmup = 2
min_samples = 25
max_samples = 25
[check]
oracle_max_tokens = 64
"""
rows = []


def run(args, env=None, **kw):
    return subprocess.run(Q + list(map(str, args)), capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}, **kw)


def last(r):
    return ((r.stderr.strip() or r.stdout.strip()).splitlines() or [""])[-1][:110]


def rec(case, rc, expect, note):
    rows.append((case, rc, "yes" if rc == expect else "NO", note))


suite = W / "m22.toml"
suite.write_text(SUITE)
good, slow = W / "good", W / "slow"
run(["run", "sweep", "--suite", suite, "--out", good, "--replicates", "2"])
run(["run", "sweep", "--suite", suite, "--out", slow, "--replicates", "2"], env={"QLABENCH_SYNTHETIC_SLOWDOWN": "10"})
gf, sf = glob.glob(f"{good}/m22/*.parquet")[0], glob.glob(f"{slow}/m22/*.parquet")[0]
t = pq.read_table(gf)
err = t.set_column(t.schema.get_field_index("status"), "status", pa.array(["error"] * t.num_rows))
err = err.set_column(err.schema.get_field_index("reason"), "reason", pa.array(["RuntimeError: boom"] * t.num_rows))
err = err.set_column(err.schema.get_field_index("median_ms"), "median_ms", pa.nulls(t.num_rows, pa.float64()))
err = err.set_column(err.schema.get_field_index("run_id"), "run_id", pa.array(["broken"] * t.num_rows))
ts = err.schema.get_field_index("timestamp")
err = err.set_column(ts, err.schema.field(ts), pa.array(["2999-01-01T00:00:00+00:00"] * t.num_rows, err.schema.field(ts).type))
err = err.set_column(err.schema.get_field_index("samples_ms"), err.schema.field("samples_ms"),
                     pa.array([[]] * t.num_rows, err.schema.field("samples_ms").type))
ef = W / "error.parquet"
pq.write_table(err.replace_schema_metadata(t.schema.metadata), ef)
root = W / "baselines"
run(["baseline", "save", gf, "--suite", "m22", "--root", root])
r = run(["baseline", "save", ef, "--suite", "m22", "--root", root]); rec("9. baseline save of all-error rows over an ok baseline", r.returncode, 2, last(r))
r = run(["baseline", "save", ef, "--suite", "m22", "--root", root, "--force"]); rec("9. the same with --force", r.returncode, 0, last(r) or r.stdout.strip()[-100:])
r = run(["compare", ef, sf]); rec("9. compare: all-error base vs 10x slower head", r.returncode, 2, r.stdout.strip().splitlines()[-1][:110])
base = glob.glob(f"{root}/*/m22.parquet")[0]
r = run(["gate", "--suite", suite, "--baseline", base, "--out", W / "gate", "--replicates", "2"], env={"QLABENCH_SYNTHETIC_SLOWDOWN": "10"})
rec("9. gate against that baseline, head 10x slower", r.returncode, 2, [l for l in r.stdout.splitlines() if "PASS" in l or "FAIL" in l][-1][:110])

sl = pq.read_table(sf)
halves = []
for i, t_ in enumerate((64, 128)):  # two runs of different points: both must end in the baseline
    h = sl.filter(pa.compute.equal(sl.column("total_tokens"), t_))
    halves.append(W / f"half{i}.parquet"); pq.write_table(h, halves[-1])
lost = 0
for i in range(8):
    rt = W / f"conc{i}"
    ps = [subprocess.Popen(Q + ["baseline", "save", str(f), "--suite", "m22", "--root", str(rt)], stdout=subprocess.PIPE, stderr=subprocess.PIPE) for f in halves]
    rcs = [p.wait() for p in ps]
    kept = set(pq.read_table(glob.glob(f"{rt}/*/m22.parquet")[0]).column("total_tokens").to_pylist())
    lost += kept != {64, 128} or rcs != [0, 0]
rec("10. two baseline save at once, 8 tries", 0, 0, f"results lost: {lost} of 8")
oks = twos = 0
for i in range(8):
    into = W / f"m{i}.parquet"
    ps = [subprocess.Popen(Q + ["merge", f, "--into", str(into)], stdout=subprocess.PIPE, stderr=subprocess.PIPE) for f in (gf, sf)]
    rcs = sorted(p.wait() for p in ps)
    oks += rcs == [0, 2]
rec("10. two merge --into one new file at once, 8 tries", 0, 0, f"one written and one refused (exit 2): {oks} of 8")
for v in ("inf", "1e300", "nan"):
    r = run(["compare", gf, sf, "--noise-factor", v]); rec(f"11. compare --noise-factor {v} (head 10x slower)", r.returncode, 2, last(r))
for args in (["--top", "0"], ["--threshold", "inf"], ["--min-samples", "1000000000"]):
    r = run(["compare", gf, sf, *args]); rec(f"11. compare {' '.join(args)}", r.returncode, 2, last(r))
r = run(["gate", "--suite", suite, "--baseline", gf, "--out", W / "g2", "--confirm", "1000000000"]); rec("11. gate --confirm 1000000000", r.returncode, 2, last(r))
r = run(["ab", "current", "current", "--suite", suite, "--rounds", "1000000", "--out", W / "ab0"]); rec("11. ab --rounds 1000000", r.returncode, 2, last(r))
r = run(["compare-study", "--suite", suite, "--slowdowns", "inf", "--out", W / "cs"]); rec("11. compare-study --slowdowns inf", r.returncode, 2, last(r))
si = t.schema.get_field_index("samples_ms")
nul = t.set_column(si, t.schema.field(si), pa.array([[1.0, None, 1.0]] * t.num_rows, t.schema.field(si).type))
nf = W / "null.parquet"; pq.write_table(nul, nf)
mi = t.schema.get_field_index("median_ms")
nan = t.set_column(si, t.schema.field(si), pa.array([[]] * t.num_rows, t.schema.field(si).type))
nan = nan.set_column(mi, t.schema.field(mi), pa.array([float("nan")] * t.num_rows))
nanf = W / "nan.parquet"; pq.write_table(nan, nanf)
for name, a, b in (("null sample in head", gf, nf), ("null sample in base", nf, gf), ("NaN median in head", gf, nanf), ("NaN median in base", nanf, gf)):
    r = run(["compare", a, b]); rec(f"15. compare, {name}", r.returncode, 2, last(r))
r = run(["gate", "--suite", suite, "--baseline", nf, "--out", W / "g3", "--replicates", "2"]); rec("15. gate, null sample in the baseline", r.returncode, 2, last(r))
mode = t.schema.get_field_index("mode")
esc = t.set_column(mode, "mode", pa.array(["../../../escaped"] * t.num_rows))
escf = W / "esc.parquet"; pq.write_table(esc, escf)
out = W / "p" / "q" / "plots"
r = run(["plot", escf, "-o", out, "--baseline", "synthetic"])
outside = [p for p in glob.glob(f"{W}/**/*.png", recursive=True) if not p.startswith(str(out) + "/")]
rec("16. plot, mode '../../../escaped'", r.returncode, 0, f"PNGs inside -o: {len(glob.glob(f'{out}/*.png'))}, outside: {len(outside)}")
lib = W / "lib"; lib.mkdir()
g = lambda *a: subprocess.run(["git", "-C", str(lib), *a], check=True, capture_output=True)
g("init", "-q"); g("config", "user.email", "t@t"); g("config", "user.name", "t")
(lib / "sitecustomize.py").write_text("")
g("add", "-A"); g("commit", "-q", "-m", "v1"); g("tag", "v1")
(lib / "qlabench").mkdir(); (lib / "qlabench" / "__init__.py").write_text("")
g("add", "-A"); g("commit", "-q", "-m", "old"); g("tag", "old")
r = run(["ab", "old", "current", "--suite", suite, "--repo", lib, "--out", W / "ab1"]); rec("12. ab OLDREF current, qlabench of OLDREF lacks qlabench.run", r.returncode, 2, last(r))
wt = lambda: sum(1 for l in subprocess.run(["git", "-C", str(lib), "worktree", "list"], capture_output=True, text=True).stdout.splitlines())
p = subprocess.Popen(Q + ["ab", "v1", "current", "--suite", str(suite), "--repo", str(lib), "--out", str(W / "ab2")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
while wt() < 2 and p.poll() is None:
    time.sleep(0.2)
time.sleep(1)
os.kill(p.pid, signal.SIGKILL); p.wait()
after_kill = wt()
r = run(["ab", "v1", "current", "--suite", suite, "--repo", lib, "--rounds", "1000000", "--out", W / "ab3"])
left = glob.glob(f"{tempfile.gettempdir()}/qlabench-ab-{p.pid}-*")
rec("19. kill -9 during ab, then the next ab", r.returncode, 2, f"worktrees after the kill: {after_kill}, after the next ab: {wt()}; temp folders of the killed ab left: {len(left)}")
print("| case | rc | as intended | outcome |\n|---|---|---|---|")
for c in rows:
    print("| " + " | ".join(str(x).replace("|", "\\|") for x in c) + " |")
import shutil
shutil.rmtree(W, ignore_errors=True)
