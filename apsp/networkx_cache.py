"""The networkx backend's conversions, kept once per graph and weight attribute, without networkx's
cache note on every reuse.

networkx keeps a backend's conversion in ``G.__networkx_cache__["backends"][name]`` and, each time it
reuses one, warns for 25 lines that the cache is only right while ``G`` is changed through its
methods (one note per function reused: a dozen in a session). apsp keeps its conversion in its own
slot of that cache instead (`ConversionSlot`): networkx's ``G.add_edge(...)`` and friends clear the
whole ``__networkx_cache__``, so the slot goes with a mutation exactly as networkx's entries do, and
networkx finds nothing of apsp's to reuse. The caveat is said once per process, in three lines
(`reused`), unless ``"cache"`` is in ``nx.config.warnings_to_ignore``; with
``nx.config.cache_converted_graphs = False`` or ``G.__networkx_cache__ = None`` nothing is kept.
"""
from __future__ import annotations

import warnings

#: said once per process, the first time a kept conversion is reused
NOTE = ("apsp reuses its conversion of this networkx graph until the graph changes through its methods "
        "(G.add_edge(u, v, weight=w), ...); after writing to G[u][v] directly, call "
        "G.__networkx_cache__.clear(). nx.config.warnings_to_ignore.add('cache') silences this note.")

_said = {"note": False}


class ConversionSlot(dict):
    """networkx's cache entry for apsp, which keeps nothing networkx puts there (so networkx never
    reuses, nor warns); ``converted`` holds apsp's own conversions by weight attributes, each kept
    only once networkx has chosen to keep it (its store here): where networkx caches nothing
    (``cache_converted_graphs`` off, its own backend tests), apsp converts on every call as well."""

    def __init__(self) -> None:
        super().__init__()
        self.converted: dict = {}
        self.pending: dict = {}

    def __setitem__(self, key, value) -> None:  # networkx keeps ``value``: apsp keeps it in its own way
        for own, graph in list(self.pending.items()):
            if graph is value:
                self.converted[own] = self.pending.pop(own)


def _slot(G):
    """apsp's slot in ``G``'s networkx cache, and whether this call's conversion is kept at once; the
    slot is None where nothing may be kept. networkx makes an empty entry for apsp when it caches a
    call's conversion (not under ``cache_converted_graphs = False``, nor in its backend tests): apsp's
    slot takes that entry's place, and later stores are seen by the slot itself."""
    import networkx as nx

    cache = getattr(G, "__networkx_cache__", None)
    if cache is None or not nx.config.cache_converted_graphs:
        return None, False
    slot = cache.get("backends", {}).get("apsp")
    if isinstance(slot, ConversionSlot):
        return slot, False
    if slot is None:  # networkx keeps nothing of this call
        return None, False
    slot = cache["backends"]["apsp"] = ConversionSlot()
    return slot, True


def _key(edge_attrs):
    """A hashable key for the weight attributes read ({name: default}), or None when unhashable."""
    items = tuple(sorted((edge_attrs or {}).items(), key=repr))
    try:
        hash(items)
    except TypeError:
        return None
    return items


def converted(G, edge_attrs, convert):
    """``convert(G, edge_attrs)``, or the conversion kept from an earlier call on the unchanged ``G``."""
    slot, keep = _slot(G)
    key = _key(edge_attrs)
    if slot is None or key is None:
        return convert(G, edge_attrs)
    if key in slot.converted:
        reused()
        return slot.converted[key]
    graph = convert(G, edge_attrs)
    (slot.converted if keep else slot.pending)[key] = graph  # pending: kept if networkx stores it
    return graph


def reused() -> None:
    """Say `NOTE` the first time in this process (unless networkx's "cache" warnings are ignored)."""
    import networkx as nx

    if _said["note"] or "cache" in nx.config.warnings_to_ignore:
        return
    _said["note"] = True
    warnings.warn(NOTE, UserWarning, stacklevel=4)
