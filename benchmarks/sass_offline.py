"""Machine code of the min-plus kernel without a GPU: compile for sm_90, count instructions per loop.

Triton ships ptxas and cuobjdump, so a cubin for an H100/H200 can be built and read on any machine::

    python benchmarks/sass_offline.py --dtype int32 --config 256,64,4,8,1,3
    python benchmarks/sass_offline.py --dtype int16 --config 256,64,4,8,1,3 --dump int16.sass

For each loop of the kernel (a backward branch) it prints the instruction mix: the add-min
instructions (``VIADDMNMX``, ``FADD``/``FMNMX``) against loads, shared-memory traffic (``LDS``/``STS``),
barriers (``BAR``), async copies (``LDGSTS``) and spills (``LDL``/``STL``). Config fields as in
`apsp.gpu.minplus.MinplusConfig` (BLOCK_M, BLOCK_N, warps, unroll, chunk_a 0/1, stages).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from apsp.gpu import minplus  # noqa: E402

TRITON_TYPES = {"int32": "i32", "int16": "i16", "float32": "fp32", "int64": "i64", "float64": "fp64"}
ASM = {"int32": minplus.ASM_S32, "int16": minplus.ASM_S16X2, "float32": minplus.ASM_F32}
TOOLS = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"


def compile_sass(dtype: str, config: minplus.MinplusConfig, asm: int, arch: int = 90) -> tuple[str, str]:
    """(SASS text, resource usage) of the phase-3 product kernel, EVEN tiles, no clamping."""
    kernel = minplus._minplus_kernel
    names = kernel.arg_names
    t = TRITON_TYPES[dtype]
    constants = dict(CLAMP=False, HAS_C2=False, EVEN=True, BLOCK_M=config.block_m, BLOCK_N=config.block_n,
                     GROUP_M=8, ASM=asm, UNROLL=config.unroll, WIDE=False, CHUNK_A=bool(config.chunk_a),
                     STAGES=config.stages, stride_cn=1, stride_am=1, stride_bn=1, stride_c2n=1)
    signature = {}
    for name in names:
        if name in constants:
            signature[name] = "constexpr"
        elif name.endswith("_ptr"):
            signature[name] = "*" + t
        elif name == "INF":
            signature[name] = t
        else:
            signature[name] = "i32"
    # what the launcher sees on a real run: 16-byte aligned pointers, row strides and sizes
    aligned = {"c_ptr", "a_ptr", "b_ptr", "c2_ptr", "M", "N", "K", "stride_cm", "stride_ak", "stride_bk",
               "stride_c2m"}
    attrs = {(i,): [["tt.divisibility", 16]] for i, name in enumerate(names) if name in aligned}
    src = ASTSource(fn=kernel, signature=signature, constexprs=constants, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32),
                              options={"num_warps": config.warps})
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "k.cubin")
        Path(cubin).write_bytes(compiled.asm["cubin"])
        sass = subprocess.run([TOOLS / "cuobjdump", "-sass", cubin], capture_output=True, text=True,
                              check=True).stdout
        usage = subprocess.run([TOOLS / "cuobjdump", "-res-usage", cubin], capture_output=True,
                               text=True, check=True).stdout
    return sass, " ".join(re.findall(r"(?:REG|STACK|SHARED|LOCAL):\d+", usage))


def loop_mixes(sass: str) -> list[tuple[int, int, collections.Counter]]:
    """(start, end, instruction counts) of every loop, found as backward branches."""
    ins = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)(.*?);", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2), m.group(3)))
    loops = []
    for addr, op, args in ins:
        target = re.search(r"0x([0-9a-f]+)", args) if op.startswith("BRA") else None
        if target and int(target.group(1), 16) < addr:
            lo = int(target.group(1), 16)
            loops.append((lo, addr, collections.Counter(o.split(".")[0] for a, o, _ in ins if lo <= a <= addr)))
    return loops


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", default="int32", choices=sorted(ASM))
    p.add_argument("--config", default=None, help="BLOCK_M,BLOCK_N,warps,unroll,chunk_a,stages "
                                                   "(default: the dtype's entry of MINPLUS_CONFIG)")
    p.add_argument("--asm", type=int, default=None,
                   help="emission mode (default: what the drivers pick for the dtype on --arch)")
    p.add_argument("--arch", type=int, default=90, help="compute capability as 80, 86, 90, ...")
    p.add_argument("--dump", default=None, help="also write the whole SASS here")
    args = p.parse_args(argv)
    import torch

    capability = divmod(args.arch, 10)  # what the drivers pick on such a GPU
    if args.config:
        config = minplus.MinplusConfig(*(int(x) for x in args.config.split(",")))
    else:
        config = minplus.MinplusConfig(*minplus.default_config(getattr(torch, args.dtype), capability))
    asm = minplus.asm_mode(getattr(torch, args.dtype), capability) if args.asm is None else args.asm
    sass, usage = compile_sass(args.dtype, config, asm, args.arch)
    if args.dump:
        Path(args.dump).write_text(sass)
    print(f"{args.dtype} {tuple(config)} asm={asm} sm_{args.arch} triton {triton.__version__}: {usage}")
    for lo, hi, counts in loop_mixes(sass):
        total = sum(counts.values())
        top = ", ".join(f"{op} {c}" for op, c in counts.most_common(12))
        print(f"  loop {lo:#06x}-{hi:#06x}: {total} instructions: {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
