"""What an output may never replace: a results file (by its footer, whatever its name), any other parquet file
but a table of the output's own kind, the catalog (by name or by content), an input of the command."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from qlabench.store.files import write_frame, write_rows
from qlabench.store.kernels import KERNELS_SCHEMA, write_kernels
from qlabench.store.overwrite import KERNELS, is_catalog, overwrite_refusal, parquet_kind

CATALOG = 'format = 1\n[[entry]]\npath = "run"\nkind = "kernel-timings"\nstatus = "current"\ndate = 2026-12-01\n' \
          'question = "q"\nstack = {}\n'


def test_a_results_file_is_known_by_its_footer_whatever_its_name(tmp_path, make_row):
    f = write_rows(tmp_path / "notes.md", [make_row()])  # a results file that does not say so by its name
    assert parquet_kind(f) == "results"
    for writes in ("text", KERNELS):
        assert "is a results file" in overwrite_refusal(f, writes=writes)
    plain = tmp_path / "x.parquet"
    plain.write_text("not parquet at all\n")
    assert parquet_kind(plain) is None and overwrite_refusal(plain) is None  # an ordinary file may be replaced


def test_a_table_of_the_outputs_own_kind_may_be_replaced_any_other_parquet_not(tmp_path):
    k = write_kernels(tmp_path / "k.parquet", [KERNELS_SCHEMA.empty_table()])
    assert parquet_kind(k) == KERNELS and overwrite_refusal(k, writes=KERNELS) is None
    assert "is a qlabench kernels table; this output is text" in overwrite_refusal(k)
    d = write_frame(tmp_path / "d.parquet", pd.DataFrame({"a": [1]}), "selfbench-medians")
    assert "is a qlabench selfbench-medians table" in overwrite_refusal(d, writes=KERNELS)
    pq.write_table(pa.table({"a": [1]}), tmp_path / "f.parquet")
    assert "a parquet file qlabench cannot place" in overwrite_refusal(tmp_path / "f.parquet")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1" + b"\0" * 10)
    assert parquet_kind(broken) == "unknown" and overwrite_refusal(broken, writes=KERNELS) is not None


def test_the_catalog_is_known_by_its_name_in_results_or_by_its_content(tmp_path):
    (tmp_path / "results").mkdir()
    named = tmp_path / "results" / "catalog.toml"
    named.write_text("format = 1\n")  # a broken catalog is still the catalog
    shaped = tmp_path / "copy.toml"
    shaped.write_text(CATALOG)
    suite = tmp_path / "suite.toml"
    suite.write_text('name = "s"\n[sweep]\nbackend = ["fla"]\n')
    assert is_catalog(named) and is_catalog(shaped) and not is_catalog(suite)
    assert "is the results catalog" in overwrite_refusal(named) and "is the results catalog" in overwrite_refusal(shaped)
    assert overwrite_refusal(suite) is None


def test_an_input_of_the_command_is_refused_by_any_path_to_it(tmp_path, make_row):
    gate = tmp_path / "gate.toml"
    gate.write_text("gate_zero_frac = 0.5\n")
    link = tmp_path / "link.toml"
    link.symlink_to(gate)
    assert "is an input of this command" in overwrite_refusal(link, inputs=[gate])
    assert "is an input of this command" in overwrite_refusal(tmp_path / "." / "gate.toml", inputs=[gate])
    assert overwrite_refusal(gate, inputs=[tmp_path / "other.toml"]) is None


def test_a_new_table_inside_a_results_folder_read_is_refused_text_beside_it_is_not(tmp_path, make_row):
    run = tmp_path / "run"
    write_rows(run / "r.parquet", [make_row()])
    assert "lies inside" in overwrite_refusal(run / "k.parquet", inputs=[run], writes=KERNELS)
    assert overwrite_refusal(tmp_path / "k.parquet", inputs=[run], writes=KERNELS) is None
    assert overwrite_refusal(run / "notes.md", inputs=[run]) is None
