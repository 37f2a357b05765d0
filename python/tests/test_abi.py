"""The ctypes mirrors in graphsnap/_lib.py match include/graphsnap.h: every
mirrored field at the same offset, output structs of the same size. Compiles
a small C program with the system compiler (skipped without one). A header
change that is not mirrored fails here instead of corrupting memory."""
import ctypes
import os
import shutil
import subprocess

import pytest

pytest.importorskip("numpy", reason="numpy is missing (Debian: python3-numpy)")
from graphsnap import _lib  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# ctypes class -> (C type, exact size required: output structs the library writes)
MIRRORS = {
    _lib.DbOptions: ("gsnap_db_options", False),
    _lib.DbStat: ("gsnap_db_stat", True),
    _lib.Nbr: ("gsnap_nbr", True),
    _lib.IngestOptions: ("gsnap_ingest_options", False),
    _lib.IngestReport: ("gsnap_ingest_report", True),
    _lib.SnapshotOptions: ("gsnap_snapshot_options", False),
    _lib.SnapshotInfo: ("gsnap_snapshot_info", True),
    _lib.SamplerOptions: ("gsnap_sampler_options", False),
    _lib.LayerStats: ("gsnap_layer_stats", True),
    _lib.SamplerStats: ("gsnap_sampler_stats", True),
    _lib.Block: ("gsnap_block", True),
}
if _lib.HAVE_FEATURES:
    MIRRORS[_lib.AttrInfo] = ("gsnap_attr_info", True)
if _lib.HAVE_GATHER:
    MIRRORS[_lib.BatchAttr] = ("gsnap_batch_attr", True)
if _lib.HAVE_ADAPT:
    MIRRORS[_lib.GammaChoice] = ("gsnap_gamma_choice", True)
    MIRRORS[_lib.AdaptStats] = ("gsnap_adapt_stats", True)
if _lib.HAVE_ADVANCE:
    MIRRORS[_lib.AdvanceOptions] = ("gsnap_advance_options", True)
    MIRRORS[_lib.AdvanceReport] = ("gsnap_advance_report", True)


# Fields appended with features: absent (and never passed) in a library without them.
NEWER = {_lib.SamplerOptions: [({"features", "labels"}, _lib.HAVE_FEATURES),
                                ({f[0] for f in _lib._SAMPLER_V4}, _lib.HAVE_ADAPT),
                                ({f[0] for f in _lib._SAMPLER_V4_SHARED}, _lib.HAVE_SHARED),
                                ({"list_cache_bytes"}, _lib.HAVE_LIST_CACHE)],
         _lib.SamplerStats: [({"t_gather"}, _lib.HAVE_GATHER),
                             ({"list_hits", "list_misses", "lists_kept", "list_bytes"},
                              _lib.HAVE_LIST_CACHE)]}


def fields(cls):
    skip = set()
    for names, have in NEWER.get(cls, []):
        if not have:
            skip |= names
    return [f for f in cls._fields_ if f[0] not in skip]


def test_struct_layouts_match_header(tmp_path):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to read the header's layouts")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "graphsnap.h"',
             'int main(void) {']
    for cls, (ctype, _) in MIRRORS.items():
        lines.append(f'printf("{ctype} %zu\\n", sizeof({ctype}));')
        for name, _t in fields(cls):
            lines.append(f'printf("{ctype}.{name} %zu\\n", offsetof({ctype}, {name}));')
    lines.append("return 0; }")
    src = tmp_path / "abi.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "abi"
    inc = os.environ.get("GRAPHSNAP_INCLUDE", os.path.join(REPO, "include"))  # with GRAPHSNAP_LIB
    r = subprocess.run([cc, "-std=c11", "-I", inc, str(src), "-o",
                        str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, f"a mirrored field is missing from the header:\n{r.stderr}"
    got = dict(line.split() for line in subprocess.run([str(exe)], capture_output=True,
                                                       text=True, check=True).stdout.splitlines())
    problems = []
    for cls, (ctype, exact) in MIRRORS.items():
        c_size, py_size = int(got[ctype]), ctypes.sizeof(cls)
        if len(fields(cls)) < len(cls._fields_):
            pass  # fields newer than this library: the slack in _lib.out() covers them
        elif (exact and c_size != py_size) or py_size > c_size:
            problems.append(f"{ctype}: C {c_size} bytes, ctypes {py_size}")
        for name, _t in fields(cls):
            off = getattr(cls, name).offset
            if int(got[f"{ctype}.{name}"]) != off:
                problems.append(f"{ctype}.{name}: C offset {got[f'{ctype}.{name}']}, ctypes {off}")
    assert not problems, "python/graphsnap/_lib.py is out of date:\n" + "\n".join(problems)
