#!/usr/bin/env python3
"""Writes one device's measured GEMM throughputs from XLA's GEMM table as CSV.

XLA's GPU cost model carries a table of measured GEMM FLOP/s by (b, m, n, k)
and operand types for several GPUs (xla.GemmPerfTable, Apache-2.0, The OpenXLA
Authors). Released builds of XLA embed it as text; this reads it straight out
of a JAX CUDA plugin wheel from PyPI, so the figures are those of a named
release, byte for byte:

    pip download --no-deps --only-binary=:all: jax-cuda13-pjrt==0.12.1
    bench/extract_xla_gemm_table.py jax_cuda13_pjrt-0.12.1-*.whl sm_100_B200 fp8 \
        > bench/data/xla_matmul_b200_fp8.csv

DTYPE is bf16, f32 or fp8 (FP8 E4M3 operands, bfloat16 output: what an FP8
linear layer's GEMMs are). The CSV's columns are those bench/gemm_model_check
reads: b,m,n,k,dtype,flops_per_s.
"""
import re
import sys
import zipfile

TABLE_KEYS = {
    "bf16": "bf16xbf16->bf16",
    "f32": "f32xf32->f32",
    "fp8": "f8e4m3fnxf8e4m3fn->bf16",
}
ENTRY = re.compile(r"entries \{\s*b: (\d+)\s*m: (\d+)\s*n: (\d+)\s*k: (\d+)"
                   r"((?:\s*flops \{ key: \"[^\"]*\" value: \d+ \})+)")
FLOPS = re.compile(r"key: \"([^\"]*)\" value: (\d+)")


def gemm_table_text(wheel):
    """The text of the GEMM table: the C string in a shared library that holds it."""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if not name.endswith(".so"):
                continue
            data = archive.read(name)
            at = data.find(b"proto-message: xla.GemmPerfTable")
            if at < 0:
                continue
            start = data.rfind(b"\0", 0, at) + 1
            end = data.find(b"\0", at)
            return name, data[start:end].decode("ascii")
    sys.exit(f"extract_xla_gemm_table: no xla.GemmPerfTable in {wheel}")


def device_section(text, device):
    sections = re.split(r"\nentries \{\n  key: \"([^\"]*)\"", text)
    for key, body in zip(sections[1::2], sections[2::2]):
        if key == device:
            return body
    found = ", ".join(sections[1::2])
    sys.exit(f"extract_xla_gemm_table: no device \"{device}\" in the table (it has {found})")


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in TABLE_KEYS:
        sys.exit(__doc__)
    wheel, device, dtype = sys.argv[1:]
    library, text = gemm_table_text(wheel)
    body = device_section(text, device)
    wheel_name = wheel.rsplit("/", 1)[-1]
    print(f"# Source: XLA's GEMM table (xla.GemmPerfTable), as built into {wheel_name}")
    print(f"#   ({library}; PyPI: pip download --no-deps jax-cuda13-pjrt==0.12.1)")
    print("# Licence: Apache-2.0, Copyright The OpenXLA Authors")
    print(f"# Device key: \"{device}\"; dtype {dtype} = table key \"{TABLE_KEYS[dtype]}\"")
    print("# flops_per_s: measured throughput in FLOP/s, FLOPs counted as 2*b*m*n*k")
    print(f"# Extracted by bench/extract_xla_gemm_table.py {wheel_name} {device} {dtype}")
    print("b,m,n,k,dtype,flops_per_s")
    rows = 0
    for entry in ENTRY.finditer(body):
        flops = dict(FLOPS.findall(entry.group(5)))
        if TABLE_KEYS[dtype] in flops:
            b, m, n, k = entry.groups()[:4]
            print(f"{b},{m},{n},{k},{dtype},{flops[TABLE_KEYS[dtype]]}")
            rows += 1
    if rows == 0:
        sys.exit(f"extract_xla_gemm_table: \"{device}\" has no {dtype} GEMMs")


if __name__ == "__main__":
    main()
