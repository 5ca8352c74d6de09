"""The options `qlabench compare` and `qlabench gate` share (cli/compare.py), declared once."""

from __future__ import annotations

import typer

from qlabench.cli import options as shared

# Default None: CompareOptions.threshold (analyze/compare/verdict.py), defined once, with the evidence behind it.
_threshold = typer.Option(None, "--threshold", show_default="0.03", help="Relative change that matters (0.03 = 3%; "
                          "docs/GATING.md's power study says why)")
_alpha = typer.Option(0.01, "--alpha", help="Significance level (and 1 - confidence of the CI)")
_min_samples = typer.Option(5, "--min-samples", help="Fewer samples than this on a side: ambiguous")
_fail_on = typer.Option("regression,status,missing", "--fail-on",
                        help="Comma-separated: regression, status, missing, ambiguous, noise (an inconclusive point "
                        "fails: exit 1, not 3), shift (with --drift-correct; '' never fails)")
_accept = typer.Option(False, "--accept-inconclusive", help="Pass (exit 0) where some points are inconclusive (their "
                       "run-to-run noise is above the threshold, or unknown); without it they exit 3")
_control = typer.Option(None, "--control", help="A backend the change leaves alone, timed on both sides: a host "
                        "shift beyond its noise is normalised or refused (--host-shift)")
_host_shift = typer.Option("normalise", "--host-shift", help="normalise: divide every head time by the control's "
                           "shift; refuse: judge no time (exit 2)")
_allow_env = typer.Option(False, "--allow-env-mismatch", help="Compare across GPU models / major versions")
_format = typer.Option("table", "--format", "-f", help="table, markdown, comment (a pull request's comment, "
                       "updated in place: docs/PLUGINS.md) or json")
_top = typer.Option(20, "--top", help="Rows to show in the markdown summary (table: all non-same rows)")
_output = shared.OUTPUT
_all = typer.Option(False, "--all", help="Table: also show 'same' and 'not timed' rows")


_drift = typer.Option(False, "--drift-correct", help="Judge each point relative to the suite-wide shift of the "
                      "head run (shared machines); the shift itself fails only with --fail-on shift")


_method = typer.Option("runs", "--method", help="runs: between-run statistics on per-replicate medians (needs "
                       "replicates); samples: the old per-call method of one run per side (leaves out run-to-run noise)")
_noise_factor = typer.Option(3.0, "--noise-factor", help="c: a point's noise floor is c x its run-to-run SD; "
                             "effective threshold max(threshold, floor)")
_host_floor = typer.Option(0.10, "--host-floor", help="Floor when the baseline comes from another host")
_history = typer.Option(None, "--history", help="Stored A/A runs of this runner pool (files or folders, "
                        "repeatable): they add to each point's run-to-run noise estimate")
