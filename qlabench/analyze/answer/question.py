"""The user's question, parsed: which model at which TP degree, which workload, which sequences, which gate.

`qlabench advise --model qwen3.5-397b --tp 8 --workload prefill --seqlens 32768,4x8192 --gate published`
asks: for one prompt of 32768 tokens, and for four prompts of 8192 packed into one call, which GDN kernel
is fastest on this model's heads at TP 8 with the published gate? Each comma-separated item of
`--seqlens` is one *case* (one kernel call): `N` is a single sequence, `AxN` packs A sequences of N
tokens, and `N+M+...` packs sequences of different lengths. Cases are packed as the study measures
them (varlen, batch 1, with cu_seqlens), which is how serving engines and trainers call these kernels.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from qlabench.core.errors import ConfigError
from qlabench.core.launch import check_launch, default_launch
from qlabench.core.gpu_names import gpu_words
from qlabench.core.models import lookup
from qlabench.core.point import FLASHQLA_GATE_SCALE, FLASHQLA_GATE_ZERO_FRAC
from qlabench.core.select import parse_sequences, sequences_label

WORKLOADS = ("prefill", "train", "decode")
# What each workload times: prefill is the forward alone; a training step is one call of forward and backward
# through the library's autograd (fwd_bwd), measured as one: never a forward and a backward added up from rows
# that may come from two runs or two GPUs.
WORKLOAD_MODES = {"prefill": ("fwd",), "train": ("fwd_bwd",)}
MAX_CASES = 32
MAX_TOKENS = 1 << 22  # 4M tokens in one call: beyond any row qlabench has a reason to hold


@dataclass(frozen=True)
class GateRegime:
    """The flashqla gate profile's parameters (core/point.py): the fraction of value heads with g = 0 and
    the divisor of logsigmoid(randn). `name` is how the answer speaks of it."""

    name: str
    zero_frac: float = FLASHQLA_GATE_ZERO_FRAC
    scale: float = FLASHQLA_GATE_SCALE

    @property
    def label(self) -> str:
        return f"{self.name} (zero-gate heads {self.zero_frac:g}, g = logsigmoid(x)/{self.scale:g})"


PUBLISHED = GateRegime("published")
# No value head without decay: every head's g is below 0, as in a trained model whose gates all decay.
NO_ZERO_HEADS = GateRegime("none", zero_frac=0.0)


@dataclass(frozen=True)
class Case:
    """One kernel call: the sequence lengths packed into it."""

    seqlens: tuple[int, ...]

    @property
    def label(self) -> str:
        return sequences_label(self.seqlens)

    @property
    def total_tokens(self) -> int:
        return sum(self.seqlens)


@dataclass(frozen=True)
class Question:
    model: str  # the catalogue's canonical name
    tp: int
    workload: str
    cases: tuple[Case, ...]
    gate: GateRegime = PUBLISHED
    current: str = "fla"  # the user's current choice: speedups are against it
    dtype: str = "bfloat16"
    sm_budget: int | None = None  # rank rows held to this many SMs (docs/SM-BUDGET.md); None: whole-GPU rows
    gpu: str | None = None  # the GPU model asked about, as typed ('RTX 5090'): its rows only; None: every one's
    launch: str | None = None  # "graph" or "eager" (core/launch.py); None: the workload's default

    @property
    def launch_regime(self) -> str:
        """The launch regime the answer ranks in: the one asked for, else the workload's users' default."""
        return self.launch or default_launch(self.workload)

    @property
    def heads(self) -> tuple[int, int]:
        return lookup(self.model).at_tp(self.tp)

    @property
    def head_dim(self) -> int:
        return lookup(self.model).head_dim


def parse_case(item: str) -> Case:
    """'32768' -> (32768,); '4x8192' -> (8192,)*4; '8192+24576' -> (8192, 24576)."""
    lens = parse_sequences(item)
    if sum(lens) > MAX_TOKENS:
        raise ConfigError(f"--seqlens item {item!r}: {sum(lens)} tokens in one call; at most {MAX_TOKENS}")
    return Case(lens)


def parse_cases(text: str) -> tuple[Case, ...]:
    items = [s for s in text.split(",") if s.strip()]
    if not items:
        raise ConfigError("--seqlens: give at least one case, e.g. 32768,4x8192")
    if len(items) > MAX_CASES:
        raise ConfigError(f"--seqlens: {len(items)} cases; at most {MAX_CASES}")
    return tuple(dict.fromkeys(parse_case(s) for s in items))


def parse_gate(text: str | None) -> GateRegime:
    """'published', 'none', 'zero=F[,scale=S]', or a TOML/JSON file with gate_zero_frac and gate_scale."""
    if text is None or text == "published":
        return PUBLISHED
    if text == "none":
        return NO_ZERO_HEADS
    if "=" in text and not Path(text).exists():
        values = {}
        for part in text.split(","):
            k, _, v = part.partition("=")
            if k.strip() in values:  # zero=0.1,zero=0.5: which one was meant is not ours to guess
                raise ConfigError(f"--gate {text!r}: {k.strip()!r} is given twice")
            values[k.strip()] = v.strip()
        return _regime(text, values.get("zero"), values.get("scale"), set(values) - {"zero", "scale"})
    path = Path(text)
    if not path.is_file():
        raise ConfigError(f"--gate {text!r}: expected published, none, zero=F[,scale=S] or a TOML/JSON file")
    try:
        data = (json.loads(path.read_text(), object_pairs_hook=lambda pairs: _unique_keys(pairs, text))
                if path.suffix == ".json"
                else tomllib.loads(path.read_text()))  # TOML refuses a repeated key itself
    except (OSError, ValueError) as e:
        raise ConfigError(f"--gate {text}: cannot read it: {e}") from None
    if not isinstance(data, dict):  # JSON may hold a list, a number, a string or null
        raise ConfigError(f"--gate {text}: must hold an object with gate_zero_frac and gate_scale, "
                          f"not {type(data).__name__}")
    return _regime(path.stem, data.get("gate_zero_frac"), data.get("gate_scale"),
                   set(data) - {"gate_zero_frac", "gate_scale"})


def _unique_keys(pairs: list, text: str) -> dict:
    """A JSON object whose keys are each given once (json keeps the last of a repeated key in silence)."""
    keys = [k for k, _ in pairs]
    if twice := sorted({k for k in keys if keys.count(k) > 1}):
        raise ConfigError(f"--gate {text}: cannot read it: key {', '.join(map(repr, twice))} is given twice")
    return dict(pairs)


def _regime(name: str, zero, scale, unknown: set) -> GateRegime:
    if unknown:
        raise ConfigError(f"--gate {name}: unknown keys {sorted(unknown)}")
    if isinstance(zero, bool) or isinstance(scale, bool):  # float(True) is 1.0: never a gate by accident
        raise ConfigError(f"--gate {name}: zero and scale must be numbers, not true/false")
    try:
        z = FLASHQLA_GATE_ZERO_FRAC if zero is None else float(zero)
        s = FLASHQLA_GATE_SCALE if scale is None else float(scale)
    except (TypeError, ValueError):
        raise ConfigError(f"--gate {name}: zero and scale must be numbers") from None
    if not (math.isfinite(z) and 0 <= z <= 1):
        raise ConfigError(f"--gate {name}: the zero-gate fraction must be in [0, 1], got {z}")
    if not (math.isfinite(s) and s > 0):
        raise ConfigError(f"--gate {name}: the scale must be a positive number, got {s}")
    if (z, s) == (PUBLISHED.zero_frac, PUBLISHED.scale):
        return PUBLISHED
    if (z, s) == (NO_ZERO_HEADS.zero_frac, NO_ZERO_HEADS.scale):
        return NO_ZERO_HEADS
    return GateRegime(name, z, s)


def make_question(model: str, tp: int, workload: str, seqlens: str, gate: str | None = None,
                  current: str = "fla", sm_budget: int | None = None, gpu: str | None = None,
                  launch: str | None = None) -> Question:
    """The question from command-line text; ConfigError on anything it cannot mean."""
    try:
        m = lookup(model)
    except KeyError as e:
        raise ConfigError(str(e.args[0])) from None
    try:
        m.at_tp(tp)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if workload not in WORKLOADS:
        raise ConfigError(f"--workload must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    if workload == "decode":
        raise ConfigError("--workload decode: advise ranks prefill and train rows only; decode and mtp rows are "
                          "ranked by `qlabench report --serving RESULTS` (the winner per model, TP, batch, T and "
                          "state dtype; docs/SERVING.md)")
    if sm_budget is not None and (isinstance(sm_budget, bool) or not isinstance(sm_budget, int) or sm_budget < 1):
        raise ConfigError(f"--sm-budget must be a positive number of SMs, got {sm_budget!r}")
    if gpu is not None and not gpu_words(gpu):
        raise ConfigError(f"--gpu {gpu!r}: name a GPU model, e.g. H200, GB200 or \"RTX 5090\"")
    if launch is not None:
        check_launch(launch)
    return Question(m.name, tp, workload, parse_cases(seqlens), parse_gate(gate), current, sm_budget=sm_budget,
                    gpu=gpu, launch=launch)
