#pragma once
// --config FILE: flags from a TOML/INI-style file, strictly. Each line is `flag = value` (the
// flag's long name without dashes; `_` may stand for `-`), a `[subcommand]` section header, a
// comment (# or ;) or blank. Keys before any section apply to the subcommand being run; keys under
// `[train]`, `[eval]`, ... apply only when that subcommand runs (they are checked in any case).
// Flags on the command line win over the file. An unknown key or section, a line of any other form
// (JSON, binary data), a key set twice, or a value the flag rejects is an error naming the file,
// the line and the key.
//
//   # run.toml                      cosmoflow --config run.toml train --steps 100
//   batch = 16
//   data = /scratch/train
//   [eval]
//   data = /scratch/val

#include <CLI/CLI.hpp>

namespace halo3d::apps {

// Adds --config to `app` (and lets each subcommand pass it up, so that it may also follow the
// subcommand name). Call after the subcommands and their flags exist.
void addConfigFile(CLI::App& app);

}  // namespace halo3d::apps
