"""The GPU's start, on a thread beside a command's imports and read (`apsp.cli`): the CUDA driver
and context, and the kernels' modules (Triton's, and torch where the method needs it), so the
solve finds them done. Apart from `apsp.gpu`'s device questions so that asking whether a GPU is
usable never imports a solver."""
from __future__ import annotations

import contextlib

from . import torch_free


def warm_up(torch_needed: bool = True, pin_staging: bool = False) -> None:
    """Start CUDA (the context, as a solve's first allocation would) and import the FW kernels'
    module, so a solve that follows finds both done. Does nothing without a CUDA device.
    ``torch_needed`` False: the torch-free path (`apsp.gpu.fw.DriverRuntime`) only; ``pin_staging``:
    then also pin the staging buffers of large results (`apsp.gpu.transfer`), on a thread of
    its own that nobody waits for."""
    if not torch_needed and torch_free():
        from . import cuda

        cuda.start()
        from . import fw

        fw.prepare()
        if pin_staging:
            from .transfer import stage_ahead

            stage_ahead()
        return
    import torch

    if torch.cuda.is_available():
        torch.zeros(1, device="cuda")
        from . import fw  # noqa: F401


def start_cuda_driver() -> None:
    """Initialise the CUDA driver and device 0's primary context through the driver API. ctypes
    calls release the GIL, so this runs beside torch's import (which holds it for seconds);
    torch's runtime then finds the primary context made instead of creating it after the import."""
    from . import cuda

    # no driver or no device: torch reports it in its own words
    with contextlib.suppress(OSError, AttributeError, cuda.CudaError):
        cuda.start()  # the context is held until exit
