"""Arrays from other libraries in and out: torch tensors (dense, sparse), DLPack exporters, the CUDA
array interface, and the device route (`apsp.gpu.devinput`), here under Triton's interpreter on CPU
tensors as the GPU tests run; every result equals the host route's on the same matrix."""
import numpy as np
import pytest

import apsp
from apsp.errors import BackendUnavailableError
from apsp.inputs import on_device

torch = pytest.importorskip("torch")
CUDA = torch.cuda.is_available()


def random_matrix(rng, n: int, dtype=np.int32, top: int = 20, density: float = 0.4) -> np.ndarray:
    a = rng.integers(1, top, (n, n)).astype(dtype)
    a[rng.random((n, n)) > density] = 0
    return a


def host_solve(a, **kw):
    return apsp.shortest_paths(a, method="fw", backend="cpu", **kw)


def device_input(a, null_value=0.0):
    """``a`` as a GPU input: a CUDA tensor where there is a GPU, else the interpreter's stand-in, a
    CPU tensor made a device graph (`apsp.gpu.devinput.device_graph`), as the GPU engine sees it."""
    t = torch.from_numpy(np.ascontiguousarray(a))
    if CUDA:
        return t.cuda()
    from apsp.gpu.devinput import device_graph

    return device_graph(t, null_value)


class DLPackOnly:
    """An array that offers nothing but DLPack (as a third library's array would)."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


class CudaInterfaceOnly:
    """An object that claims GPU memory through ``__cuda_array_interface__`` (never read here
    without a GPU)."""

    __cuda_array_interface__ = {"shape": (2, 2), "typestr": "<i4", "data": (0, False), "version": 3}


# -- torch tensors on the CPU ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float32", "float64"])
def test_cpu_tensor_equals_numpy(rng, dtype):
    a = random_matrix(rng, 40).astype(dtype)
    r = apsp.shortest_paths(torch.from_numpy(a), backend="cpu")
    assert isinstance(r.distances, np.ndarray)  # a CPU tensor in: numpy out, as before
    assert r == host_solve(a)


def test_cpu_tensor_int64_beyond_int32(rng):
    a = random_matrix(rng, 30, np.int64)
    a[a > 0] += 2**40
    r = apsp.shortest_paths(torch.from_numpy(a), backend="cpu")
    assert r.dtype == np.int64 and r == host_solve(a)


def test_cpu_tensor_half_and_bfloat16_widen_exactly(rng):
    a = random_matrix(rng, 30).astype(np.float16)  # widened to float32, which holds them exactly
    assert apsp.shortest_paths(torch.from_numpy(a), backend="cpu") == host_solve(a.astype(np.float32))
    b = torch.from_numpy(random_matrix(rng, 30).astype(np.float32)) / 4  # quarters: exact in bfloat16
    assert apsp.shortest_paths(b.to(torch.bfloat16), backend="cpu") == host_solve(b.numpy())


def test_cpu_tensor_output_torch_shares_the_result(rng):
    a = random_matrix(rng, 30)
    r = apsp.shortest_paths(torch.from_numpy(a), backend="cpu", output="torch")
    assert isinstance(r.distances, torch.Tensor) and r.distances.device.type == "cpu"
    assert np.array_equal(r.distances.numpy(), host_solve(a).distances)
    with pytest.raises(ValueError, match="unknown output 'cupy'; choose one of numpy, torch"):
        apsp.shortest_paths(a, output="cupy")


def test_sparse_tensors_read_as_scipy_reads_them(rng):
    import scipy.sparse as sp

    a = random_matrix(rng, 35)
    a[3, 4] = 0  # an explicit zero is an edge in a sparse matrix
    coo = sp.coo_matrix(a)
    coo = sp.coo_matrix((np.r_[coo.data, 0, 50], (np.r_[coo.row, 3, 5], np.r_[coo.col, 4, 6])), shape=a.shape)
    want = apsp.shortest_paths(coo, backend="cpu")  # the repeated entry: the lightest wins, never the sum
    t_coo = torch.sparse_coo_tensor(np.vstack([coo.row, coo.col]), coo.data, a.shape)  # uncoalesced
    assert apsp.shortest_paths(t_coo, backend="cpu") == want
    csr = sp.csr_matrix(a)
    t_csr = torch.sparse_csr_tensor(csr.indptr, csr.indices, csr.data, a.shape)
    assert apsp.shortest_paths(t_csr, backend="cpu") == apsp.shortest_paths(csr, backend="cpu")


def test_cpu_tensors_need_no_triton():
    """A CPU install of torch has no Triton: dense and sparse CPU tensors, and a torch result, do
    without it."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['triton'] = None\n"
            "import torch, apsp\n"
            "t = torch.tensor([[0, 3, 0], [0, 0, 4], [1, 0, 0]])\n"
            "r = apsp.shortest_paths(t.to_sparse_csr(), backend='cpu', output='torch')\n"
            "assert r.to_torch().tolist() == [[0, 3, 7], [5, 0, 4], [1, 4, 0]], r.distances\n"
            "assert 'triton' not in [m.split('.')[0] for m, v in sys.modules.items() if v is not None]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


# -- DLPack and the CUDA array interface -----------------------------------------------------------
def test_dlpack_only_object_on_the_host(rng):
    a = random_matrix(rng, 30)
    wrapped = DLPackOnly(a)
    assert not on_device(wrapped)
    assert apsp.shortest_paths(wrapped, backend="cpu") == host_solve(a)


def test_device_arrays_recognised_without_their_library():
    assert on_device(CudaInterfaceOnly())
    assert on_device(DLPackOnly(np.zeros((2, 2)), device=(2, 0)))  # kDLCUDA
    assert not on_device(np.zeros((2, 2)))


@pytest.mark.skipif(CUDA, reason="the refusal of a CUDA array where torch sees no GPU")
def test_cuda_interface_without_a_gpu_is_refused_clearly():
    with pytest.raises(BackendUnavailableError, match="__cuda_array_interface__ needs a CUDA device"):
        apsp.shortest_paths(CudaInterfaceOnly())


@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
def test_cuda_arrays_through_dlpack_or_the_interface_alone_stay_on_the_card(rng):
    a = random_matrix(rng, 300)
    t = torch.from_numpy(a).cuda()
    want = host_solve(a)

    class InterfaceOnly:
        __cuda_array_interface__ = t.__cuda_array_interface__

    for given in (DLPackOnly(t, device=t.__dlpack_device__()), InterfaceOnly()):
        r = apsp.shortest_paths(given, method="fw", backend="gpu")
        assert r.distances.device.type == "cuda" and r.info["device_input"] == "kept on the device"
        assert r == want


# -- the device route -------------------------------------------------------------------------------
def test_device_facts_equal_the_host_graphs(rng):
    from apsp.gpu.devinput import dense_facts

    for a in (random_matrix(rng, 33), random_matrix(rng, 33).astype(np.float64) - 5.5,
              np.where(rng.random((20, 20)) < 0.3, np.inf, 2.0), np.zeros((4, 4), np.int16)):
        g = apsp.as_graph(a)
        assert dense_facts(torch.from_numpy(a), 0.0) == (g.nnz, g.max_abs_weight, g.has_negative_weights,
                                                        g.integral, g.unit_weights)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_device_input_result_stays_on_the_device(rng, dtype):
    a = random_matrix(rng, 37, dtype)  # 37: the padded matrix is larger than the input
    r = apsp.shortest_paths(device_input(a), method="fw", backend="gpu")
    assert isinstance(r.distances, torch.Tensor) and r.backend == "gpu"
    assert r.info["device_input"] == "kept on the device"
    want = host_solve(a)
    assert r.dtype == want.dtype and r.to_numpy() == want
    assert np.array_equal(np.from_dlpack(r), want.distances)  # the result exports DLPack itself
    assert r.to_torch() is r.distances


def test_device_input_negative_weights_nulls_and_infinities(rng):
    n = 27
    a = random_matrix(rng, n).astype(np.float64)
    upper = np.triu(np.ones((n, n), bool), 1)
    a[upper & (a > 12)] = -0.5  # negative edges forward only, back edges of at least n: no negative cycle
    a[~upper] += n
    a[rng.random(a.shape) < 0.1] = np.inf
    a[rng.random(a.shape) < 0.05] = np.nan
    for null in (0.0, None, 7.0):
        r = apsp.shortest_paths(device_input(a, null), method="fw", backend="gpu", null_value=null)
        assert r.to_numpy() == host_solve(a, null_value=null)


def test_device_input_bool_int64_and_half(rng):
    b = rng.random((30, 30)) < 0.1
    assert apsp.shortest_paths(device_input(b), method="fw", backend="gpu").to_numpy() == host_solve(b)
    big = random_matrix(rng, 20, np.int64)
    big[big > 0] += 2**40
    r = apsp.shortest_paths(device_input(big), method="fw", backend="gpu")
    assert r.dtype == np.int64 and r.to_numpy() == host_solve(big)
    half = random_matrix(rng, 20).astype(np.float16) / np.float16(4)
    want = host_solve(half.astype(np.float32))
    assert apsp.shortest_paths(device_input(half), method="fw", backend="gpu").to_numpy() == want


def test_device_input_paths_rows_and_numpy_output(rng):
    a = random_matrix(rng, 30)
    r = apsp.shortest_paths(device_input(a), method="fw", backend="gpu", return_predecessors=True)
    want = host_solve(a, return_predecessors=True)
    assert isinstance(r.predecessors, torch.Tensor)
    assert np.array_equal(r.to_numpy().distances, want.distances)
    assert np.array_equal(r.to_numpy().predecessors, want.predecessors)
    rows = apsp.shortest_paths(device_input(a), method="fw", backend="gpu", sources=[3, 1])
    assert np.array_equal(rows.to_numpy().distances, want.distances[[3, 1]])
    host = apsp.shortest_paths(device_input(a), method="fw", backend="gpu", output="numpy")
    assert isinstance(host.distances, np.ndarray) and host == host_solve(a)


def test_device_input_on_the_cpu_is_copied_once_and_goes_back(rng):
    a = random_matrix(rng, 40)
    r = apsp.shortest_paths(device_input(a), backend="cpu")
    assert r.info["device_input"] == "copied to the host: the plan runs on the CPU"
    assert isinstance(r.distances, torch.Tensor) and r.to_numpy() == host_solve(a)
    stats = apsp.distance_stats(device_input(a))
    assert stats.diameter() == apsp.distance_stats(a).diameter()


@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
def test_cuda_inputs_read_on_the_host_still_come_back_to_the_card(rng):
    a = random_matrix(rng, 300)
    t = torch.from_numpy(a).cuda()
    for given, kw in ((t, {"unweighted": True}), (t, {"directed": False}), (t.to_sparse_csr(), {})):
        r = apsp.shortest_paths(given, **kw)
        assert r.distances.device == t.device
        assert r.info["device_input"] == "copied to the host: a sparse, unweighted or undirected input is read there"
        assert r == apsp.shortest_paths(a if given is t else given.cpu(), **kw)


def test_device_input_on_another_device_is_refused(rng):
    with pytest.raises(ValueError, match="move the array there first"):
        apsp.shortest_paths(device_input(random_matrix(rng, 8)), backend="gpu", device="cuda:7")


def test_device_arrays_refused_when_not_a_matrix():
    from apsp.gpu.devinput import device_graph

    with pytest.raises(ValueError, match="square 2-D array"):
        device_graph(torch.zeros(3, 4))
    with pytest.raises(ValueError, match="real numbers, got dtype torch.complex64"):
        device_graph(torch.zeros(3, 3, dtype=torch.complex64))


# -- the scipy drop-in --------------------------------------------------------------------------------
def test_drop_in_takes_a_tensor_and_returns_numpy_as_scipy_does(rng):
    from scipy.sparse import csgraph

    a = random_matrix(rng, 30).astype(np.float64)
    for t in (torch.from_numpy(a), torch.from_numpy(a).to_sparse_csr()):
        got = apsp.shortest_path(t, method="FW")
        assert isinstance(got, np.ndarray) and got.dtype == np.float64
        assert np.array_equal(got, csgraph.shortest_path(a, method="FW"))
    got = apsp.shortest_path(torch.from_numpy(a), method="D", indices=[2])
    assert np.array_equal(got, csgraph.shortest_path(a, method="D", indices=[2]))


def test_device_result_narrowed_on_the_device_with_its_check(rng):
    from apsp.errors import DtypeError

    a = random_matrix(rng, 20)
    a[0, 1] = -3  # negative weights: int16 asked for is solved in int32 and cast, checked
    a[1:, 0] = 100
    r = apsp.shortest_paths(device_input(a), method="fw", backend="gpu", dtype="int16")
    assert isinstance(r.distances, torch.Tensor) and r.dtype == np.int16
    assert r.to_numpy() == host_solve(a, dtype="int16")
    chain = np.zeros((3, 3), np.int32)
    chain[0, 1], chain[1, 2], chain[2, 0] = 20000, 20000, -1  # beyond int16's limit, as the host says
    with pytest.raises(DtypeError) as on_host:
        host_solve(chain, dtype="int16")
    with pytest.raises(DtypeError, match="dtype int16 cannot hold every distance of this graph: one is") as here:
        apsp.shortest_paths(device_input(chain), method="fw", backend="gpu", dtype="int16")
    assert str(here.value) == str(on_host.value)


def test_device_input_streamed_reads_the_host_copy(rng):
    a = random_matrix(rng, 24)
    r = apsp.shortest_paths(device_input(a), method="fw", backend="gpu", out_of_core=True)
    assert r.info["device_input"] == "copied to the host: the solver reads the host's edges"
    assert isinstance(r.distances, torch.Tensor) and r == host_solve(a)
