"""Progress bars for long work: shown on a terminal, quiet in pipes and CI."""
from __future__ import annotations

import sys
from contextlib import AbstractContextManager


class _Silent(AbstractContextManager):  # its __enter__ returns the bar
    shown = False  #: whether anything is displayed (callers skip work done only for the display)

    def update(self, n: int = 1) -> None:
        pass

    def set_to(self, done: int) -> None:
        pass

    def __exit__(self, *exc):
        pass


class _Bar(_Silent):
    shown = True

    def __init__(self, total: int, desc: str, unit: str, initial: int):
        from tqdm.auto import tqdm

        self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                         dynamic_ncols=True, initial=initial)

    def update(self, n: int = 1) -> None:
        self._bar.update(n)

    def set_to(self, done: int) -> None:
        self._bar.update(done - self._bar.n)

    def __exit__(self, *exc):
        self._bar.close()


def progress_bar(total: int, enabled: bool | None, desc: str = "", unit: str = "round", initial: int = 0):
    """A bar over ``total`` steps, ``initial`` of them done before (a resumed solve), in a ``with``
    block: ``enabled`` True/False, or None = on a terminal or in a Jupyter kernel (where tqdm.auto
    draws a notebook widget)."""
    if enabled is None:
        ipython = sys.modules.get("IPython")  # never imported here: a notebook has loaded it already
        try:
            shell = ipython.get_ipython() if ipython is not None else None
        except Exception:  # noqa: BLE001 - an odd IPython is no notebook
            shell = None
        enabled = sys.stderr.isatty() or type(shell).__name__ == "ZMQInteractiveShell"
    return _Bar(total, desc, unit, initial) if enabled and total > 1 else _Silent()
