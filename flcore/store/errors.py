"""Errors of the run store a user can act on; each message names the file and the fix."""
from __future__ import annotations


class StoreError(RuntimeError):
    """Base class of the run store's user-facing errors."""


class DamagedRunError(StoreError):
    """A run's record is damaged and could not be repaired from its checkpoint.

    ``problems`` lists ``"<file>: <what is wrong>"`` lines; the message ends with the fix.
    """

    def __init__(self, run_dir: str, problems: list[str], fix: str):
        self.run_dir = run_dir
        self.problems = list(problems)
        self.fix = fix
        super().__init__(f"damaged run record {run_dir}: {'; '.join(self.problems)}; fix: {fix}")


class UnsafeFileError(StoreError):
    """A ``.pt`` file holds something other than tensors and plain containers (it may
    carry code) or cannot be read as one; it is never unpickled."""


class RunBusyError(StoreError):
    """Another process is training the same run (it holds the run's lock)."""
