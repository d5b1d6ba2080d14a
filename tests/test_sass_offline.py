"""The GPU kernel's machine code, built for sm_90 without a GPU: the structure the measured speed rests on.

The int32 min-plus loop must be one fused VIADDMNMX per update, with at most one layout conversion
(two barriers) per k-chunk and no register spills (see BENCHMARKS.md, "What changed").
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HAS_TRITON

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")

ROOT = Path(__file__).resolve().parents[1]

# compiled in a child process: the test session runs Triton in interpreter mode, which has no compiler
PROBE = """
import json, sys, torch
sys.path.insert(0, "benchmarks")
import sass_offline
from apsp.gpu import minplus
if not (sass_offline.TOOLS / "cuobjdump").exists():
    print(json.dumps(None)); sys.exit()
config = minplus.MinplusConfig(*minplus.MINPLUS_CONFIG[torch.int32])
sass, usage = sass_offline.compile_sass("int32", config, minplus.ASM_S32)
loops = [dict(counts) for _, _, counts in sass_offline.loop_mixes(sass)]
pairs = minplus.MinplusConfig(*minplus.PAIRS["config"])
sass_pairs, _ = sass_offline.compile_sass("int32", pairs, minplus.ASM_PAIRS)
pair_loops = [dict(counts) for _, _, counts in sass_offline.loop_mixes(sass_pairs)]
print(json.dumps({"config": list(config), "usage": usage, "loops": loops, "pair_loops": pair_loops,
                  "pair_ops": sorted(set(__import__("re").findall(r"VIADDMNMX[.A-Za-z0-9]*", sass_pairs)))}))
"""


@functools.lru_cache(maxsize=1)
def _compiled():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _probe():
    found = _compiled()
    if found is None:
        pytest.skip("this Triton build ships no cuobjdump")
    return found


@pytest.mark.slow
def test_int32_inner_loop_is_fused_add_min_without_per_column_barriers():
    found = _probe()
    block_m, block_n, warps, unroll = found["config"][:4]
    main = max(found["loops"], key=lambda counts: counts.get("VIADDMNMX", 0))
    assert main.get("VIADDMNMX", 0) == block_m * block_n // (32 * warps) * unroll
    assert main.get("BAR", 0) <= 2
    assert main.get("LDL", 0) == 0 and main.get("STL", 0) == 0
    assert "LOCAL:0" in found["usage"]


def test_int16_pairs_loop_is_the_int32_loop_on_packed_halves():
    found = _probe()
    main = max(found["pair_loops"], key=lambda counts: counts.get("VIADDMNMX", 0))
    assert found["pair_ops"] == ["VIADDMNMX.S16x2"]
    assert main.get("PRMT", 0) == 0 and main.get("BAR", 0) <= 2


# GPUs before Hopper: the packed int16 instructions do not exist there, so the drivers pick plain
# int16 arithmetic and a tile that fits; everything they launch must build for sm_80 and sm_86
OLDER_PROBE = """
import json, sys, torch, triton
sys.path.insert(0, "benchmarks")
import sass_offline
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from apsp.gpu import minplus
out = {}
for arch in (80, 86):
    cap = divmod(arch, 10)
    for name in ("int16", "int32", "float32"):
        dt = getattr(torch, name)
        asm = minplus.asm_mode(dt, cap)
        config = minplus.MinplusConfig(*minplus.default_config(dt, cap))
        sass, usage = sass_offline.compile_sass(name, config, asm, arch=arch)
        out[f"minplus {name} sm_{arch}"] = {"asm": asm, "usage": usage, "s16x2": "S16x2" in sass}
    for name in ("i16", "i32"):
        src = ASTSource(fn=minplus._close_block_kernel,
                        signature={"t_ptr": "*" + name, "size": "i32", "stride_m": "i32", "stride_n": "i32",
                                   "INF": name, "CLAMP": "constexpr", "BLOCK": "constexpr"},
                        constexprs={"CLAMP": False, "BLOCK": 128})
        triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": 8})
        out[f"close {name} sm_{arch}"] = {"asm": 0}
try:
    sass_offline.compile_sass("int16", minplus.MinplusConfig(*minplus.MINPLUS_CONFIG[torch.int16]),
                              minplus.ASM_S16X2, arch=80)
    out["packed on sm_80"] = "built"
except Exception as exc:
    out["packed on sm_80"] = str(exc)[:2000]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_kernels_build_for_gpus_before_hopper_without_packed_int16():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", OLDER_PROBE], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    for arch in (80, 86):
        assert found[f"minplus int16 sm_{arch}"]["asm"] == 0  # plain Triton ops
        assert not found[f"minplus int16 sm_{arch}"]["s16x2"]
        for name in ("int16", "int32", "float32"):
            assert "LOCAL:0" in found[f"minplus {name} sm_{arch}"]["usage"]
    # why: ptxas refuses the packed instructions below sm_90
    assert "requires .target sm_90" in found["packed on sm_80"]
