#!/usr/bin/env python3
"""One CosmoFlow training step in PyTorch (the anchor of bench_cosmoflow_step): the same model as
nn/models/CosmoFlow.cpp (7 bias-free 3^3 convolutions with LeakyReLU(0.01), average pooling 3/2/1 where halo3d
pools, flatten, dense head), MSE loss, Adam; float32 on the CPU with torch.set_num_threads(threads).

Usage: cosmoflow_torch.py [--size 64] [--width 0.25] [--batch 2] [--threads 2] [--steps 10] [--repeats 3]
Prints one line per repeat: "torch cosmoflow_step size=64 threads=2 samples_per_s=..."."""
import argparse
import time

import torch
from torch import nn


def cosmoflow(size, width, channels=4):
    def ch(c):
        return int(round(c * width))

    layers, c_in, vol = [], channels, size
    for i, c in enumerate([16, 32, 64, 128, 256, 256, 256]):
        stride = 2 if i == 3 else 1
        layers += [nn.Conv3d(c_in, ch(c), 3, stride=stride, padding=1, bias=False), nn.LeakyReLU(0.01)]
        vol = (vol + 2 - 3) // stride + 1
        scheduled = i < 5 or (i == 5 and size >= 256) or (i == 6 and size >= 512)
        if scheduled and vol > 2:
            layers.append(nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=True))
            vol = (vol + 2 - 3) // 2 + 1
        c_in = ch(c)
    head = nn.Sequential(nn.Flatten(), nn.Linear(c_in * vol ** 3, ch(2048)), nn.LeakyReLU(0.01),
                         nn.Linear(ch(2048), ch(256)), nn.LeakyReLU(0.01), nn.Linear(ch(256), 4))
    return nn.Sequential(nn.Sequential(*layers), head)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--width", type=float, default=0.25)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = cosmoflow(a.size, a.width)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.ones(a.batch, 4, a.size, a.size, a.size)
    y = torch.full((a.batch, 4), 0.5)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    step()  # warm-up
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        for _ in range(a.steps):
            step()
        dt = (time.perf_counter() - t0) / a.steps
        print(f"torch cosmoflow_step size={a.size} threads={a.threads} seconds_per_step={dt:.4f} "
              f"samples_per_s={a.batch / dt:.3f}", flush=True)


if __name__ == "__main__":
    main()
