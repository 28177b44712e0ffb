#include "halo3d/apps/sweep/SweepReport.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryInfo.hpp"
#include "halo3d/io/IoError.hpp"

namespace halo3d::apps {

namespace {

using nlohmann::json;

// A value at a JSON pointer ("/times/compute"), or null.
const json& at(const json& j, const std::string& pointer) {
  static const json null;
  const json::json_pointer p(pointer);
  return j.contains(p) ? j.at(p) : null;
}

struct Column {
  std::string name, pointer;
};

const std::vector<Column>& columns() {
  static const std::vector<Column> c{{"grid", "/grid"},
                                     {"status", "/status"},
                                     {"measured_step_s", "/measured_step_s"},
                                     {"min_step_s", "/step_s/min"},
                                     {"max_step_s", "/step_s/max"},
                                     {"compute_s", "/times/compute"},
                                     {"halo_wait_s", "/times/halo_wait"},
                                     {"redistribute_s", "/times/redistribute"},
                                     {"allreduce_s", "/times/allreduce"},
                                     {"io_s", "/times/io"},
                                     {"other_s", "/times/other"},
                                     {"halo_bytes", "/halo_bytes"},
                                     {"halo_messages", "/halo_messages"},
                                     {"peak_bytes", "/peak_bytes"},
                                     {"predicted_step_s", "/predicted_step_s"},
                                     {"predicted_compute_s", "/predicted/compute"},
                                     {"predicted_halo_s", "/predicted/halo"},
                                     {"predicted_redistribute_s", "/predicted/redistribute"},
                                     {"predicted_allreduce_s", "/predicted/allreduce"},
                                     {"predicted_io_s", "/predicted/io"},
                                     {"predicted_peak_bytes", "/predicted_peak_bytes"},
                                     {"note", "/note"}};
  return c;
}

std::string csvCell(const json& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  const std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}

std::string seconds(const json& v) {
  if (!v.is_number()) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
  return buf;
}

std::string bytes(const json& v) {
  return v.is_number() ? formatBytes(v.get<double>()) : "";
}

std::string mdCell(std::string s) {
  std::string out;
  for (char c : s)
    out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
  return out;
}

void writeWhole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    require<IoError>(bool(out), "cannot write '", tmp, "'");
    out << text;
    out.close();
    require<IoError>(bool(out), "writing '", tmp, "' failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  require<IoError>(!ec, "cannot rename '", tmp, "' to '", path, "': ", ec.message());
}

}  // namespace

const std::vector<std::string>& sweepCsvColumns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Column& c : columns())
      n.push_back(c.name);
    return n;
  }();
  return names;
}

std::string sweepMarkdown(const std::vector<json>& records, const std::string& title) {
  std::ostringstream md;
  md << "# " << title << "\n\n"
     << "Step times in seconds: the slowest rank's step, the median of each round's measured steps "
        "averaged over the rounds (min-max of all steps beside it); phases are the largest rank's "
        "seconds per step; halo is what one rank sends per step (the busiest); peak is the largest "
        "rank's tracked allocations.\n\n"
     << "| grid | step | min-max | compute | halo wait | redistribute | allreduce | I/O | halo "
        "per rank | peak | predicted step | predicted peak | note |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const json& r : records) {
    const std::string status = at(r, "/status").is_string() ? r["status"].get<std::string>() : "";
    std::string halo;
    if (at(r, "/halo_bytes").is_number())
      halo = bytes(r["halo_bytes"]) + " / " + seconds(r["halo_messages"]) + " msgs";
    std::string range;
    if (at(r, "/step_s/min").is_number())
      range = seconds(at(r, "/step_s/min")) + "-" + seconds(at(r, "/step_s/max"));
    std::string note = at(r, "/note").is_string() ? r["note"].get<std::string>() : "";
    if (status != "measured") note = status + (note.empty() ? "" : ": " + note);
    md << "| " << at(r, "/grid").get<std::string>() << " | " << seconds(at(r, "/measured_step_s"))
       << " | " << range << " | " << seconds(at(r, "/times/compute")) << " | "
       << seconds(at(r, "/times/halo_wait")) << " | " << seconds(at(r, "/times/redistribute"))
       << " | " << seconds(at(r, "/times/allreduce")) << " | " << seconds(at(r, "/times/io"))
       << " | " << halo << " | " << bytes(at(r, "/peak_bytes")) << " | "
       << seconds(at(r, "/predicted_step_s")) << " | " << bytes(at(r, "/predicted_peak_bytes"))
       << " | " << mdCell(note) << " |\n";
  }
  return md.str();
}

void writeSweepReports(const std::string& dir, const std::vector<json>& records,
                       const std::string& title) {
  std::string jsonl;
  for (const json& r : records)
    jsonl += r.dump() + "\n";
  std::string csv;
  for (const Column& c : columns())
    csv += (csv.empty() ? "" : ",") + c.name;
  csv += "\n";
  for (const json& r : records) {
    std::string row;
    bool first = true;
    for (const Column& c : columns()) {
      row += (first ? "" : ",") + csvCell(at(r, c.pointer));
      first = false;
    }
    csv += row + "\n";
  }
  writeWhole(dir + "/sweep.jsonl", jsonl);
  writeWhole(dir + "/sweep.csv", csv);
  writeWhole(dir + "/sweep.md", sweepMarkdown(records, title));
}

}  // namespace halo3d::apps
