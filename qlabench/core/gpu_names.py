"""GPU model names as a user types them and as a device reports them, matched one way everywhere.

A device reports 'NVIDIA GeForce RTX 5090' or 'NVIDIA RTX PRO 6000 Blackwell Server Edition'; a user types
`--gpu "RTX 5090"`, `--published GB200` or `pro6000`. A name is read as its words, lower-cased, with letters
and digits apart ('H200' -> h 200, 'pro6000' -> pro 6000) and the vendor's words left out; a typed name
names a GPU model when every one of its words is among the model's. `advise --gpu` picks the rows of the GPU
asked about and `report --published` / advise's published section pick FlashQLA's table with it.
"""

from __future__ import annotations

import re

# Words that say who made the card, not which card it is: 'NVIDIA H200' and 'H200' are one model.
VENDOR_WORDS = frozenset({"nvidia", "geforce"})
_WORD = re.compile(r"[a-z]+|\d+")


def gpu_words(name: str) -> tuple[str, ...]:
    """'NVIDIA GeForce RTX 5090' -> ('rtx', '5090'); 'pro6000' -> ('pro', '6000')."""
    return tuple(w for w in _WORD.findall(str(name).lower()) if w not in VENDOR_WORDS)


def names_gpu(typed: str, gpu: str) -> bool:
    """Whether `typed` names the GPU model `gpu`: each of its words is one of the model's ('RTX 5090' names
    'NVIDIA GeForce RTX 5090'; 'H200' does not name 'NVIDIA GB200'). A name of no words names nothing."""
    words = set(gpu_words(typed))
    return bool(words) and words <= set(gpu_words(gpu))


def same_gpu(a: str, b: str) -> bool:
    """Whether two reported names are one GPU model ('NVIDIA H200' and 'H200'; not 'NVIDIA H200 NVL')."""
    return bool(gpu_words(a)) and set(gpu_words(a)) == set(gpu_words(b))


def short_gpu_name(gpu: str) -> str:
    """The model without the vendor's words, as it is printed: 'NVIDIA GeForce RTX 5090' -> 'RTX 5090'."""
    return " ".join(w for w in str(gpu).split() if w.lower() not in VENDOR_WORDS) or str(gpu)
