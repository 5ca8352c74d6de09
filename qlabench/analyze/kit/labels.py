"""How a stored row is named in every table, figure and log line: heads, layout, sequences, gate, backend.

core/identity.py holds the labels of a point; these read them from a row read back through pandas.
"""

from __future__ import annotations

from qlabench.core import identity
from qlabench.store.keys import key_value

# A stored row's labels: core/identity.py's, from the row's values read back through pandas.


def heads_label(row) -> str:
    return identity.heads_label(row["h_qk"], row["h_v"], key_value(row.get("model")), key_value(row.get("tp")))


def layout_label(row) -> str:
    return identity.layout_label(row["layout"], row["batch"], row["seqlens"])


def sequences_label(row) -> str:
    """The layout, for a serving row its state pool, and the SM budget the row was held to: '256x1 fp32/kv pool
    512 sm32' (tables' `sequences`)."""
    out = layout_label(row)
    sdt = key_value(row.get("state_dtype"))
    if sdt:
        short = {"float32": "fp32", "bfloat16": "bf16"}.get(sdt, sdt)
        out += f" {short}/{key_value(row.get('state_layout'))} pool {key_value(row.get('pool'))}"
    budget = identity.budget_label(key_value(row.get("sm_budget")))
    return f"{out} {budget}" if budget else out


def memory_label(row) -> str:
    """The extra device memory of the row's call (core/device_memory.py): '+48 MiB', '+48 MiB +12 outside'
    where the call also took memory outside torch's allocator; '' where not measured (CPU, older rows)."""
    extra, outside = key_value(row.get("extra_mem_mib")), key_value(row.get("outside_mem_mib"))
    if extra is None or extra != extra:
        return ""
    text = f"+{extra:.0f} MiB" if extra >= 1 or extra == 0 else f"+{extra:.2f} MiB"
    if outside is not None and outside == outside and outside >= 1:
        text += f" +{outside:.0f} outside"
    return text


def beta_suffix(row) -> str:
    """' beta=low' for a row whose beta inputs are not the default sigmoid(randn), else ''."""
    b = key_value(row.get("beta_regime"))
    return f" beta={b}" if b else ""


def gate_label_of(row) -> str:
    """The gate profile with its parameters where they differ from the default: 'flashqla(zero=0.5,/64)'."""
    return identity.gate_label(row["gate"], key_value(row.get("gate_zero_frac")),
                               key_value(row.get("gate_scale"))) + beta_suffix(row)


def gate_short(row) -> str:
    """A gate label that fits an 80-column table: 'fq' for the flashqla profile at its defaults, 'fq z0/64'
    with its zero-gate fraction and scale where they differ; other profiles by name (GATE_LEGEND)."""
    b = key_value(row.get("beta_regime"))
    beta = f" b:{b}" if b else ""
    if row["gate"] != "flashqla":
        return str(row["gate"]) + beta
    z, s = key_value(row.get("gate_zero_frac")), key_value(row.get("gate_scale"))
    extra = (f"z{float(z):g}" if z is not None else "") + (f"/{float(s):g}" if s is not None else "")
    return "fq" + (" " + extra if extra else "") + beta


GATE_LEGEND = "gate fq: the flashqla profile (zero-gate heads 0.25, g = logsigmoid(x)/16); zF: zero-gate fraction F; /S: scale S"


def file_safe(label: str) -> str:
    """A label usable in a file name: 'flashqla(zero=0.5,/64)' -> 'flashqla_zero_0.5__64_'."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(label))


def backend_label(row) -> str:
    """The backend, with its context-parallel setting for a distributed row: 'flash_qla [cp2 inter]'."""
    return identity.backend_label(row["backend"], key_value(row.get("cp_world_size")), key_value(row.get("cp_mode")))
