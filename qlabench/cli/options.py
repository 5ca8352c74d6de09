"""Options several commands share, declared once: one flag, one help text, one check.

A command takes the ones it needs as defaults of its parameters (`device: str = DEVICE`); where the
default differs by command (the folder `--out` writes to), a small function makes the option. Paths a
command writes to are checked before any work (`writable_folder`, `writable_file`): a read-only place,
a file where a folder is wanted (or the reverse) or a symlink loop is one line and exit 2; and a file output
never replaces a results file, the results catalog or an input of the command (store/overwrite.py's rule,
`--force` or not).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from qlabench.core.spec_limits import MAX_CPU_THREADS

DEVICE = typer.Option(None, "--device", help="cpu, cuda or cuda:N (default: the suite's, else auto)")
TIMER = typer.Option(None, "--timer", help="auto, wall, events or graph (default: the suite's)")
NO_CHECK = typer.Option(False, "--no-check", help="Skip the correctness check (times are then unchecked)")
CACHE_DIR = typer.Option(None, "--cache-dir", help="Kernel compile caches (TileLang, Triton, Inductor, "
                         "FlashInfer); default $QLABENCH_CACHE_DIR, else ~/.cache/qlabench")
JOBS = typer.Option(4, "--jobs", "-j", min=1, help="Compile groups warmed at once (processes)")
BACKENDS_FLAG, MODES_FLAG = "--backends", "--modes"  # named in the error an empty value is
BACKENDS = typer.Option(None, BACKENDS_FLAG, help="Only these of the suite's backends (comma list)")
MODES = typer.Option(None, MODES_FLAG, help="Only these of the suite's modes (comma list, e.g. fwd)")
HEADS = typer.Option(None, "--heads", help="Only these head configurations, h_qk/h_v (comma list, e.g. 2/8,8/32): "
                     "a study run one head configuration at a time answers each from one run")
SEQLENS = typer.Option(None, "--seqlens", help="Only the points of these calls, as `advise --seqlens` names them "
                       "(comma list, e.g. 32768,4x8192,8192+24576): one run holds every backend's time for them")
CPU_THREADS = typer.Option(None, "--cpu-threads", min=0, max=MAX_CPU_THREADS, help="torch threads per CPU worker "
                           "(default: the suite's run.cpu_threads, 1; 0: torch's default, one per core)")
WARMUP = typer.Option(None, "--warmup/--no-warmup", help="Compile and tune every compile group once, in parallel "
                      "processes, before the first point is timed (default: where something compiles, on CUDA, and "
                      "the host has cores to spare; `qlabench warmup`)")
WARMUP_JOBS = typer.Option(None, "--warmup-jobs", min=1, help="Warm-up processes at once (default: one per spare "
                           "core, at most one per compile group and 8); implies --warmup")
OUTPUT = typer.Option(None, "--output", "-o", help="Also write the rendering (markdown/json) to this file")

_SUITE_HELP = "Suite name (qlabench/suites/NAME.toml) or a path"


def suite(default: str | None = None, help: str = _SUITE_HELP):
    """`--suite/-s`; `default` None makes it required. A bare name is a suite's even where a file of that name is
    in the working directory; the command says which it took (`_say_which_suite`)."""
    return typer.Option(... if default is None else default, "--suite", "-s", help=help, callback=_say_which_suite)


def _say_which_suite(value: str | None) -> str | None:
    """A note on stderr where a bare suite name could have meant a file in the working directory: which was taken."""
    from pathlib import Path as _P

    from qlabench.core.spec import SUITES_DIR, is_suite_path

    if value and not is_suite_path(value) and _P(value).is_file():
        from qlabench.cli.app import err_console

        suite_file = SUITES_DIR / f"{value}.toml"
        took = (f"took the suite {value} ({suite_file}), not the file {value} in the working directory; pass "
                f"./{value} for the file" if suite_file.is_file() else
                f"no suite has that name; took the file {value} in the working directory")
        err_console.print(f"note: --suite {value}: {took}", markup=False, highlight=False, soft_wrap=True)
    return value


def out(default: str, help: str, short: bool = True):
    """`--out` (and `-o` unless `short` is False) with the command's own default folder."""
    names = ("--out", "-o") if short else ("--out",)
    return typer.Option(Path(default), *names, help=help)


def replicates(default: int, help: str):
    return typer.Option(default, "--replicates", min=1, help=help)


def max_time(what: str = "point"):
    return typer.Option(None, "--max-time", min=0, help=f"Start no new {what} after SECONDS; run the same command "
                        "again (sweeps: with --resume) to continue")


def _refuse(option: str, path: Path, why: str):
    from qlabench.core.errors import ConfigError

    return ConfigError(f"{option} {path}: {why}")


def _folder_problem(path: Path) -> str | None:
    """Why no file can be written into folder `path` (made if missing), or None. Nothing is made: a
    missing folder is judged by the nearest folder above it that exists."""
    if path.is_symlink() and not path.exists():
        return "a symlink that leads nowhere (a loop, or a missing target)"
    if path.exists() and not path.is_dir():
        return "is a file; give a folder"
    probe = path
    while not probe.exists():
        if probe.is_symlink():
            return f"{probe} is a symlink that leads nowhere"
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is a file, so no folder can be made under it"
    try:
        tempfile.TemporaryFile(dir=probe).close()
    except OSError as e:
        what = "cannot write into the folder" if probe == path else f"cannot create the folder under {probe}"
        return f"{what}: {e.strerror or e}"
    return None


def writable_folder(path: Path, option: str = "--out") -> Path:
    """`path` as a folder this command can write into (the command makes it later); a one-line
    ConfigError otherwise."""
    path = Path(path)
    if why := _folder_problem(path):
        raise _refuse(option, path, why)
    return path


def writable_file(path: Path, option: str = "--output", inputs=(), writes: str = "text") -> Path:
    """`path` as a file this command can write; a one-line ConfigError otherwise (nothing is made). `inputs`:
    the files and folders the command reads; `writes`: "text", or the kind of parquet table it writes. A results
    file, the catalog and an input are refused whatever other flag the command has (store/overwrite.py)."""
    from qlabench.store.overwrite import overwrite_refusal

    path = Path(path)
    if path.is_dir():
        raise _refuse(option, path, "is a folder; give a file name")
    if path.is_symlink() and not path.exists():
        raise _refuse(option, path, "a symlink that leads nowhere (a loop, or a missing target)")
    if why := _folder_problem(path.parent):
        raise _refuse(option, path, f"its folder {path.parent}: {why}")
    if path.exists():
        try:
            open(path, "ab").close()
        except OSError as e:
            raise _refuse(option, path, f"cannot write the file: {e.strerror or e}") from None
    if why := overwrite_refusal(path, inputs, writes):
        raise _refuse(option, path, why)
    return path
