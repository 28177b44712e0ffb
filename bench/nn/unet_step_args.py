"""The U-Net step configuration that bench/nn/unet_torch.py and bench/nn/compare_unet_torch.py both take (the
issue's 64^3 input, base 8, depth 3, batch 1, as bench_unet_step's timed configuration), so that their
defaults cannot drift apart. Both scripts run from their own folder, which Python puts on the import path."""

UNET_STEP_DEFAULTS = (("edge", 64), ("base", 8), ("depth", 3), ("batch", 1))


def add_unet_step_args(parser):
    for name, default in UNET_STEP_DEFAULTS:
        parser.add_argument("--" + name, type=int, default=default)
