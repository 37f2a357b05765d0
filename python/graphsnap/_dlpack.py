"""The DLPack capsule protocol over ctypes (no compiled extension).

``export(owner, address, shape, dtype, device)`` builds a DLManagedTensor
describing memory at ``address`` and wraps it in a PyCapsule named
"dltensor", as ``__dlpack__`` must return. The capsule keeps ``owner`` alive
until the consumer (torch.from_dlpack, numpy.from_dlpack, ...) calls the
deleter, or until the capsule is destroyed unconsumed.

Unsigned ids and offsets are exported with the signed type of the same width
(torch has no uint32/uint64): graphsnap ids are < 2^63 and block offsets
< 2^31, so the values are the same.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, Structure, c_char_p, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p
from typing import Any, Sequence

import numpy as np

KDL_CPU = 1
KDL_CUDA = 2


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                            ("deleter", _DELETER)]

# numpy dtype -> (DLPack type code, bits); unsigned exported as signed.
_CODES = {
    np.dtype(np.float32): (2, 32), np.dtype(np.float16): (2, 16), np.dtype(np.float64): (2, 64),
    np.dtype(np.int64): (0, 64), np.dtype(np.int32): (0, 32), np.dtype(np.uint64): (0, 64),
    np.dtype(np.uint32): (0, 32), np.dtype(np.uint8): (1, 8), np.dtype(np.int8): (0, 8),
}
BFLOAT16 = "bfloat16"  # stored as uint16 in numpy, exported with kDLBfloat

_live: dict[int, tuple] = {}   # address of the DLManagedTensor -> what it keeps alive


def _release(addr: int) -> None:
    _live.pop(addr, None)


@_DELETER
def _deleter(p):  # called by the consumer when its tensor dies
    _release(ctypes.cast(p, c_void_p).value)


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [c_void_p, c_char_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [c_void_p, c_char_p]
_NAME = b"dltensor"
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, c_void_p)


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(cap):
    # Not consumed (still named "dltensor"): nobody will call the deleter.
    if _api.PyCapsule_IsValid(cap, _NAME):
        _release(_api.PyCapsule_GetPointer(cap, _NAME))


def export(owner: Any, address: int, shape: Sequence[int], dtype: Any,
           device: tuple[int, int] = (KDL_CPU, 0)) -> Any:
    """A "dltensor" PyCapsule over C-contiguous memory at `address`."""
    if dtype == BFLOAT16:
        code, bits = 4, 16
    else:
        code, bits = _CODES[np.dtype(dtype)]
    m = DLManagedTensor()
    nd = len(shape)
    shp = (c_int64 * max(nd, 1))(*shape)
    m.dl_tensor.data = address
    m.dl_tensor.device = DLDevice(*device)
    m.dl_tensor.ndim = nd
    m.dl_tensor.dtype = DLDataType(code, bits, 1)
    m.dl_tensor.shape = ctypes.cast(shp, POINTER(c_int64))
    m.dl_tensor.strides = None  # compact row-major
    m.dl_tensor.byte_offset = 0
    m.manager_ctx = None
    m.deleter = _deleter
    addr = ctypes.addressof(m)
    _live[addr] = (m, shp, owner)
    return _api.PyCapsule_New(addr, _NAME, ctypes.cast(_capsule_destructor, c_void_p))


def live_exports() -> int:
    """Number of exported tensors whose memory is still held (for tests)."""
    return len(_live)


class DLPackArray:
    """A zero-copy handle on an array in library memory that speaks the DLPack
    protocol (``__dlpack__``, ``__dlpack_device__``): ``torch.from_dlpack(x)``
    and ``numpy.from_dlpack(x)`` (host only) share its memory."""

    __slots__ = ("owner", "address", "shape", "dtype", "device")

    def __init__(self, owner: Any, address: int, shape: Sequence[int], dtype: Any,
                 device: tuple[int, int] = (KDL_CPU, 0)) -> None:
        self.owner, self.address, self.shape = owner, address, tuple(shape)
        self.dtype, self.device = dtype, device

    def __dlpack__(self, stream: Any = None) -> Any:
        # The library synchronises its staging stream before handing a batch
        # out (gsnap_stager_wait), so any consumer stream may use it at once.
        # The consumer's stream is noted on the owner (a staged batch): when
        # the batch is superseded, the slot's next copy is ordered after the
        # work queued on that stream (gsnap_stager_retire).
        note = getattr(self.owner, "note_stream", None)
        if note is not None and self.device[0] != KDL_CPU:
            note(stream)
        return export(self.owner, self.address, self.shape, self.dtype, self.device)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __repr__(self) -> str:
        return (f"DLPackArray(shape={self.shape}, dtype={self.dtype}, "
                f"device={self.device}, address=0x{self.address:x})")
