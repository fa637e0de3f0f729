#!/usr/bin/env python3
"""Writes the torch.save files the mapped --data loader is tested on
(tests/backend/mapped_tensor_test.cpp), with Debian's python3-torch:

    saved_tensors.py OUTPUT_FOLDER
"""
import os
import sys
import zipfile

import torch


def rewrite(source, target, compression, pad_to=None):
    """Copies the archive `source` entry by entry with `compression`. With
    `pad_to` = (alignment, remainder), an entry inserted after data.pkl puts
    the first storage record at that remainder (misaligned on purpose)."""
    with zipfile.ZipFile(source) as src:
        infos = src.infolist()
        names = [i.filename for i in infos]
        prefix = names[0].split("/")[0] + "/"
        for pad in range(64):
            with zipfile.ZipFile(target, "w", compression) as dst:
                for name in names:
                    dst.writestr(name, src.read(name))
                    if pad_to and name.endswith("data.pkl"):
                        dst.writestr(prefix + "pad", b"\0" * pad)
            if not pad_to:
                return
            with zipfile.ZipFile(target) as check:
                info = check.getinfo(prefix + "data/0")
                offset = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
                if offset % pad_to[0] == pad_to[1]:
                    return
    raise RuntimeError("no padding puts the record where it was asked")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.save(torch.randn(6, 5), os.path.join(out, "float32.pt"))
    torch.save(torch.randn(6, 5, dtype=torch.float64), os.path.join(out, "float64.pt"))
    torch.save(torch.randint(-1000, 1000, (7, 3)), os.path.join(out, "int64.pt"))
    # Views: torch.save writes the whole storage and the view's offset and
    # strides.
    torch.save(torch.randn(5, 6).t(), os.path.join(out, "transposed.pt"))
    torch.save(torch.randn(10, 4)[3:8], os.path.join(out, "slice.pt"))
    torch.save(torch.randn(6, 8, dtype=torch.float64)[1:, 2:5], os.path.join(out, "columns.pt"))
    torch.save(torch.tensor(3.0), os.path.join(out, "zero-dim.pt"))
    torch.save({"x": torch.randn(2), "y": torch.randn(3)}, os.path.join(out, "dict.pt"))
    # The same archives laid out otherwise than torch.save does.
    rewrite(os.path.join(out, "float32.pt"), os.path.join(out, "deflated.pt"),
            zipfile.ZIP_DEFLATED)
    rewrite(os.path.join(out, "float64.pt"), os.path.join(out, "misaligned.pt"),
            zipfile.ZIP_STORED, pad_to=(8, 4))
    rewrite(os.path.join(out, "float32.pt"), os.path.join(out, "big-endian.pt"),
            zipfile.ZIP_STORED)
    with zipfile.ZipFile(os.path.join(out, "big-endian.pt"), "a") as z:
        z.writestr("float32/byteorder", b"big")
    # A folder for an MLP of width 16 (mse): float32 inputs saved as a
    # transposed view, float64 targets.
    data = os.path.join(out, "mlp-data")
    os.makedirs(data, exist_ok=True)
    torch.save(torch.randn(16, 20).t(), os.path.join(data, "inputs.pt"))
    torch.save(torch.randn(20, 16, dtype=torch.float64), os.path.join(data, "targets.pt"))


if __name__ == "__main__":
    main()
