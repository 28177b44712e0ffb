#pragma once
// The results of a sweep, one JSON object per grid (Sweep.hpp lists the keys), written as
// DIR/sweep.jsonl (those objects, one a line), DIR/sweep.csv (one row per grid, the figures of
// merit) and DIR/sweep.md (a Markdown table for people). Each file is written whole to a temporary
// name and renamed, so a reader never sees half a file.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace halo3d::apps {

// The CSV columns, in order (the JSON keys they come from are in SweepReport.cpp).
const std::vector<std::string>& sweepCsvColumns();
// The Markdown table of `records`.
std::string sweepMarkdown(const std::vector<nlohmann::json>& records, const std::string& title);
// Writes the three files into `dir` (which must exist). Throws IoError naming a file that cannot be
// written.
void writeSweepReports(const std::string& dir, const std::vector<nlohmann::json>& records,
                       const std::string& title);

}  // namespace halo3d::apps
