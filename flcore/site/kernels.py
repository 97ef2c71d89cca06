"""Warm notebook kernels: a started kernel reused from one artifact notebook to the next.

Starting a kernel and importing torch, flcore, matplotlib and seaborn in it costs about 6 s
of CPU on the 2-core machine the book is timed on, more than most artifact notebooks spend
on their own work, and the book executes 110 of them.  So each notebook worker keeps one
kernel, which papermill executes every notebook of the worker in (``execute_notebook(...,
km=...)``), and before each notebook the kernel is brought back to a fresh kernel's state
as far as a notebook can see it (:data:`RESET_CODE`): the user namespace emptied and a new
history session begun, so the page's cells are numbered from 1 as in a fresh kernel
(IPython's ``reset(new_session=True)``), open figures closed, the working directory and
``os.environ`` restored to the kernel's start.  Imported modules stay (that is the saving); flcore's module-level state
is registries and caches of the package's own files, the same for every notebook, and the
book's style is set by every notebook's first cell.

A kernel is replaced when it died (a notebook that crashed it fails alone) or when the
notebook would need another environment: the working directory or one of
:data:`KERNEL_ENVIRONMENT` ($FLCORE_STORE, the round cap, the thread counts) differs.
``flcore reproduce --fresh-kernels`` starts a new kernel for every notebook, as Jupyter
would.  Every kernel flcore starts, warm or for one notebook, discards its own log
(ipykernel's messages, not the notebook's output), so Ctrl-C prints one line.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
from typing import Any

#: Environment variables a kernel is started with that a notebook's result depends on.
KERNEL_ENVIRONMENT = ("FLCORE_STORE", "FLCORE_MAX_ROUNDS", "FLCORE_CACHE", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

#: Run in a started kernel, outside the notebook's history: what a reset restores (kept on
#: the ``os`` module, which ``%reset`` leaves alone).
SNAPSHOT_CODE = """\
import os as _os
_os._flcore_kernel_start = (_os.getcwd(), dict(_os.environ))
del _os
"""
#: Run in the kernel, outside the notebook's history, before each notebook but the first.
RESET_CODE = """\
get_ipython().reset(new_session=True)
import os as _os, sys as _sys
_os.chdir(_os._flcore_kernel_start[0])
_os.environ.clear()
_os.environ.update(_os._flcore_kernel_start[1])
if "matplotlib.pyplot" in _sys.modules:
    _sys.modules["matplotlib.pyplot"].close("all")
del _os, _sys
"""

def run_sync(function):
    """``function`` (a coroutine function of jupyter_client) called synchronously.  Jupyter
    is imported here, not with the module: it comes with the ``book`` extra only."""
    from jupyter_core.utils import run_sync as jupyter_run_sync

    return jupyter_run_sync(function)


#: Seconds a kernel may take to start or to reset.
START_TIMEOUT_S = 120


class WarmKernel:
    """One kernel, started on first use and reused while its environment matches."""

    def __init__(self, kernel_name: str = "python3"):
        self.kernel_name = kernel_name
        self._manager = None
        self._key: tuple | None = None

    def manager(self, cwd: str) -> Any:
        """The kernel manager to execute the next notebook in, reset to a fresh kernel's
        state; a new kernel when there was none, it died, or the environment changed."""
        key = (cwd, tuple((name, os.environ.get(name)) for name in KERNEL_ENVIRONMENT))
        if self._manager is not None and (key != self._key or not self.alive()):
            self.shutdown()
        if self._manager is not None and not self._run(RESET_CODE):
            self.shutdown()
        if self._manager is None:
            self._start(cwd, key)
        return self._manager

    def _start(self, cwd: str, key: tuple) -> None:
        # an asynchronous manager, as nbclient makes for itself: with a blocking client
        # nbclient's wait for output would never notice that the kernel died
        from jupyter_client import AsyncKernelManager

        manager = AsyncKernelManager(kernel_name=self.kernel_name)
        # the kernel's own log (not the notebook's output, which comes over its channels)
        # stays off the terminal: after Ctrl-C it would print tracebacks of closed sockets
        run_sync(manager.start_kernel)(cwd=cwd, env=dict(os.environ), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        self._manager, self._key = manager, key
        if not self._run(SNAPSHOT_CODE):
            self.shutdown()
            raise RuntimeError("the notebook kernel did not start")

    def _run(self, code: str) -> bool:
        """Whether the kernel ran ``code`` (outside its history) without an error."""
        async def run() -> bool:
            client = self._manager.client()
            client.start_channels()
            try:
                await client.wait_for_ready(timeout=START_TIMEOUT_S)
                reply = await client.execute_interactive(code, store_history=False, timeout=START_TIMEOUT_S,
                                                         output_hook=lambda _msg: None)
                return reply["content"].get("status") == "ok"
            finally:
                client.stop_channels()

        try:
            return run_sync(run)()
        except Exception:  # noqa: BLE001 - a kernel that cannot take it is replaced
            return False

    def alive(self) -> bool:
        return self._manager is not None and bool(run_sync(self._manager.is_alive)())

    def shutdown(self) -> None:
        """Stop the kernel (if any); the next :meth:`manager` starts a new one."""
        manager, self._manager, self._key = self._manager, None, None
        if manager is not None:
            with contextlib.suppress(Exception):
                run_sync(manager.shutdown_kernel)(now=True)


_PROCESS_KERNEL: WarmKernel | None = None


def process_kernel() -> WarmKernel:
    """This process's warm kernel (a notebook worker's), stopped when the process exits."""
    global _PROCESS_KERNEL
    if _PROCESS_KERNEL is None:
        _PROCESS_KERNEL = WarmKernel()
        atexit.register(_PROCESS_KERNEL.shutdown)
    return _PROCESS_KERNEL
