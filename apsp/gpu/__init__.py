"""GPU backend (Triton). The only package of apsp that imports torch and triton.

Under ``TRITON_INTERPRET=1`` the same kernels run on CPU tensors (used by the
test suite on machines without a GPU).
"""
from __future__ import annotations

import os
import sys


def interpreting() -> bool:
    """True when Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


#: on Linux a GPU torch could use shows one of these (NVIDIA, NVIDIA under WSL, AMD ROCm)
GPU_DEVICE_NODES = ("/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg", "/dev/kfd")


def no_gpu_driver() -> bool:
    """True when this Linux machine has no GPU driver at all: then the answer needs no torch,
    whose import costs seconds (on other systems torch is asked)."""
    return sys.platform.startswith("linux") and not any(map(os.path.exists, GPU_DEVICE_NODES))


def torch_free() -> bool:
    """True while torch is not imported and no interpreter runs the kernels: GPU questions are then
    answered by the CUDA driver (`apsp.gpu.cuda`) instead of importing torch for them."""
    return "torch" not in sys.modules and not interpreting()


def device_status() -> tuple[bool, str]:
    """(usable, why): whether the GPU backend can run, and a reason when it cannot."""
    if no_gpu_driver() and not interpreting():
        return False, "no GPU driver on this machine (none of " + ", ".join(GPU_DEVICE_NODES) + ")"
    import importlib.util

    if torch_free() and importlib.util.find_spec("torch") and importlib.util.find_spec("triton"):
        from . import cuda

        if cuda.device_count():  # torch would see the same devices, seconds later
            return True, cuda.device_name()
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as exc:
        return False, f"{exc.name or exc} is not installed; install with pip install 'apsp[gpu]'"
    if torch.cuda.is_available():
        return True, torch.cuda.get_device_name(0)
    if interpreting():
        return True, "Triton interpreter on the CPU (TRITON_INTERPRET=1)"
    return False, "torch sees no CUDA device"


def gpu_available(explicit: bool = False) -> tuple[bool, str]:
    """Whether the GPU backend may run here, and why not: the one rule for "is there a GPU"
    (`device_status`, read by the plan and the cost model).

    A CUDA device always counts. The Triton interpreter (``TRITON_INTERPRET=1``,
    kernels on CPU tensors) counts only when the GPU backend was asked for
    (``explicit``: ``backend="gpu"``); automatic choices never pick it, so the
    automatic method and backend rules are the same under test as for users.
    """
    ok, why = device_status()
    if ok and not explicit and "interpreter" in why:
        return False, "only the Triton interpreter is available (no CUDA device)"
    return ok, why


def default_device():
    """The device kernels run on: the current CUDA device, or the CPU under the interpreter."""
    import torch

    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if interpreting():
        return torch.device("cpu")
    from ..errors import BackendUnavailableError

    raise BackendUnavailableError("no CUDA device is visible to torch (and TRITON_INTERPRET is not set)")


def device_memory(device=None) -> tuple[int, int]:
    """(free, total) bytes of the GPU; under the interpreter, the host's available RAM."""
    if torch_free() and device in (None, 0, "cuda", "cuda:0"):
        from . import cuda

        return cuda.memory_info()
    import torch

    dev = torch.device(device) if device is not None else default_device()
    if dev.type == "cuda":
        free, total = torch.cuda.mem_get_info(dev)
        return int(free), int(total)
    from ..sizes import host_available

    avail = host_available()
    return avail, avail


def give_back_memory(error: BaseException | None = None) -> None:
    """Return to the driver the device memory a finished solve leaves behind: torch's cached
    blocks and the CUDA driver runtime's pool. After a failure (``error``), the solver's frames,
    which its traceback keeps alive with every tensor they hold, are cleared first. Without it a
    retry, or the next call, would plan against a card that looks full."""
    if error is not None:
        import gc
        import traceback

        traceback.clear_frames(error.__traceback__)
        gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    cuda = sys.modules.get(__name__ + ".cuda")
    if cuda is not None:
        cuda.trim_pool()
