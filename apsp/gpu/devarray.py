"""Strided 2-D views of device memory without torch, and Triton kernels launched on them.

`DeviceArray` offers the few tensor operations the FW drivers use (shape, strides,
slices, transpose, reinterpreting int16 pairs as int32, copies); `launch` runs a
``@triton.jit`` kernel on such arrays the way ``kernel[grid](...)`` would: it
specialises the arguments as Triton's launcher does (16-byte aligned pointers,
integers divisible by 16, integers equal to 1 as constants), compiles each
specialisation once (`triton.compile` keeps the machine code in Triton's disk cache,
so a later process only loads it) and launches the cubin through `apsp.gpu.cuda`.
Triton's own launcher cannot be used: on Triton 3.6 it imports torch.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import re
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from . import cuda

#: Triton's scalar type names per numpy dtype
TRITON_TYPES = {"int16": "i16", "int32": "i32", "int64": "i64", "float32": "fp32", "float64": "fp64",
                "uint8": "u8"}
_DEVICE = SimpleNamespace(type="cuda", index=0)


class DeviceArray:
    """A 2-D strided view (strides in elements) of an `apsp.gpu.cuda.Allocation`."""

    __slots__ = ("alloc", "offset", "shape", "_strides", "dtype")
    device = _DEVICE

    def __init__(self, alloc, offset: int, shape: tuple, strides: tuple, dtype):
        self.alloc, self.offset = alloc, int(offset)
        self.shape, self._strides, self.dtype = tuple(shape), tuple(strides), np.dtype(dtype)

    @classmethod
    def empty(cls, shape, dtype, stream=None) -> "DeviceArray":
        """Uninitialised and contiguous (``stream``: from that stream's pool, `cuda.Allocation`)."""
        dtype = np.dtype(dtype)
        rows, cols = shape
        return cls(cuda.Allocation(rows * cols * dtype.itemsize, stream), 0, (rows, cols), (cols, 1), dtype)

    @classmethod
    def scratch(cls, shape, dtype) -> "DeviceArray":
        """`empty` from the stream-ordered pool of the current stream: for a buffer that only the
        work queued on this stream uses, dropped before the stream changes."""
        return cls.empty(shape, dtype, cuda.current())

    def new_empty(self, shape) -> "DeviceArray":
        """`empty` of this dtype (torch's ``Tensor.new_empty``)."""
        return DeviceArray.empty(shape, self.dtype)

    def data_ptr(self) -> int:
        return self.alloc.ptr + self.offset * self.dtype.itemsize

    def stride(self, dim: int | None = None):
        return self._strides if dim is None else self._strides[dim]

    def storage_offset(self) -> int:
        return self.offset

    def dim(self) -> int:
        return len(self.shape)

    def t(self) -> "DeviceArray":
        return DeviceArray(self.alloc, self.offset, self.shape[::-1], self._strides[::-1], self.dtype)

    def __getitem__(self, key) -> "DeviceArray":
        if not isinstance(key, tuple):
            key = (key, slice(None))
        offset, shape = self.offset, []
        for k, size, stride in zip(key, self.shape, self._strides):
            if not isinstance(k, slice) or k.step not in (None, 1):
                raise IndexError(f"DeviceArray takes plain slices, got {key!r}")
            start, stop, _ = k.indices(size)
            offset += start * stride
            shape.append(max(0, stop - start))
        return DeviceArray(self.alloc, offset, tuple(shape), self._strides, self.dtype)

    def view(self, dtype) -> "DeviceArray":
        """The same bytes as ``dtype`` along the contiguous last dimension (int16 pairs as int32)."""
        from fractions import Fraction

        dtype = np.dtype(dtype)
        ratio = Fraction(dtype.itemsize, self.dtype.itemsize)
        row_stride, offset, cols = (Fraction(v) / ratio for v in (self._strides[0], self.offset, self.shape[1]))
        if self._strides[1] != 1 or any(v.denominator != 1 for v in (row_stride, offset, cols)):
            raise ValueError(f"cannot view {self.shape} {self.dtype} with strides {self._strides} "
                             f"at offset {self.offset} as {dtype}")
        return DeviceArray(self.alloc, int(offset), (self.shape[0], int(cols)), (int(row_stride), 1), dtype)

    def _rows(self):
        """(address, pitch in bytes, row bytes, rows) of a view whose rows are contiguous."""
        if self._strides[1] != 1 and self.shape[1] > 1:
            raise ValueError("copies need contiguous rows")
        item = self.dtype.itemsize
        return self.data_ptr(), self._strides[0] * item, self.shape[1] * item, self.shape[0]

    def copy_(self, src) -> "DeviceArray":
        """Copy ``src`` (a DeviceArray or a numpy array of this shape and dtype) in, queued."""
        if tuple(src.shape) != self.shape or np.dtype(src.dtype) != self.dtype:
            raise ValueError(f"copy of {src.dtype} {tuple(src.shape)} into {self.dtype} {self.shape}")
        if not all(self.shape):
            return self
        dst, dst_pitch, width, rows = self._rows()
        if isinstance(src, DeviceArray):
            s, s_pitch, _, _ = src._rows()
            cuda.copy_2d(dst, dst_pitch, s, s_pitch, width, rows)
        else:
            src = np.ascontiguousarray(src)
            # from pageable memory the call returns once ``src`` is read: it may go right after
            cuda.copy_2d(dst, dst_pitch, src.ctypes.data, width, width, rows, src_host=True)
        return self

    def to_numpy(self, out: np.ndarray | None = None) -> np.ndarray:
        """A host copy (waits for the work queued on the current stream)."""
        out = np.empty(self.shape, self.dtype) if out is None else out
        if all(self.shape):
            s, s_pitch, width, rows = self._rows()
            cuda.copy_2d(out.ctypes.data, width, s, s_pitch, width, rows, dst_host=True)
            cuda.current().synchronize()
        return out

    def __repr__(self) -> str:
        return f"DeviceArray({self.shape}, {self.dtype}, strides={self._strides}, offset={self.offset})"


# ----------------------------------------------------------------------------- launching kernels
_compiled: dict = {}
_compile_lock = threading.Lock()


def _specialise(param, value):
    """(signature type, constant or None, 16-divisible) of one runtime argument, as Triton's launcher
    specialises it."""
    if isinstance(value, DeviceArray):
        return "*" + TRITON_TYPES[value.dtype.name], None, value.data_ptr() % 16 == 0
    if isinstance(value, (bool, np.bool_)):
        return "i1", None, False
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if value == 1:
            return "constexpr", 1, False
        kind = "i32" if -2**31 <= value < 2**31 else "u64" if value >= 2**63 else "i64"
        return kind, None, value % 16 == 0
    if isinstance(value, float):
        return "fp32", None, False
    raise TypeError(f"cannot pass {type(value).__name__} to a kernel's {param.name}")


def _ctype(kind: str, value):
    if kind.startswith("*"):
        return ctypes.c_uint64(value.data_ptr())
    return {"i1": ctypes.c_bool, "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u64": ctypes.c_uint64,
            "fp32": ctypes.c_float}[kind](value)


def compile_kernel(fn, signature: dict, constants: dict, aligned: tuple, num_warps: int, num_stages: int,
                   arch: int) -> tuple[bytes, str, int, int, int]:
    """(cubin, name, shared bytes, threads per program, parameters) of one specialisation of ``fn``
    for ``sm_<arch>``; needs no GPU (Triton ships the assembler). The parameters are counted in the
    PTX: Triton appends scratch pointers of its own after the kernel's arguments."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    attrs = {(i,): [["tt.divisibility", 16]] for i in aligned}
    compiled = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constants, attrs=attrs),
                              target=GPUTarget("cuda", arch, 32),
                              options={"num_warps": num_warps, "num_stages": num_stages,
                                       "enable_fp_fusion": False})  # add and min only: nothing to fuse
    md = compiled.metadata
    if getattr(md, "global_scratch_size", 0) or getattr(md, "profile_scratch_size", 0):
        raise NotImplementedError(f"{md.name} needs scratch memory, which apsp's launcher does not give")
    entry = re.search(r"\.entry\s+\w+\s*\((.*?)\)", compiled.asm["ptx"], re.S)
    params = len(re.findall(r"\.param\b", entry.group(1))) if entry else 0
    return compiled.asm["cubin"], md.name, md.shared, 32 * md.num_warps, params


#: bump when what is stored for a compiled kernel changes
_STORE_FORMAT = 1


def _store_dir() -> Path:
    """Where compiled kernels are kept between processes: beside Triton's own cache."""
    root = os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
    return Path(root) / "apsp-driver"


def _store_key(fn, signature: dict, constants: dict, aligned: tuple, num_warps: int, num_stages: int,
               arch: int) -> str:
    """A name for one compiled specialisation: the kernel's source and what it calls (Triton's own
    `cache_key`), the arguments' specialisation, the target, and the Triton build that compiled it."""
    import triton
    from triton._C import libtriton

    build = os.stat(libtriton.__file__)
    parts = (_STORE_FORMAT, triton.__version__, libtriton.__file__, build.st_size, build.st_mtime_ns,
             fn.cache_key, fn.__module__, fn.__name__, sorted(signature.items()),
             sorted((k, repr(v)) for k, v in constants.items()), aligned, num_warps, num_stages, arch)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _compile_or_load(fn, signature: dict, constants: dict, aligned: tuple, num_warps: int, num_stages: int,
                     arch: int) -> tuple:
    """`compile_kernel`'s answer, from the kernel store when this exact kernel was compiled before:
    Triton's first compile in a process costs 0.3-0.9 s (it hashes its own sources and library)
    even when its cache holds the result, which is most of a small solve's GPU time."""
    store = _store_dir()
    key = _store_key(fn, signature, constants, aligned, num_warps, num_stages, arch)
    meta_path, binary_path = store / f"{key}.json", store / f"{key}.cubin"
    with contextlib.suppress(OSError, ValueError, KeyError):
        meta = json.loads(meta_path.read_text())
        return binary_path.read_bytes(), meta["name"], meta["shared"], meta["threads"], meta["params"]
    from ..jit import compile_outside_numba

    with compile_outside_numba("GPU kernels"):
        compiled = compile_kernel(fn, signature, constants, aligned, num_warps, num_stages, arch)
    binary, name, shared, threads, params = compiled
    # the binary first, the description last: a description names a whole binary; a read-only home:
    # compile again next time
    with contextlib.suppress(OSError):
        store.mkdir(parents=True, exist_ok=True)
        for path, data in ((binary_path, binary), (meta_path, json.dumps(
                {"name": name, "shared": shared, "threads": threads, "params": params}).encode())):
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
    return compiled


def _kernel(fn, signature: dict, constants: dict, aligned: tuple, num_warps: int, num_stages: int):
    key = (fn, tuple(signature.values()), tuple(sorted(constants.items())), aligned, num_warps, num_stages)
    kernel = _compiled.get(key)
    if kernel is not None:
        return kernel
    with _compile_lock:
        if key not in _compiled:
            major, minor = cuda.capability()
            _compiled[key] = cuda.Kernel(*_compile_or_load(fn, signature, constants, aligned, num_warps, num_stages,
                                                           major * 10 + minor))
        return _compiled[key]


def specialise(fn, args: tuple, kwargs: dict):
    """(signature, constants, aligned argument indices, runtime (type, value) pairs) of a call
    ``fn[grid](*args, **kwargs)``, as Triton's launcher would specialise it."""
    values = {**dict(zip([p.name for p in fn.params], args)), **kwargs}
    signature, constants, aligned, runtime = {}, {}, [], []
    for i, p in enumerate(fn.params):
        value = values.get(p.name, p.default)
        kind, constant, divisible = ("constexpr", value, False) if p.is_constexpr else _specialise(p, value)
        signature[p.name] = kind
        if kind == "constexpr":
            constants[p.name] = constant
            continue
        if divisible:
            aligned.append(i)
        runtime.append((kind, value))
    return signature, constants, tuple(aligned), runtime


def launch(fn, grid, *args, num_warps: int = 4, num_stages: int = 3, **kwargs) -> None:
    """``fn[grid](*args, num_warps=..., **kwargs)`` for a ``@triton.jit`` kernel whose array
    arguments are `DeviceArray`s, on the current stream of `apsp.gpu.cuda`."""
    signature, constants, aligned, runtime = specialise(fn, args, kwargs)
    kernel = _kernel(fn, signature, constants, aligned, num_warps, num_stages)
    values = [_ctype(kind, value) for kind, value in runtime]
    values += [ctypes.c_uint64(0)] * (kernel.params - len(values))  # Triton's trailing scratch pointers
    kernel.launch(tuple(grid), values)
