#!/usr/bin/env python3
"""Convert halo3d checkpoints (HDF5) to PyTorch files and back.

halo3d checkpoints hold every parameter in global layout under PyTorch state_dict names, so a checkpoint is a
state_dict plus the optimizer state, counters, scalars and the run config (docs/data-format.md).

  checkpoint_to_torch.py to-torch   CKPT.h5 OUT.pt [--full]
      OUT.pt is the model state_dict (name -> tensor), loadable with model.load_state_dict(torch.load(OUT.pt)).
      With --full it is a dict {"model", "optimizer", "counters", "scalars", "config"}.
  checkpoint_to_torch.py from-torch IN.pt OUT.h5 [--like CKPT.h5]
      IN.pt is a state_dict or a --full dict. Sections it lacks (optimizer, counters, scalars, config) are
      taken from --like if given, empty otherwise. OUT.h5 is written to a temporary name and renamed, with the
      completion marker and checksum that halo3d checks.
  checkpoint_to_torch.py verify CKPT.h5
      Checks the completion marker and the checksum, and prints a summary.

Needs numpy, h5py and (except for verify) torch.
"""
import argparse
import collections
import os
import sys
import zlib

import h5py
import numpy as np

FORMAT = b"halo3d-checkpoint"
VERSION = 1
MARKER = "halo3d_crc32"
ARRAY_SECTIONS = ("model", "optimizer")
DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64}


def empty_state():
    return {"model": {}, "optimizer": {}, "counters": {}, "scalars": {}, "config": ""}


def checksum(state):
    """CRC-32 of the canonical byte stream (io/CheckpointFile.hpp: checkpointChecksum)."""
    crc = 0
    for section in ARRAY_SECTIONS:
        for name in sorted(state[section], key=lambda s: s.encode()):
            a = np.asarray(state[section][name], order="C")
            head = f"{section}/{name}".encode() + b"\0" + a.dtype.name.encode() + b"\0"
            dims = np.array([a.ndim, *a.shape], dtype="<i8").tobytes()
            crc = zlib.crc32(head + dims, crc)
            crc = zlib.crc32(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(), crc)
    for name in sorted(state["counters"], key=lambda s: s.encode()):
        crc = zlib.crc32(f"counters/{name}".encode() + b"\0" + np.int64(state["counters"][name]).astype("<i8").tobytes(), crc)
    for name in sorted(state["scalars"], key=lambda s: s.encode()):
        crc = zlib.crc32(f"scalars/{name}".encode() + b"\0" + np.float64(state["scalars"][name]).astype("<f8").tobytes(), crc)
    crc = zlib.crc32(b"config\0" + state["config"].encode(), crc)
    return crc & 0xFFFFFFFF


def read_checkpoint(path):
    """The state of a halo3d checkpoint; raises ValueError naming the file if it is invalid."""
    with h5py.File(path, "r") as f:
        fmt = f.attrs.get("format")
        if fmt is None or bytes(np.bytes_(fmt)).rstrip(b"\0") != FORMAT:
            raise ValueError(f"'{path}' is not a halo3d checkpoint")
        if MARKER not in f.attrs:
            raise ValueError(f"checkpoint '{path}' has no completion marker: it was not completely written")
        state = empty_state()
        for section in ARRAY_SECTIONS:
            for name, dset in f[section].items():
                a = dset[()]
                state[section][name] = np.asarray(a)
        state["counters"] = {k: int(v[()]) for k, v in f["counters"].items()}
        state["scalars"] = {k: float(v[()]) for k, v in f["scalars"].items()}
        state["config"] = bytes(f["config"][()]).rstrip(b"\0").decode()
        stored = int(f.attrs[MARKER])
    computed = checksum(state)
    if computed != stored:
        raise ValueError(f"checkpoint '{path}' is corrupt: content checksum {computed} differs from the stored {stored}")
    return state


def write_checkpoint(path, state):
    """Writes `state` in halo3d's layout, through a temporary file renamed into place."""
    for section in (*ARRAY_SECTIONS, "counters", "scalars"):
        for name in state[section]:
            if not name or name in (".", "..") or "/" in name:
                raise ValueError(f"checkpoint {section} entry '{name}': names must be non-empty, without '/'")
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), "." + os.path.basename(path) + f".tmp-{os.getpid()}")
    try:
        with h5py.File(tmp, "w", track_order=False) as f:
            f.attrs.create("format", np.bytes_(FORMAT))
            f.attrs.create("version", np.int64(VERSION))
            for section in ARRAY_SECTIONS:
                g = f.create_group(section, track_order=False)
                for name, a in sorted(state[section].items()):
                    a = np.asarray(a, order="C")  # ascontiguousarray would turn scalars into (1,)
                    if a.dtype.name not in DTYPES:
                        raise ValueError(f"{section} entry '{name}' has dtype {a.dtype}; expected float32, float64 or int64")
                    g.create_dataset(name, data=a, track_times=False)
            g = f.create_group("counters")
            for name, v in state["counters"].items():
                g.create_dataset(name, data=np.int64(v), track_times=False)
            g = f.create_group("scalars")
            for name, v in state["scalars"].items():
                g.create_dataset(name, data=np.float64(v), track_times=False)
            config = state["config"].encode()
            f.create_dataset("config", data=np.array(config or b"\0", dtype=f"S{max(1, len(config))}"), track_times=False)
            f.attrs.create(MARKER, np.uint32(checksum(state)))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def to_torch(args):
    import torch

    state = read_checkpoint(args.checkpoint)
    model = collections.OrderedDict((k, torch.from_numpy(np.array(v))) for k, v in sorted(state["model"].items()))
    if args.full:
        out = {
            "model": model,
            "optimizer": collections.OrderedDict((k, torch.from_numpy(np.array(v))) for k, v in sorted(state["optimizer"].items())),
            "counters": dict(state["counters"]),
            "scalars": dict(state["scalars"]),
            "config": state["config"],
        }
    else:
        out = model
    torch.save(out, args.output)
    print(f"wrote {args.output}: {len(model)} model tensors" + (f", {len(state['optimizer'])} optimizer tensors" if args.full else ""))


def from_torch(args):
    import torch

    loaded = torch.load(args.input, map_location="cpu")
    state = read_checkpoint(args.like) if args.like else empty_state()
    full = isinstance(loaded, dict) and "model" in loaded and isinstance(loaded["model"], dict)
    tensors = lambda d: {k: v.detach().cpu().numpy() for k, v in d.items()}
    state["model"] = tensors(loaded["model"] if full else loaded)
    if full:
        state["optimizer"] = tensors(loaded.get("optimizer", {}))
        state["counters"] = {k: int(v) for k, v in loaded.get("counters", {}).items()}
        state["scalars"] = {k: float(v) for k, v in loaded.get("scalars", {}).items()}
        state["config"] = str(loaded.get("config", ""))
    write_checkpoint(args.output, state)
    print(f"wrote {args.output}: {len(state['model'])} model tensors")


def verify(args):
    state = read_checkpoint(args.checkpoint)
    print(f"ok: {args.checkpoint}: {len(state['model'])} model tensors, {len(state['optimizer'])} optimizer tensors, "
          f"counters {state['counters']}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("to-torch", help="halo3d checkpoint -> PyTorch state_dict file")
    a.add_argument("checkpoint")
    a.add_argument("output")
    a.add_argument("--full", action="store_true", help="save optimizer, counters, scalars and config too")
    a.set_defaults(run=to_torch)
    b = sub.add_parser("from-torch", help="PyTorch state_dict file -> halo3d checkpoint")
    b.add_argument("input")
    b.add_argument("output")
    b.add_argument("--like", help="take the sections IN.pt lacks from this checkpoint")
    b.set_defaults(run=from_torch)
    c = sub.add_parser("verify", help="check a checkpoint's completion marker and checksum")
    c.add_argument("checkpoint")
    c.set_defaults(run=verify)
    args = p.parse_args(argv)
    try:
        args.run(args)
    except (ValueError, OSError) as e:
        print(f"checkpoint_to_torch.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
