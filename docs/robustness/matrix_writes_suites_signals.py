"""The adversarial matrix of failed writes, bad suites and signals (docs/ROBUSTNESS.md): run from the repository root with qlabench importable;
prints a markdown table. Takes about 4 minutes on a 2-core CPU box. Row counts of the kill -9 case count
only the compacted files (the killed run's parts are read separately in the doc)."""
import os, signal, subprocess, sys, time, glob, shutil, resource
from pathlib import Path
import pyarrow.parquet as pq, pyarrow as pa
import tempfile
W = Path(tempfile.mkdtemp(prefix="qlabench-matrix-"))
TINY = (Path(__file__).resolve().parents[2] / "tests" / "data" / "tiny-cpu.toml").read_text()
Q = [sys.executable, "-m", "qlabench"]
rows = []

def run(args, pre=None, **kw):
    return subprocess.run(Q + list(map(str, args)), capture_output=True, text=True, preexec_fn=pre, timeout=300, **kw)

def nrows(d):
    fs = [f for f in glob.glob(f"{d}/**/*.parquet", recursive=True) if not os.path.basename(f).startswith(".")]
    comp = [f for f in fs if "/part-" not in f]
    use = comp or fs
    return sum(pq.read_metadata(f).num_rows for f in use)

def last(r):
    t = (r.stderr.strip().splitlines() or [""])[-1]
    return t[:110]

def rec(case, r, expect_rc, kept="-", lost="-"):
    rows.append((case, r.returncode, "yes" if r.returncode == expect_rc else "NO", kept, lost, last(r)))

def suite(name, text):
    p = W / f"{name}.toml"; p.write_text(text); return p

# baseline good run
good = W / "good"; r = run(["run", "sweep", "--suite", suite("tiny", TINY), "--out", good]); rec("reference run, tiny-cpu (12 points)", r, 0, nrows(good), 0)
gf = glob.glob(f"{good}/tiny-cpu/*.parquet")[0]
f = W / "afile"; f.write_text("x")
r = run(["run", "sweep", "--suite", W / "tiny.toml", "--out", f]); rec("--out is a file", r, 2, 0, 0)
d = W / "fs"
r = run(["run", "sweep", "--suite", W / "tiny.toml", "--out", d], pre=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000)))
rec("file size limit (prlimit --fsize 20000) below one part", r, 1, nrows(d) if d.exists() else 0, "1 (in flight; said so)")
for nm in ["../../escaped", "/tmp/abs", "", ".", "..", "n" * 300]:
    r = run(["run", "sweep", "--suite", suite("nm", TINY.replace('name = "tiny-cpu"', f'name = "{nm}"')), "--out", W / "esc"])
    rec(f"suite name {nm[:20]!r}{'...' if len(nm) > 20 else ''}", r, 2, 0, 0)
r = run(["baseline", "save", gf, "--suite", "../../x", "--root", W / "bl"]); rec("baseline save --suite ../../x", r, 2)
t = pq.read_table(gf)
pq.write_table(t.slice(0, 0), W / "empty.parquet"); pq.write_table(t.drop(["backend"]), W / "nobackend.parquet")
pq.write_table(t.drop(["seqlens"]), W / "noseqlens.parquet")
i = t.column_names.index("status"); pq.write_table(t.set_column(i, t.schema.field("status"), pa.array(["weird"] * t.num_rows)), W / "weird.parquet")
other = W / "other"; run(["run", "sweep", "--suite", suite("o", TINY.replace("seqlen = [16, 32]", "seqlen = [48]").replace("varlen = [[7, 20]]", "varlen = []")), "--out", other])
r = run(["compare", gf, other]); rec("compare: zero overlapping points", r, 2)
for n in ("empty", "nobackend", "noseqlens", "weird"):
    r = run(["compare", gf, W / f"{n}.parquet"]); rec(f"compare: head {n}", r, 2)
    r = run(["merge", W / f"{n}.parquet", "--into", W / f"m-{n}.parquet"]); rec(f"merge: {n}", r, 2 if n != "empty" else r.returncode)
for k, v in (("point_timeout_s", "inf"), ("point_timeout_s", "1e7"), ("compile_timeout_s", "-1")):
    r = run(["run", "sweep", "--suite", suite("lim", TINY + f"\n[run]\n{k} = {v}\n"), "--out", W / "lim"]); rec(f"[run] {k} = {v}", r, 2, 0, 0)
t0 = time.time(); r = run(["run", "sweep", "--dry-run", "--suite", suite("big", TINY.replace("seqlen = [16, 32]", f"seqlen = {list(range(1, 1001))}\nseed = {list(range(1000))}"))])
rec(f"10^6 points (--dry-run), {time.time() - t0:.1f} s", r, 2)
r = run(["run", "sweep", "--dry-run", "--suite", suite("bb", TINY.replace("seqlen = [16, 32]", "seqlen = [16]\nbatch = [100000000]"))]); rec("batch = [100000000]", r, 2)
pipe = W / "pipe"
p = subprocess.Popen(Q + ["run", "sweep", "--suite", str(W / "tiny.toml"), "--out", str(pipe)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
p.stdout.readline(); p.stdout.close(); _, err = p.communicate(timeout=300)
rows.append(("stdout closed after one line (| head -1)", p.returncode, "yes" if p.returncode == 0 else "NO", nrows(pipe), 0, err.strip().splitlines()[-1][:110] if err.strip() else ""))
for case, repl in (("unknown backend (--dry-run)", ('"naive-chunk"', '"naive-chunkk"')), ("exclude seqlen = \"16\"", ("[timing]", '[[exclude]]\nseqlen = "16"\n[timing]')),
                   ("min_samples = -3", ("min_samples = 2", "min_samples = -3")), ("max_samples = 0", ("max_samples = 3", "max_samples = 0")),
                   ("warmup = -5", ("warmup = 0", "warmup = -5")), ("max_time_s = -1", ("max_time_s = 0.2", "max_time_s = -1")),
                   ("target_rel_noise = -1", ("target_rel_noise = 0.5", "target_rel_noise = -1")), ("oracle_max_tokens = 0", ("oracle_max_tokens = 32", "oracle_max_tokens = 0")),
                   ("device = \"cuda:abc\" (--dry-run)", ('device = "cpu"', 'device = "cuda:abc"'))):
    r = run(["run", "sweep", "--dry-run", "--suite", suite("val", TINY.replace(*repl))]); rec(case, r, 2)
(W / "latin.toml").write_bytes(b'name = "caf\xe9"\n'); r = run(["run", "sweep", "--dry-run", "--suite", W / "latin.toml"]); rec("non-UTF-8 suite file", r, 2)
nc = W / "nc"; run(["run", "sweep", "--suite", W / "tiny.toml", "--out", nc, "--no-check"])
r = run(["run", "sweep", "--suite", W / "tiny.toml", "--out", nc, "--resume"]); rec("--no-check rows, then a checked --resume", r, 0, "12 re-measured" if "already recorded" not in r.stdout else "skipped (WRONG)", 0)
(W / "into.parquet").write_bytes(b"precious"); r = run(["merge", gf, "--into", W / "into.parquet"]); rec("merge --into an existing file", r, 2)
r = run(["plot", gf, "-o", W / "afile"]); rec("plot -o FILE", r, 2)
slow = suite("slow", 'name = "slow"\ndevice = "cpu"\n[sweep]\nbackends = ["fault"]\nmodes = ["fwd"]\nseqlen = [8, 10, 12, 14, 16, 18, 20, 22]\nheads = [{ h_qk = 1, h_v = 1 }]\nK = 8\nV = 26\ndtype = "float32"\n[timing]\ntimer = "wall"\nwarmup = 0\nmin_samples = 2\nmax_samples = 2\nmax_time_s = 0.1\ntarget_rel_noise = 0.5\n[check]\noracle_max_tokens = 32\n')
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
    out = W / f"sig{int(sig)}"; tmp = W / f"tmp{int(sig)}"; tmp.mkdir()
    p = subprocess.Popen(Q + ["run", "sweep", "--suite", str(slow), "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)})
    while len(glob.glob(f"{out}/slow/*/part-*.parquet")) < 2 and p.poll() is None: time.sleep(0.05)
    p.send_signal(sig); _, err = p.communicate(timeout=120)
    parts_left = len(glob.glob(f"{out}/slow/*/"))
    tmp_left = len(list(tmp.glob("qlabench-workers-*")))
    if sig == signal.SIGKILL:
        r2 = subprocess.run(Q + ["run", "sweep", "--suite", str(slow), "--out", str(out), "--resume"], capture_output=True, text=True, env={**os.environ, "TMPDIR": str(tmp)})
        rows.append((f"kill -9 after 2 parts, then --resume", p.returncode, "yes" if r2.returncode == 0 and not list(tmp.glob("qlabench-workers-*")) else "NO", nrows(out), 0,
                     f"temp folders after kill: {tmp_left}, after the resume: {len(list(tmp.glob('qlabench-workers-*')))}"))
    else:
        rows.append((f"{sig.name} after 2 parts", p.returncode, "yes" if p.returncode == 130 and parts_left == 0 and tmp_left == 0 else "NO", nrows(out), "1 (in flight)", (err.strip().splitlines() or [""])[-1][:110]))
print("| case | rc | as intended | rows kept | rows lost | last line on stderr |\n|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(str(x).replace("|", "\\|") for x in r) + " |")
