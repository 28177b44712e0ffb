#!/usr/bin/env python3
"""halo3d against PyTorch on one 3D U-Net training step, in turns, on the same machine in the same run.

    python3 bench/nn/compare_unet_torch.py --bench build/bench/nn/bench_unet_step --rounds 3 --threads 2

Each round runs, one after the other (shared machines drift, so the variants alternate instead of running in
blocks):
  - halo3d, 1 rank x T threads       (bench_unet_step, grid 1x1x1x1)
  - PyTorch, T threads                (bench/nn/unet_torch.py)
  - halo3d, T ranks x 1 thread        (mpirun -np T, grid 1xTx1x1: spatial parallelism)
and prints the median samples/s of each and the ratios halo3d / PyTorch and spatial / threaded.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from unet_step_args import add_unet_step_args

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return out


def halo3d(bench, ranks, threads, args, min_time):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    cmd = []
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
    edge, base, depth, batch = args
    cmd += [bench, f"--benchmark_filter=unetStep/edge:{edge}/base:{base}/depth:{depth}/batch:{batch}/",
            f"--benchmark_min_time={min_time}", "--benchmark_format=json"]
    report = json.loads(run(cmd, env))
    return report["benchmarks"][0]["samples_per_s"]


def torch(threads, args, steps):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    edge, base, depth, batch = args
    cmd = [sys.executable, os.path.join(HERE, "unet_torch.py"), "--edge", str(edge), "--base", str(base),
           "--depth", str(depth), "--batch", str(batch), "--steps", str(steps), "--threads", str(threads)]
    return json.loads(run(cmd, env).strip().splitlines()[-1])["samples_per_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", required=True, help="the bench_unet_step binary")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    add_unet_step_args(p)
    p.add_argument("--min-time", type=float, default=5.0, help="Google Benchmark --benchmark_min_time")
    p.add_argument("--torch-steps", type=int, default=10)
    a = p.parse_args()
    args = (a.edge, a.base, a.depth, a.batch)
    rates = {"halo3d_threads": [], "pytorch": [], "halo3d_spatial": []}
    for r in range(a.rounds):
        rates["halo3d_threads"].append(halo3d(a.bench, 1, a.threads, args, a.min_time))
        rates["pytorch"].append(torch(a.threads, args, a.torch_steps))
        rates["halo3d_spatial"].append(halo3d(a.bench, a.threads, 1, args, a.min_time))
        print(f"round {r + 1}: " + "  ".join(f"{k} {v[-1]:.3f}" for k, v in rates.items()), flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"U-Net step {a.edge}^3, base {a.base}, depth {a.depth}, batch {a.batch}; samples/s, median of "
          f"{a.rounds} rounds")
    print(f"  halo3d 1 rank x {a.threads} threads   {med['halo3d_threads']:.3f}")
    print(f"  PyTorch {a.threads} threads            {med['pytorch']:.3f}")
    print(f"  halo3d {a.threads} ranks x 1 thread   {med['halo3d_spatial']:.3f}  (grid 1x{a.threads}x1x1)")
    print(f"  halo3d / PyTorch (threads)         {med['halo3d_threads'] / med['pytorch']:.2f}")
    print(f"  halo3d spatial / halo3d threads    {med['halo3d_spatial'] / med['halo3d_threads']:.2f}")
    print(json.dumps({"median_samples_per_s": med, "rounds": rates}))


if __name__ == "__main__":
    main()
