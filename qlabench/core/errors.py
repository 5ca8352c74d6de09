"""Project errors. Library code raises these; only the CLI turns them into a message and an exit code.

Every error a user can cause (a bad suite, option, point or file) is a `QlabenchError`; the CLI prints
it as one line, `error: ...`, and exits with code 2 (cli/app.py). Anything else is a bug and keeps its
traceback. Errors that replace a former bare `ValueError` also subclass `ValueError`, so callers that
catch `ValueError` keep working.
"""

from __future__ import annotations


class QlabenchError(Exception):
    """Base class for every error qlabench raises on purpose."""


class SpecError(QlabenchError):
    """A suite file is malformed: names the file and the offending key."""

    def __init__(self, path: str, key: str, message: str):
        self.path = path
        self.key = key
        self.message = message
        super().__init__(f"{path}: {key}: {message}")


class StoreError(QlabenchError):
    """A results file or folder cannot be read or written."""


class EvidenceError(StoreError):
    """Result files that contradict each other (one run id, two different rows of a point): no view can
    answer from them without choosing one silently (analyze/evidence/runs.py)."""


class SchemaError(StoreError, ValueError):
    """A file is not a qlabench results file, or its schema is newer than this qlabench."""


class BackendError(QlabenchError):
    """A backend name is unknown, or a backend was asked for something it declared it cannot do."""


class PointError(QlabenchError, ValueError):
    """A benchmark point (or a model's head configuration at a TP degree) that cannot exist.

    `problems`: (field, problem) pairs where the point's validation found them, so a suite can name the
    axis that made the point."""

    def __init__(self, message: str, problems: list[tuple[str, str]] | None = None):
        super().__init__(message)
        self.problems = list(problems or [])


class RowError(QlabenchError, ValueError):
    """A result row whose fields contradict each other (an ok row without a time, an error without a reason)."""


class MeasureError(QlabenchError, ValueError):
    """Measurements that cannot be summarised: no samples, a non-positive time, unreadable profiler output."""


class ConfigError(QlabenchError, ValueError):
    """Run options that cannot be honoured: they contradict each other, or do not suit this machine."""


class DeviceError(ConfigError):
    """A device is asked for that this machine does not have (e.g. cuda without CUDA)."""


class TimerError(ConfigError):
    """An unknown timer name, or a timer that does not suit the device (graph and events need CUDA)."""


class SMBudgetError(ConfigError):
    """An SM budget (`sm_budget`) the run cannot honour: no CUDA, no green contexts in this torch or driver,
    or a count the device cannot grant (docs/SM-BUDGET.md)."""


class ResultsWriteError(StoreError):
    """Rows could not be written once a sweep had started (disk full, folder gone read-only).

    The sweep stops at once; the message says what was kept and where. Exit code 1, not 2: the input
    was fine, the run failed (a problem found before the first point is a plain StoreError, exit 2).
    """

    exit_code = 1


class RunIncompleteError(QlabenchError):
    """A run that had to measure every point (a gate) did not; exit code 1."""

    exit_code = 1


class SweepInterrupted(QlabenchError):
    """A sweep stopped by Ctrl-C or SIGTERM after its rows so far were written and compacted; exit 130."""

    exit_code = 130
