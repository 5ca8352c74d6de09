"""Project errors. Library code raises these; only the CLI turns them into a message and an exit code."""

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


class BackendError(QlabenchError):
    """A backend name is unknown, or a backend was asked for something it declared it cannot do."""
