"""What every command does first: announce and count compiles, the ``startup`` stage, and for a solve
its imports beside the GPU's start."""
from __future__ import annotations

import contextlib
import os
import sys
import time

from ..gpu import nvidia_driver  # the device questions only: os and sys
from ..methods import METHOD


def start_command(args, solve: bool = False, paths: bool = False) -> dict:
    """Announce compiles (unless quiet) and count them (`apsp.jit`); ``{"startup": seconds}`` so that
    a profile accounts for the wall time: since ``import apsp`` began, plus the interpreter's own
    start before it, counted as the CPU time the process had used by then (that start is CPU-bound
    work; a wait before exec uses none). Not the process's age: that counts whatever ran before
    exec, so ``bash -c 'sleep 3 && apsp ...'`` would report 3 s more.

    ``solve``: first import what every solve needs, beside the GPU's start where one may be used;
    ``paths``: the solve returns next hops."""
    if solve:
        # first: torch's import and CUDA's start are the longest chain; our imports and the read
        # (whose kernels release the GIL) run beside it. Under "auto" only on machines with an
        # NVIDIA device (else the import would only take CPU from the reader)
        if args.backend == "gpu" or (args.backend == "auto" and nvidia_driver()):
            _gpu_start_in_background(args, paths)
        from .. import api, io  # noqa: F401  (numpy, numba: imported here, not inside "read")
    from .. import _CPU_BEFORE_IMPORT, _IMPORT_STARTED
    from ..jit import notify_compiles

    notify_compiles(None if getattr(args, "quiet", False) else sys.stderr)
    return {"startup": time.perf_counter() - _IMPORT_STARTED + _CPU_BEFORE_IMPORT}


def _gpu_start_in_background(args, paths: bool) -> None:
    """Start CUDA, and torch's import (for what only its engines do: ``paths``, BFS, nested dissection)
    or only Triton (a distances-only FW solve runs on the CUDA driver without torch:
    `apsp.plan.gpu_runtime`), on a thread while the main thread imports numba and reads the input.
    The solve's backend choice then finds them done, or waits for the rest: its "setup" stage is
    only that wait. A large input: also pin the result's staging buffers meanwhile (later, the
    driver's lock would make the solve wait for it)."""
    import importlib.util
    import threading

    if importlib.util.find_spec("torch") is None:
        return
    # the automatic choice and the methods whose GPU solve runs on the CUDA driver need no torch
    torch_needed = paths or (args.method != "auto" and not METHOD[args.method].driver_runtime)
    try:
        large_input = os.stat(args.input).st_size >= LARGE_INPUT_BYTES
    except (OSError, TypeError):  # no file (yet): the read reports it
        large_input = False

    def start():
        with contextlib.suppress(Exception):  # the solve reports what is wrong, in its own words
            from ..plan import gpu_available

            if gpu_available()[0]:
                from ..gpu.warmup import warm_up

                warm_up(torch_needed, pin_staging=large_input)

    if nvidia_driver():
        from ..gpu.warmup import start_cuda_driver

        threading.Thread(target=start_cuda_driver, name="apsp-cuda-init", daemon=True).start()
    threading.Thread(target=start, name="apsp-gpu-start", daemon=True).start()


#: an input file this large will likely have a result large enough for the staged copy
LARGE_INPUT_BYTES = 16 << 20
