"""Numba compilation as the user sees it: a notice while it runs, its seconds as a stage, a cache dir.

Numba compiles a kernel the first time it meets a new specialisation (dtype, variant) and keeps
the machine code in its on-disk cache; later runs load it in milliseconds. Compiling takes
seconds, so the CLI says so on stderr while it happens (`notify_compiles`), and profiles book
the seconds apart from the stage they fell in (`compile_seconds`, `compiling`).

Numba's thread setting is read here too (`thread_count`): the solvers and the readers split
their work by it.

Only real compiles count: Numba fires its ``numba:compile`` event after a cache miss, never
for a cache hit. Nested compiles (a kernel compiling the kernels it calls) count once.
"""
from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TextIO, TypedDict

_clock = {"installed": False, "depth": 0, "start": 0.0, "total": 0.0, "outside": 0.0}


class _Notice(TypedDict):
    stream: TextIO | None  # where the CLI's notice goes; None: no notice
    printed: set[str]  # the kinds ("CPU", "GPU") announced so far
    label: str


_notice: _Notice = {"stream": None, "printed": set(), "label": "CPU kernels"}


def _install() -> None:
    """Listen to Numba's compile events (once per process; imports numba)."""
    if _clock["installed"]:
        return
    use_writable_cache_dir()
    from numba.core import event

    class _CompileListener(event.Listener):
        # Numba compiles under one global lock, so depth needs no lock of its own
        def on_start(self, ev):
            if _clock["depth"] == 0:
                _clock["start"] = time.perf_counter()
                _announce()
            _clock["depth"] += 1

        def on_end(self, ev):
            _clock["depth"] -= 1
            if _clock["depth"] == 0:
                _clock["total"] += time.perf_counter() - _clock["start"]

    event.register("numba:compile", _CompileListener())
    _clock["installed"] = True


def _answer_numbas_blas_probe() -> None:
    """Spare the command's first kernel load Numba's BLAS probe, which imports ``scipy.linalg`` (70 ms).

    Numba's first compile or cache load imports ``numba.np.arraymath``, whose import probes for a
    BLAS by importing ``scipy.linalg.cython_blas``; apsp's kernels call no BLAS, and scipy, a
    dependency, would answer yes. So the probe alone is answered yes without the import; every
    later call (a ``np.dot`` in somebody's kernel) runs Numba's own check, which imports scipy's
    BLAS then. Nothing changes when arraymath is already loaded or Numba names these otherwise.
    Only the ``apsp`` command does this (`notify_compiles`), in its own process: a program that
    imports apsp keeps Numba's functions as they are and pays the import.
    """
    if "numba.np.arraymath" in sys.modules:
        return
    try:
        from numba.np import linalg
    except ImportError:
        return
    numbas_check = getattr(linalg, "ensure_blas", None)
    if numbas_check is None or getattr(numbas_check, "answers_probe", False):
        return

    def ensure_blas():  # None for arraymath's import-time probe
        return None if sys._getframe(1).f_code.co_name == "_check_blas" else numbas_check()

    setattr(ensure_blas, "answers_probe", True)  # the mark a second call looks for (above)
    linalg.ensure_blas = ensure_blas


def _announce() -> None:
    """The notice, once per process and label (CPU and GPU kernels compile in one first run)."""
    stream = _notice["stream"]
    kind = _notice["label"].split(" ", 1)[0]
    if stream is None or kind in _notice["printed"]:
        return
    _notice["printed"].add(kind)
    with suppress(ValueError):  # the stream was closed since (a CLI run inside a longer process)
        print(f"apsp: compiling {_notice['label']} (first run only; cached for later runs)...",
              file=stream, flush=True)


@contextmanager
def compile_outside_numba(label: str):
    """A compile by another compiler (Triton's, for the GPU kernels) that the caller waits for:
    announced and counted like Numba's. Compiles on other threads (a warm-up beside the read)
    keep the user waiting for nothing and count for nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with compiling(label):
        _announce()
    start = time.perf_counter()
    try:
        yield
    finally:
        _clock["outside"] += time.perf_counter() - start


def compile_seconds() -> float:
    """Seconds this process has spent compiling with Numba (listening starts at the first call), and
    waiting for other compilers (`compile_outside_numba`), so far."""
    _install()
    total = _clock["total"] + _clock["outside"]
    if _clock["depth"]:  # a compile under way in another thread: count it so far
        total += time.perf_counter() - _clock["start"]
    return total


def notify_compiles(stream=sys.stderr) -> None:
    """Print one line on ``stream`` when the first compile of this process starts (the CLI's notice).

    The command's own process only: it also answers Numba's BLAS probe (`_answer_numbas_blas_probe`)."""
    _notice["stream"] = stream
    _install()
    _answer_numbas_blas_probe()


@contextmanager
def compiling(label: str):
    """Name what a compile inside this block is for, e.g. ``"CPU kernels for int32"``."""
    before = _notice["label"]
    _notice["label"] = label
    try:
        yield
    finally:
        _notice["label"] = before


def thread_count() -> int:
    """Threads a split of CPU work uses, the solvers' (`apsp.cpu.threads`) and the readers' and
    writers' (`apsp.io`) alike: Numba's setting (``NUMBA_NUM_THREADS``, `numba.set_num_threads`)."""
    import numba

    return max(1, numba.get_num_threads())


def book_compile(timings: dict, seconds: float, stages) -> dict:
    """Move ``seconds`` of compiling out of the given stages into ``timings["compile"]``.

    ``stages``: a stage name, or several, of which the one that took longest gives first
    (a first run's compile dwarfs the work around it, wherever a solver's own clock put it).
    The sum of all stages does not change.
    """
    names = [stages] if isinstance(stages, str) else stages
    for name in sorted(filter(timings.__contains__, names), key=timings.__getitem__, reverse=True):
        if seconds <= 0:
            break
        take = min(seconds, timings[name])
        timings[name] -= take
        timings["compile"] = timings.get("compile", 0.0) + take
        seconds -= take
    return timings


def _writable(path: Path) -> bool:
    """Whether Numba could write a cache file in ``path`` (made if missing): the directory, or
    its nearest existing parent, is writable for us."""
    existing = next(filter(Path.exists, (path, *path.parents)), None)
    return existing is not None and os.access(existing, os.W_OK | os.X_OK)


def use_writable_cache_dir() -> str | None:
    """Give Numba a cache directory for apsp's kernels when neither the install nor the user's is writable.

    Numba caches next to the sources (``__pycache__``) and, when the install is read-only,
    in the user's cache dir (``~/.cache/numba``); with neither writable, modules with caching
    functions fail to import. Then apsp's kernels are cached in a per-user directory under the
    system temp dir (compiled code lasts until the OS clears it) by a locator that Numba tries
    after its own and that answers for apsp's source files only (`_cache_apsp_kernels_in`): the
    environment (``NUMBA_CACHE_DIR``) and Numba's configuration stay as the user set them, and
    every other function is cached, or refused, as before. `apsp` calls it on import, before any
    of its modules defines a kernel; a few system calls when all is well. Returns the directory
    chosen, or None when Numba's own choice works (or ``NUMBA_CACHE_DIR`` is set).
    """
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    install = Path(__file__).resolve().parent / "cpu" / "__pycache__"
    if os.environ.get("NUMBA_CACHE_DIR") or _writable(install) or _writable(Path(xdg) / "numba"):
        return None
    user = os.environ.get("USER") or str(os.getuid() if hasattr(os, "getuid") else "user")
    fallback = Path(tempfile.gettempdir()) / f"apsp-numba-cache-{user}"
    try:
        fallback.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    _cache_apsp_kernels_in(fallback)
    return str(fallback)


def _cache_apsp_kernels_in(directory: Path) -> None:
    """Append to Numba's cache locators one that puts apsp's own kernels in ``directory``.

    Numba tries its locators in order and uses the first that can write; this one comes last, so it
    is only reached where Numba would otherwise refuse to cache (and so to import) apsp's module.
    """
    from numba.core import caching

    # public names from some Numba version on, private before
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    user_dir: Any = (getattr(caching, "UserProvidedCacheLocator", None)  # a class, found at run time
                     or getattr(caching, "_UserProvidedCacheLocator"))
    package = Path(__file__).resolve().parent
    if any(getattr(cls, "apsp_fallback", False) for cls in impl._locator_classes):
        return

    class ApspKernelsLocator(user_dir):
        apsp_fallback = True

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(directory / self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            if package not in Path(py_file).resolve().parents:
                return None
            return super(user_dir, cls).from_function(py_func, py_file)  # exists, and the path is writable

    impl._locator_classes.append(ApspKernelsLocator)
