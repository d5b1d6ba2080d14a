"""The CUDA driver API through ctypes: what a Floyd-Warshall solve needs, without torch.

torch's import takes 3-5 s of a process's life (it holds the GIL throughout), while
the driver library answers in milliseconds and Triton imports in 0.2-0.4 s. A solve
that needs only device memory, copies, streams and the FW kernels (`apsp.gpu.fw.DriverRuntime`)
runs on this module instead. ctypes releases the GIL around every call, so the
context can be started on a thread while the input is read.

One context per process: device 0's primary context, the one torch and Triton use
too, so memory and kernels from either side work together in one process.
"""
from __future__ import annotations

import contextlib
import ctypes
import threading

_P = ctypes.c_void_p
_U64 = ctypes.c_uint64
_SIZE = ctypes.c_size_t
_INT = ctypes.c_int
_UINT = ctypes.c_uint

#: CUdevice_attribute values used here
ATTR_MAJOR, ATTR_MINOR, ATTR_SHARED_OPTIN = 75, 76, 97
#: CUfunction_attribute values used here
FUNC_SHARED_STATIC, FUNC_MAX_DYNAMIC_SHARED = 1, 8
MEMORY_HOST, MEMORY_DEVICE = 1, 2
STREAM_NON_BLOCKING = 1
EVENT_DISABLE_TIMING = 2
MEMPOOL_RELEASE_THRESHOLD = 4  # CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
POOL_KEEP = 1 << 30


class CudaError(RuntimeError):
    """A CUDA driver call failed (the message names the call and CUDA's error)."""


class _Memcpy2D(ctypes.Structure):
    """CUDA_MEMCPY2D."""

    _fields_ = [("srcXInBytes", _SIZE), ("srcY", _SIZE), ("srcMemoryType", _INT), ("srcHost", _P),
                ("srcDevice", _U64), ("srcArray", _P), ("srcPitch", _SIZE),
                ("dstXInBytes", _SIZE), ("dstY", _SIZE), ("dstMemoryType", _INT), ("dstHost", _P),
                ("dstDevice", _U64), ("dstArray", _P), ("dstPitch", _SIZE),
                ("WidthInBytes", _SIZE), ("Height", _SIZE)]


_SIGNATURES = {
    "cuInit": [_UINT],
    "cuDeviceGetCount": [ctypes.POINTER(_INT)],
    "cuDeviceGet": [ctypes.POINTER(_INT), _INT],
    "cuDeviceGetName": [ctypes.c_char_p, _INT, _INT],
    "cuDeviceGetAttribute": [ctypes.POINTER(_INT), _INT, _INT],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(_P), _INT],
    "cuCtxSetCurrent": [_P],
    "cuCtxSynchronize": [],
    "cuMemGetInfo_v2": [ctypes.POINTER(_SIZE), ctypes.POINTER(_SIZE)],
    "cuMemAlloc_v2": [ctypes.POINTER(_U64), _SIZE],
    "cuMemFree_v2": [_U64],
    "cuMemAllocAsync": [ctypes.POINTER(_U64), _SIZE, _P],
    "cuMemFreeAsync": [_U64, _P],
    "cuDeviceGetDefaultMemPool": [ctypes.POINTER(_P), _INT],
    "cuMemPoolSetAttribute": [_P, _INT, ctypes.POINTER(_U64)],
    "cuMemPoolTrimTo": [_P, _SIZE],
    "cuMemHostAlloc": [ctypes.POINTER(_P), _SIZE, _UINT],
    "cuMemFreeHost": [_P],
    "cuMemcpy2DAsync_v2": [ctypes.POINTER(_Memcpy2D), _P],
    "cuStreamCreateWithPriority": [ctypes.POINTER(_P), _UINT, _INT],
    "cuStreamSynchronize": [_P],
    "cuStreamDestroy_v2": [_P],
    "cuStreamWaitEvent": [_P, _P, _UINT],
    "cuEventCreate": [ctypes.POINTER(_P), _UINT],
    "cuEventRecord": [_P, _P],
    "cuEventSynchronize": [_P],
    "cuEventElapsedTime": [ctypes.POINTER(ctypes.c_float), _P, _P],
    "cuEventDestroy_v2": [_P],
    "cuModuleLoadData": [ctypes.POINTER(_P), ctypes.c_char_p],
    "cuModuleGetFunction": [ctypes.POINTER(_P), _P, ctypes.c_char_p],
    "cuFuncGetAttribute": [ctypes.POINTER(_INT), _INT, _P],
    "cuFuncSetAttribute": [_P, _INT, _INT],
    "cuLaunchKernel": [_P, _UINT, _UINT, _UINT, _UINT, _UINT, _UINT, _UINT, _P, ctypes.POINTER(_P),
                       ctypes.POINTER(_P)],
    "cuGetErrorName": [_INT, ctypes.POINTER(ctypes.c_char_p)],
}

_lib = None
_state: dict = {}
_lock = threading.RLock()  # start() runs inside main_stream()'s hold
_local = threading.local()


def _library():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL("libcuda.so.1")
        for name, args in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = _INT
        _lib = lib
    return _lib


def _check(result: int, call: str) -> None:
    if result != 0:
        name = ctypes.c_char_p()
        _library().cuGetErrorName(result, ctypes.byref(name))
        raise CudaError(f"CUDA driver call {call} failed: {(name.value or b'?').decode()} ({result})")


def call(name: str, *args) -> None:
    """Run driver function ``name`` in this process's context (made current on this thread)."""
    if getattr(_local, "context", None) is None:
        context = start()
        _check(_library().cuCtxSetCurrent(context), "cuCtxSetCurrent")
        _local.context = context
    _check(getattr(_library(), name)(*args), name)


def _new(ctype, name: str, *args):
    """The ``ctype`` value driver function ``name`` writes through its first parameter."""
    value = ctype()
    call(name, ctypes.byref(value), *args)
    return value


def start():
    """Initialise the driver and retain device 0's primary context (once per process)."""
    with _lock:
        if "context" not in _state:
            lib = _library()
            _check(lib.cuInit(0), "cuInit")
            device, context = _INT(), _P()
            _check(lib.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
            _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
            _state.update(device=device.value, context=context)
        return _state["context"]


def device_count() -> int:
    """CUDA devices the driver sees (0 when it cannot start)."""
    count = _INT()
    with contextlib.suppress(OSError, AttributeError):
        lib = _library()
        if lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0:
            return count.value
    return 0


def _attribute(attr: int) -> int:
    start()
    return _new(_INT, "cuDeviceGetAttribute", attr, _state["device"]).value


def capability() -> tuple[int, int]:
    return _attribute(ATTR_MAJOR), _attribute(ATTR_MINOR)


def device_name() -> str:
    start()
    buf = ctypes.create_string_buffer(256)
    _check(_library().cuDeviceGetName(buf, 256, _state["device"]), "cuDeviceGetName")
    return buf.value.decode()


def memory_info() -> tuple[int, int]:
    """(free, total) bytes of the device."""
    free, total = _SIZE(), _SIZE()
    call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
    return free.value, total.value


# ----------------------------------------------------------------------------- memory
class Allocation:
    """Device memory, freed when the last view of it goes.

    ``stream`` given: stream-ordered scratch from the driver's pool, for buffers made and dropped
    inside one queue of work (a plain free waits for the whole device, which would stall the
    look-ahead rounds once per product)."""

    def __init__(self, nbytes: int, stream: "Stream | None" = None):
        self.nbytes = int(nbytes)
        self.stream = stream
        if stream is None:
            self.ptr = _new(_U64, "cuMemAlloc_v2", max(1, self.nbytes)).value
        else:
            _keep_pool()
            self.ptr = _new(_U64, "cuMemAllocAsync", max(1, self.nbytes), stream.handle).value

    def __del__(self):
        if self.ptr and _lib is not None:
            if self.stream is None:
                _lib.cuMemFree_v2(self.ptr)  # implicitly waits for the work using it
            else:
                _lib.cuMemFreeAsync(self.ptr, self.stream.handle)  # after the work queued on it
            self.ptr = 0


def _keep_pool() -> None:
    """Let the stream-ordered pool keep up to `POOL_KEEP` bytes across synchronisations (by default
    it returns every freed byte to the driver at each one, and the next round allocates again)."""
    if "pool" in _state:
        return
    start()
    pool = _new(_P, "cuDeviceGetDefaultMemPool", _state["device"])
    call("cuMemPoolSetAttribute", pool, MEMPOOL_RELEASE_THRESHOLD, ctypes.byref(_U64(POOL_KEEP)))
    _state["pool"] = pool


def trim_pool() -> None:
    """Give the stream-ordered pool's kept bytes back to the driver (after a solve: another
    process, or this one's next plan, may need them)."""
    if "pool" in _state:
        call("cuCtxSynchronize")
        call("cuMemPoolTrimTo", _state["pool"], 0)


class PinnedBuffer:
    """Page-locked host memory (copies to and from it run at full PCIe speed)."""

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        self.ptr = _new(_P, "cuMemHostAlloc", self.nbytes, 0).value

    def numpy(self):
        import numpy as np

        return np.ctypeslib.as_array((ctypes.c_uint8 * self.nbytes).from_address(self.ptr))

    def __del__(self):
        if self.ptr and _lib is not None:
            _lib.cuMemFreeHost(_P(self.ptr))
            self.ptr = 0


def copy_2d(dst, dst_pitch: int, src, src_pitch: int, width: int, height: int, *,
            dst_host: bool = False, src_host: bool = False, stream=None) -> None:
    """Copy ``height`` rows of ``width`` bytes between device or host addresses (pitches in bytes)."""
    p = _Memcpy2D()
    for end, address, host in (("src", src, src_host), ("dst", dst, dst_host)):
        setattr(p, end + "MemoryType", MEMORY_HOST if host else MEMORY_DEVICE)
        setattr(p, end + ("Host" if host else "Device"), address)
    p.srcPitch, p.dstPitch, p.WidthInBytes, p.Height = src_pitch, dst_pitch, width, height
    call("cuMemcpy2DAsync_v2", ctypes.byref(p), stream or current().handle)


# ----------------------------------------------------------------------------- streams and events
class Stream:
    """A non-blocking stream (no implicit order with the legacy default stream)."""

    def __init__(self, priority: int = 0):
        self.handle = _new(_P, "cuStreamCreateWithPriority", STREAM_NON_BLOCKING, priority)

    def synchronize(self) -> None:
        call("cuStreamSynchronize", self.handle)

    def __del__(self):
        if self.handle and _lib is not None and self is not _state.get("stream"):
            _lib.cuStreamDestroy_v2(self.handle)  # returns at once; queued work still completes
            self.handle = None

    def wait_event(self, event: "Event") -> None:
        call("cuStreamWaitEvent", self.handle, event.handle, 0)

    def record_event(self, timing: bool = False) -> "Event":
        event = Event(timing)
        call("cuEventRecord", event.handle, self.handle)
        return event


class Event:
    def __init__(self, timing: bool = False):
        self.handle = _new(_P, "cuEventCreate", 0 if timing else EVENT_DISABLE_TIMING)

    def synchronize(self) -> None:
        call("cuEventSynchronize", self.handle)

    def seconds_since(self, earlier: "Event") -> float:
        return _new(ctypes.c_float, "cuEventElapsedTime", earlier.handle, self.handle).value / 1e3

    def __del__(self):
        if self.handle and _lib is not None:
            _lib.cuEventDestroy_v2(self.handle)
            self.handle = None


def main_stream() -> Stream:
    """The process's stream for queued work (made on first use)."""
    with _lock:
        if "stream" not in _state:
            _state["stream"] = Stream()
        return _state["stream"]


def current() -> Stream:
    """The stream work is queued on from this thread (`on_stream`), else the main stream."""
    return getattr(_local, "stream", None) or main_stream()


class on_stream:
    """``with on_stream(s):`` queue this thread's copies and launches on ``s``."""

    def __init__(self, stream: Stream):
        self.stream = stream

    def __enter__(self):
        self.saved = getattr(_local, "stream", None)
        _local.stream = self.stream
        return self.stream

    def __exit__(self, *exc):
        _local.stream = self.saved


def synchronize() -> None:
    """Wait for all work queued in this context."""
    call("cuCtxSynchronize")


# ----------------------------------------------------------------------------- kernels
class Kernel:
    """A compiled kernel (a cubin) loaded into the context."""

    def __init__(self, cubin: bytes, name: str, shared: int, threads: int, params: int):
        self.module = module = _new(_P, "cuModuleLoadData", cubin)
        self.function = function = _new(_P, "cuModuleGetFunction", module, name.encode())
        self.shared, self.threads, self.params = int(shared), int(threads), int(params)
        if self.shared > 49152:  # above the default dynamic shared memory: opt in, as Triton does
            static = _new(_INT, "cuFuncGetAttribute", FUNC_SHARED_STATIC, function).value
            call("cuFuncSetAttribute", function, FUNC_MAX_DYNAMIC_SHARED, _attribute(ATTR_SHARED_OPTIN) - static)

    def launch(self, grid: tuple, args: list) -> None:
        """Queue the kernel on the current stream; ``args`` are ctypes values, one per parameter."""
        if len(args) != self.params:
            raise ValueError(f"kernel takes {self.params} parameters, got {len(args)}")
        pointers = (_P * len(args))(*[ctypes.cast(ctypes.byref(a), _P) for a in args])
        gx, gy, gz = (tuple(grid) + (1, 1))[:3]
        call("cuLaunchKernel", self.function, gx, gy, gz, self.threads, 1, 1, self.shared,
             current().handle, pointers, None)
