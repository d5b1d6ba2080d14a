"""GPU backend (Triton). The only package of apsp that imports torch and triton.

Under ``TRITON_INTERPRET=1`` the same kernels run on CPU tensors (used by the
test suite on machines without a GPU).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace


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


def nvidia_driver() -> bool:
    """True when an NVIDIA driver is loaded here (its control node exists): what makes starting CUDA
    on a background thread worth it (`apsp.cli`)."""
    return os.path.exists("/dev/nvidiactl")


def _cuda_device_count() -> int:
    """CUDA devices visible to this process (through the driver while torch is not loaded)."""
    if torch_free():
        from . import cuda

        return cuda.device_count()
    import torch

    return int(torch.cuda.device_count())


#: `device_status`'s answer where only Triton's interpreter runs the kernels
INTERPRETER = "Triton interpreter on the CPU (TRITON_INTERPRET=1)"


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
        return True, INTERPRETER
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
    return MachineFacts(ok, why, ok and "interpreter" in why, 0, None).available(explicit)


def rank_device(local_rank: int, count: int, interpreted: bool) -> str | None:
    """The device of the process ``local_rank`` of its node: ``cuda:<local rank mod count>``, so that
    the ranks of one host spread over its GPUs (the distributed FW and statistics alike); "cpu" where
    only the interpreter runs the kernels; None without a GPU.

    >>> rank_device(3, 2, False), rank_device(1, 0, True), rank_device(0, 0, False)
    ('cuda:1', 'cpu', None)
    """
    if count:
        return f"cuda:{local_rank % count}"
    return "cpu" if interpreted else None


#: the launchers' names for a process's rank on its node (Open MPI, MPICH/Hydra, Slurm, PMIx)
LOCAL_RANK_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMIX_LOCAL_RANK")


def local_rank() -> int:
    """This process's rank on its node as its launcher tells it (0 outside MPI)."""
    for name in LOCAL_RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


@dataclass(frozen=True)
class MachineFacts:
    """What this process may run GPU work on, asked once (`machine_facts`) and carried by the plan,
    so that nothing after it probes a device again."""

    #: the GPU backend can run here (a CUDA device, or Triton's interpreter)
    usable: bool
    #: the device's name, or why the backend cannot run
    why: str
    #: kernels run in Triton's interpreter on CPU tensors (no CUDA device)
    interpreted: bool
    #: CUDA devices visible to this process
    count: int
    #: this process's device ("cuda:k": asked for, or its node rank's GPU; "cpu" interpreted), else None
    device: str | None
    #: free and total bytes of ``device`` (the host's available RAM interpreted); None until `measured`
    free: int | None = None
    total: int | None = None

    @property
    def name(self) -> str | None:
        """The GPU's name (None without a usable one)."""
        return self.why if self.usable else None

    def available(self, explicit: bool = False) -> tuple[bool, str]:
        """`gpu_available`'s verdict from these facts: the interpreter serves only an explicit request."""
        if self.usable and not explicit and self.interpreted:
            return False, "only the Triton interpreter is available (no CUDA device)"
        return self.usable, self.why

    def measured(self) -> "MachineFacts":
        """These facts with the device's free and total memory read (once: already read, unchanged)."""
        if self.free is not None or not self.usable:
            return self
        free, total = device_memory(self.device)
        return replace(self, free=int(free), total=int(total))


def machine_facts(device=None, rank: int | None = None) -> MachineFacts:
    """The one device question of a plan: usable or why not, interpreted, how many CUDA devices, and
    this process's device: ``device`` when asked for, else `rank_device` of ``rank`` (default
    `local_rank`). Free memory is read by `MachineFacts.measured`, only where a GPU will run."""
    usable, why = device_status()
    interpreted = usable and "interpreter" in why
    count = _cuda_device_count() if usable and not interpreted else 0
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"  # torch's meaning of a bare index
    elif device is not None and not isinstance(device, str):
        device = str(device)  # a torch.device
    if device is None and usable:
        device = rank_device(local_rank() if rank is None else rank, count, interpreted)
    return MachineFacts(usable, why, interpreted, count, device)


def default_device():
    """The device kernels run on: the current CUDA device, or the CPU under the interpreter."""
    import torch

    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if interpreting():
        return torch.device("cpu")
    from ..errors import BackendUnavailableError

    raise BackendUnavailableError("no CUDA device is visible to torch (and TRITON_INTERPRET is not set)")


def make_current(device) -> None:
    """Make the torch ``device`` the current CUDA device where it is another one: Triton launches
    its kernels on the current device (a rank's own GPU, ``cuda:1``, would otherwise get them on 0)."""
    import torch

    if device.type == "cuda" and device.index is not None and device.index != torch.cuda.current_device():
        torch.cuda.set_device(device)


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
