"""Test setup: without a CUDA GPU, GPU kernels run in Triton's interpreter on CPU tensors."""
import os
import zlib

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


SEED_ENV = "APSP_TEST_SEED"
RUN_SEED = pytest.StashKey[int]()


#: the fast tier (``--fast``): one case of a parametrized test (the middle one) and at most this many
#: examples of a hypothesis test; tests marked slow or mpi stay out
FAST_EXAMPLES = 5


def pytest_addoption(parser):
    parser.addoption("--seed", type=int, default=None,
                     help=f"the run's random seed, to replay a failure with the seed it printed "
                          f"(default: ${SEED_ENV}, else a fresh one each run)")
    parser.addoption("--fast", action="store_true",
                     help=f"the fast tier: every test function but those marked slow or mpi, on one "
                          f"of its parameter cases and at most {FAST_EXAMPLES} hypothesis examples")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("fast"):
        return
    cases: dict[tuple, list] = {}
    for item in items:
        if not any(item.get_closest_marker(name) for name in ("slow", "mpi")):
            cases.setdefault((item.path, item.cls, getattr(item, "originalname", item.name)), []).append(item)
    kept = {id(group[len(group) // 2]) for group in cases.values()}
    config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
    items[:] = [item for item in items if id(item) in kept]
    for item in items:
        _cap_examples(getattr(item, "obj", None))


def _cap_examples(test) -> None:
    """At most `FAST_EXAMPLES` examples for a hypothesis test, whatever its own settings say (its
    settings object is where hypothesis reads them when the test runs)."""
    test = getattr(test, "__func__", test)
    if not getattr(test, "is_hypothesis_test", False):
        return
    from hypothesis import settings

    own = getattr(test, "_hypothesis_internal_use_settings", None) or settings()
    if own.max_examples > FAST_EXAMPLES:
        test._hypothesis_internal_use_settings = settings(own, max_examples=FAST_EXAMPLES)


def pytest_configure(config):
    seed = config.getoption("seed")
    if seed is None:  # a pytest-xdist worker: the seed its controller drew
        seed = getattr(config, "workerinput", {}).get(SEED_ENV)
    if seed is None:
        seed = int(os.environ.get(SEED_ENV) or np.random.SeedSequence().entropy % 2 ** 32)
    config.stash[RUN_SEED] = seed


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist's controller: every worker draws from the run's one seed (the header's)."""
    node.workerinput[SEED_ENV] = node.config.stash[RUN_SEED]


def pytest_report_header(config):
    return f"random seed: {config.stash[RUN_SEED]} (replay with --seed {config.stash[RUN_SEED]})"


def seed_of(config, nodeid: str) -> int:
    """A test's own seed: from the run's seed and the test's id, so that it is the same whether the
    test runs alone or among others."""
    entropy = [config.stash[RUN_SEED], zlib.crc32(nodeid.encode())]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


@pytest.fixture
def random_seed(request) -> int:
    """This test's seed (an int below 2**32); a failure reports how to replay it."""
    return seed_of(request.config, request.node.nodeid)


@pytest.fixture
def rng(random_seed):
    """A generator per test, seeded by `random_seed`: new graphs every run, any run replayable."""
    return np.random.default_rng(random_seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.failed and "random_seed" in getattr(item, "fixturenames", ()):
        run_seed = item.config.stash[RUN_SEED]
        report.sections.append((
            "random seed", f"this test drew from seed {seed_of(item.config, item.nodeid)}; replay it with\n"
                           f"  python -m pytest --seed {run_seed} '{item.nodeid}'"))


@pytest.fixture(scope="module")
def blocked_kernels_at_every_n():
    """`apsp.cpu.blocked.solve` at every n on the blocked kernels (below `SMALL_N` it takes a plain
    loop nest), for the tests of a module about those kernels."""
    from apsp.cpu import blocked

    saved = blocked.SMALL_N
    blocked.SMALL_N = 0
    yield
    blocked.SMALL_N = saved
