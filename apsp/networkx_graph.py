"""A networkx graph as apsp reads it (`ApspGraph`): its nodes, adjacency arrays and numeric edge
weights, converted once. The networkx backend (`apsp.networkx_backend`) runs on it, and
`apsp.as_graph` reads a networkx graph through it (`apsp.inputs`); neither imports the other.
"""
from __future__ import annotations

from functools import cached_property
from itertools import chain

import numpy as np

#: the backend's name in networkx's dispatch (``backend="apsp"``)
BACKEND_NAME = "apsp"


class ApspGraph:
    """A networkx graph as apsp sees it: nodes, adjacency arrays and numeric edge weights.

    Row ``i`` of the adjacency (``indptr``/``indices``) lists node ``i``'s
    neighbours in networkx's own adjacency order (needed to reproduce its
    breadth-first search); ``weights[attr]`` is aligned with ``indices``
    (parallel edges of a multigraph: the smallest weight).

    Examples
    --------
    >>> import networkx as nx
    >>> from apsp.networkx_graph import ApspGraph
    >>> g = ApspGraph.from_networkx(nx.path_graph(3), {"weight": 1})
    >>> g.nodes, g.indices.tolist()
    ([0, 1, 2], [1, 0, 2, 1])
    """

    __networkx_backend__ = BACKEND_NAME

    def __init__(self, nodes, directed, multigraph, indptr, indices, weights=None,
                 int_weights=None, missing_weights=None, float_zero_loops=None,
                 source_graph=None, number_types=None):
        self.nodes = list(nodes)
        self.directed = bool(directed)
        self.multigraph = bool(multigraph)
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int64)
        #: attribute name -> weights aligned with ``indices``
        self.weights = dict(weights or {})
        #: attribute name -> every weight is a whole-number type (networkx then returns ints)
        self.int_weights = dict(int_weights or {})
        #: attribute name -> some edge lacks the attribute (networkx uses its default)
        self.missing_weights = dict(missing_weights or {})
        #: attribute name -> (some given weight is an int, some is a float), as Python sees them
        self.number_types = dict(number_types or {})
        #: attribute name -> nodes whose networkx Floyd-Warshall diagonal is the float 0.0
        self.float_zero_loops = dict(float_zero_loops or {})
        #: the networkx graph this was converted from, for handing calls back to networkx
        self.source_graph = source_graph
        self.__networkx_cache__ = {}
        #: (weight, drop_self_loops, reverse) -> the apsp `Graph` built for it (`to_apsp_graph`)
        self._apsp_graphs = {}

    # networkx graph protocol used by the dispatcher and by users
    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __len__(self) -> int:
        return len(self.nodes)

    number_of_nodes = __len__

    @cached_property
    def node_array(self) -> np.ndarray:
        """Nodes as an object array, to pick many labels at once."""
        return np.fromiter(self.nodes, dtype=object, count=len(self.nodes))

    @classmethod
    def from_networkx(cls, G, edge_attrs=None) -> "ApspGraph":
        """Convert ``G``, reading each attribute of ``edge_attrs`` ({name: default})."""
        nodes = list(G)
        adjacency = list(G.adjacency())
        targets = list(chain.from_iterable(nbrs for _, nbrs in adjacency))
        data = list(chain.from_iterable(nbrs.values() for _, nbrs in adjacency))
        indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
        np.cumsum([len(nbrs) for _, nbrs in adjacency], out=indptr[1:])
        indices = node_indices(nodes, targets)
        weights, int_weights, missing, float_zero_loops, number_types = {}, {}, {}, {}, {}
        loops = [(i, nbrs[u]) for i, (u, nbrs) in enumerate(adjacency) if u in nbrs]
        multi = G.is_multigraph()
        edges = [d for keyed in data for d in keyed.values()] if multi else data  # parallel ones apart
        for attr, default in (edge_attrs or {}).items():
            try:
                float_zero_loops[attr] = _float_zero_loops(loops, attr, default, multi)
                # networkx's shortest paths use the lightest parallel edge
                values = ([min(d.get(attr, default) for d in keyed.values()) for keyed in data] if multi
                          else [d.get(attr, default) for d in data])
            except TypeError as exc:  # weights that cannot even be compared
                raise NotImplementedError(f"edge attribute {attr!r} is not numeric: {exc}") from None
            weights[attr], int_weights[attr] = _numeric_weights(values, attr)
            given = [d[attr] for d in edges if attr in d]
            missing[attr] = len(given) < len(edges)
            number_types[attr] = (any(isinstance(x, (int, np.integer)) for x in given),
                                  any(isinstance(x, (float, np.floating)) for x in given))
        return cls(nodes, G.is_directed(), multi, indptr, indices, weights,
                   int_weights, missing, float_zero_loops, source_graph=G, number_types=number_types)

    def to_networkx(self):
        """The networkx graph: the one converted from, or one rebuilt from the arrays."""
        if self.source_graph is not None:
            return self.source_graph
        import networkx as nx

        G = getattr(nx, ("Multi" if self.multigraph else "") + ("DiGraph" if self.directed else "Graph"))()
        G.add_nodes_from(self.nodes)
        rows = np.repeat(np.arange(len(self.nodes)), np.diff(self.indptr))
        labels = self.node_array
        columns = {attr: w.tolist() for attr, w in self.weights.items()}
        for k, (u, v) in enumerate(zip(labels[rows].tolist(), labels[self.indices].tolist())):
            if not self.directed and G.has_edge(u, v):
                continue  # the other half of an undirected edge
            G.add_edge(u, v, **{attr: col[k] for attr, col in columns.items()})
        return G

    def to_apsp_graph(self, weight, drop_self_loops=False, reverse=False):
        """The apsp `Graph` (CSR) with ``weight``'s values, or weight 1 when ``weight`` is None;
        with ``reverse`` every edge turned around (searches there give the distances *to* a node).

        Built once for each set of arguments and kept here: networkx's cache keeps this graph,
        and with it these, across calls (an undirected graph is its own reverse).
        """
        key = (weight, bool(drop_self_loops), bool(reverse) and self.directed)
        if key not in self._apsp_graphs:
            if key[2]:
                from .graph import Graph

                forward = self.to_apsp_graph(weight, drop_self_loops)
                self._apsp_graphs[key] = Graph.from_sparse(forward.csr.T)
            else:
                self._apsp_graphs[key] = self._build_apsp_graph(weight, drop_self_loops)
        return self._apsp_graphs[key]

    def _build_apsp_graph(self, weight, drop_self_loops):
        import scipy.sparse as sp

        from .graph import Graph

        n = len(self.nodes)
        if weight is None:
            w = np.ones(self.indices.shape[0], dtype=np.int8)
        elif weight in self.weights:
            w = self.weights[weight]
        else:
            raise NotImplementedError(
                f"this apsp graph holds edge attributes {sorted(self.weights)}, not {weight!r}")
        indptr, indices = self.indptr, self.indices
        if drop_self_loops:
            keep = ~self.loop_edges()
            indices, w = indices[keep], w[keep]
            indptr = np.concatenate(([0], np.cumsum(keep)))[indptr]  # entries kept before each row
        csr = sp.csr_matrix((w.copy(), indices.copy(), indptr.copy()), shape=(n, n))
        return Graph.from_sparse(csr)

    def loop_edges(self) -> np.ndarray:
        """Whether each entry of ``indices`` is a self-loop."""
        return np.repeat(np.arange(len(self.nodes)), np.diff(self.indptr)) == self.indices


def _float_zero_loops(loops, attr, default, multigraph):
    """Indices of nodes whose self-loops leave networkx's FW diagonal at the float 0.0.

    networkx starts ``dist[u][u]`` at the int 0 and takes ``min(w, dist[u][u])``
    for each self-loop in turn; on a tie ``min`` keeps ``w``, so a loop of
    weight ``0.0`` turns the diagonal into a float.
    """
    found = set()
    for i, data in loops:
        value = 0
        for d in (data.values() if multigraph else [data]):
            value = min(d.get(attr, default), value)
        if isinstance(value, float) and value == 0:
            found.add(i)
    return found


def _numeric_weights(values, attr):
    """Edge weights as a numpy array, and whether they are all whole-number types.

    Anything networkx can order but apsp cannot add exactly (Fractions,
    Decimals, huge ints, strings, NaN) makes the conversion refuse with
    NotImplementedError, so networkx runs its own code instead.
    """
    try:
        w = np.asarray(values)
    except (OverflowError, ValueError, TypeError) as exc:
        raise NotImplementedError(f"edge attribute {attr!r} is not numeric: {exc}") from None
    if w.dtype.kind == "b" or not w.size:
        w = w.astype(np.int64)
    if w.dtype.kind not in "iuf":
        raise NotImplementedError(f"edge attribute {attr!r} holds {w.dtype} values, not real numbers")
    if w.dtype.kind == "f" and not np.isfinite(w).all():
        raise NotImplementedError(f"edge attribute {attr!r} has nan or infinite weights")
    return w, w.dtype.kind in "iu"


def node_indices(labels, nodes) -> np.ndarray:
    """The positions in ``labels`` of ``nodes`` (a list)."""
    index = {node: i for i, node in enumerate(labels)}
    return np.fromiter(map(index.__getitem__, nodes), dtype=np.int64, count=len(nodes))
