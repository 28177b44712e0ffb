#!/usr/bin/env python3
"""One 3D U-Net training step in PyTorch, the anchor of bench/nn/bench_unet_step.cpp.

The model is the U-Net family of tests/reference/README.md (the same as nn/models/UNet3d): per level two
blocks of (conv 3^3 pad 1 without bias, BatchNorm, ReLU), max-pool 2/2, a bottom that doubles the channels,
ConvTranspose 2^3/s2 without bias, concatenation [skip, upsampled], and a 1^3 conv with bias to the classes.
The step is forward, voxel-wise cross-entropy, backward and SGD with momentum, in float32.

    OMP_NUM_THREADS=2 python3 bench/nn/unet_torch.py --edge 64 --base 8 --depth 3 --batch 1 --steps 10

Prints one JSON line: {"framework": "pytorch", "threads": T, "samples_per_s": ..., "step_ms": [...]}.
The thread count is torch.set_num_threads(--threads, default $OMP_NUM_THREADS or 1).
"""
import argparse
import json
import os
import time

import torch
from torch import nn
from unet_step_args import add_unet_step_args


def block(cin, cout):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU())


class UNet3d(nn.Module):
    def __init__(self, in_channels, base, depth, classes):
        super().__init__()
        self.down = nn.ModuleList()
        channels, skips = in_channels, []
        for level in range(depth):
            mid, out = base << level, base << (level + 1)
            self.down.append(nn.Sequential(block(channels, mid), block(mid, out)))
            skips.append(out)
            channels = out
        self.pool = nn.MaxPool3d(2, 2)
        self.bottom = nn.Sequential(block(channels, channels), block(channels, 2 * channels))
        channels *= 2
        self.up, self.dec = nn.ModuleList(), nn.ModuleList()
        for j in range(depth):
            skip = skips[depth - 1 - j]
            self.up.append(nn.ConvTranspose3d(channels, channels, 2, stride=2, bias=False))
            self.dec.append(nn.Sequential(block(skip + channels, skip), block(skip, skip)))
            channels = skip
        self.out = nn.Conv3d(channels, classes, 1, bias=True)

    def forward(self, x):
        skips = []
        for down in self.down:
            x = down(x)
            skips.append(x)
            x = self.pool(x)
        x = self.bottom(x)
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([skips.pop(), up(x)], dim=1))
        return self.out(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_unet_step_args(p)
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--steps", type=int, default=10, help="timed steps (after one warm-up step)")
    p.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "1")))
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = UNet3d(1, a.base, a.depth, a.classes)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(a.batch, 1, a.edge, a.edge, a.edge) * 2 - 1
    y = torch.randint(0, a.classes, (a.batch, a.edge, a.edge, a.edge))

    def step():
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    step()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"framework": "pytorch", "threads": a.threads, "edge": a.edge, "base": a.base, "depth": a.depth,
                      "batch": a.batch, "samples_per_s": a.batch * len(times) / sum(times),
                      "step_ms": [round(t * 1e3, 2) for t in times]}))


if __name__ == "__main__":
    main()
