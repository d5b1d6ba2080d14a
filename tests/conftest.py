"""Test setup: without a CUDA GPU, GPU kernels run in Triton's interpreter on CPU tensors."""
import os

import numpy as np
import pytest


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


# the automatic choice prices methods at the shipped rates, whatever this machine's cached
# calibration or load (apsp.costs.rates_for)
os.environ.setdefault("APSP_RATES", "shipped")
HAS_CUDA = _cuda_available()
if not HAS_CUDA:
    # must be set before triton.jit decorates any kernel (i.e. before apsp.gpu is imported)
    os.environ.setdefault("TRITON_INTERPRET", "1")


def _triton_importable() -> bool:
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


HAS_TRITON = _triton_importable()


@pytest.fixture
def rng():
    """A fresh generator per test, seeded from the OS so every run draws new graphs."""
    seed = np.random.SeedSequence().entropy
    print(f"rng seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(scope="module")
def blocked_kernels_at_every_n():
    """`apsp.cpu.blocked.solve` at every n on the blocked kernels (below `SMALL_N` it takes a plain
    loop nest), for the tests of a module about those kernels."""
    from apsp.cpu import blocked

    saved = blocked.SMALL_N
    blocked.SMALL_N = 0
    yield
    blocked.SMALL_N = saved
