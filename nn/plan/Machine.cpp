#include "halo3d/nn/plan/Machine.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "halo3d/core/Error.hpp"

namespace halo3d::nn {

namespace {

using Json = nlohmann::json;

// Reads machine-file keys with errors that name the file and the key's path.
struct Reader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(concat("machine file '", file, "': ", key, ": ", what));
  }
  const Json& member(const Json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path.empty() ? key : path + "." + key, "is missing");
    return *it;
  }
  double number(const Json& obj, const std::string& path, const char* key, double lo,
                double hi) const {
    const Json& v = member(obj, path, key);
    const std::string name = path.empty() ? key : path + "." + key;
    if (!v.is_number()) fail(name, concat("must be a number, found ", v.dump()));
    const double x = v.get<double>();
    if (!(x >= lo && x <= hi)) fail(name, concat("must lie in [", lo, ", ", hi, "], found ", x));
    return x;
  }
  std::string text(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = member(obj, path, key);
    if (!v.is_string()) fail(path.empty() ? key : path + "." + key, "must be a string");
    return v.get<std::string>();
  }
  Link link(const Json& links, const char* key) const {
    const std::string path = std::string("links.") + key;
    const Json& l = member(links, "links", key);
    return Link{number(l, path, "alpha_s", 0, 1), number(l, path, "beta_s_per_byte", 0, 1)};
  }
  std::array<double, 2> band(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = member(obj, path, key);
    const std::string name = path + "." + key;
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
      fail(name, "must be [low, high], two numbers");
    const std::array<double, 2> b{v[0].get<double>(), v[1].get<double>()};
    if (!(b[0] > 0 && b[0] <= b[1] && b[1] <= 1)) fail(name, "must satisfy 0 < low <= high <= 1");
    return b;
  }
  Shape5 shape(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = member(obj, path, key);
    const std::string name = path + "." + key;
    if (!v.is_array() || v.size() != 5) fail(name, "must be [n, c, d, h, w]");
    Shape5 s{};
    for (std::size_t i = 0; i < 5; ++i) {
      if (!v[i].is_number_integer() || v[i].get<index_t>() < 0)
        fail(name, "must hold five non-negative integers");
      s[i] = v[i].get<index_t>();
    }
    return s;
  }
  std::array<int, 3> neighbours(const Json& obj, const std::string& path) const {
    const Json& v = member(obj, path, "neighbours");
    const std::string name = path + ".neighbours";
    if (!v.is_array() || v.size() != 3) fail(name, "must be [d, h, w]");
    std::array<int, 3> s{};
    for (std::size_t i = 0; i < 3; ++i) {
      if (!v[i].is_number_integer() || v[i].get<int>() < 0 || v[i].get<int>() > 3)
        fail(name, "must hold three integers in 0..3 (1: a neighbour below, 2: above, 3: both)");
      s[i] = v[i].get<int>();
    }
    return s;
  }
};

Json timingJson(const LayerTiming& t) {
  Json j{{"layer", t.layer},     {"input", t.input},         {"output", t.output},
         {"threads", t.threads}, {"forward_s", t.forward_s}, {"backward_s", t.backward_s}};
  // Written only where it is not all zero, so that the files of whole-block timings stay as they
  // were.
  if (t.neighbours != std::array<int, 3>{0, 0, 0}) j["neighbours"] = t.neighbours;
  return j;
}

}  // namespace

Machine Machine::load(const std::string& path) {
  std::ifstream in(path);
  require<InputError>(bool(in), "machine file '", path, "' cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  Json j;
  try {
    j = Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw InputError(concat("machine file '", path, "' is not valid JSON: ", e.what()));
  }
  const Reader r{path};
  Machine m;
  m.path = path;
  m.document = text.str();
  m.name = r.text(j, "", "name");
  m.cores_per_node = int(r.number(j, "", "cores_per_node", 1, 1 << 20));
  m.devices_per_node = int(r.number(j, "", "devices_per_node", 0, 1024));
  const Json& links = r.member(j, "", "links");
  m.shared_memory = r.link(links, "shared_memory");
  m.network = r.link(links, "network");
  m.reduction_gamma_s_per_byte =
      r.number(r.member(j, "", "reduction"), "reduction", "gamma_s_per_byte", 0, 1);
  m.io_read_bytes_per_s = r.number(r.member(j, "", "io"), "io", "read_bytes_per_s", 1, 1e15);
  if (j.contains("scheduler"))
    m.scheduler_slice_s = r.number(r.member(j, "", "scheduler"), "scheduler", "slice_s", 0, 10);
  if (j.contains("core_pacing"))
    m.core_pacing = r.number(r.member(j, "", "core_pacing"), "core_pacing", "fraction", 0, 1);
  const Json& compute = r.member(j, "", "compute");
  const std::string kind = r.text(compute, "compute", "kind");
  if (kind == "roofline") {
    m.calibrated = false;
    RooflineCompute c;
    c.peak_flops = r.number(compute, "compute", "peak_flops", 1, 1e20);
    c.memory_bytes_per_s = r.number(compute, "compute", "memory_bytes_per_s", 1, 1e16);
    c.conv_efficiency = r.band(compute, "compute", "conv_efficiency");
    c.memory_efficiency = r.band(compute, "compute", "memory_efficiency");
    c.launch_s = r.number(compute, "compute", "launch_s", 0, 1);
    m.roofline = c;
  } else if (kind != "calibrated") {
    r.fail("compute.kind", concat("must be \"calibrated\" or \"roofline\", found \"", kind, "\""));
  }
  if (j.contains("layers")) {
    const Json& layers = j["layers"];
    if (!layers.is_array()) r.fail("layers", "must be an array");
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const std::string p = concat("layers[", i, "]");
      LayerTiming t;
      t.layer = r.text(layers[i], p, "layer");
      t.input = r.shape(layers[i], p, "input");
      t.output = r.shape(layers[i], p, "output");
      t.threads = int(r.number(layers[i], p, "threads", 1, 1 << 16));
      t.forward_s = r.number(layers[i], p, "forward_s", 0, 1e6);
      t.backward_s = r.number(layers[i], p, "backward_s", 0, 1e6);
      if (layers[i].contains("neighbours")) t.neighbours = r.neighbours(layers[i], p);
      m.layers.push_back(t);
    }
  }
  return m;
}

void Machine::save(const std::string& out_path) const {
  Json j = document.empty() ? Json::object() : Json::parse(document);
  Json layers = Json::array();
  for (const LayerTiming& t : this->layers)
    layers.push_back(timingJson(t));
  j["layers"] = layers;
  if (!link_source.empty()) {
    j["links"]["shared_memory"] = Json{{"alpha_s", shared_memory.alpha_s},
                                       {"beta_s_per_byte", shared_memory.beta_s_per_byte},
                                       {"source", link_source}};
    j["reduction"] =
        Json{{"gamma_s_per_byte", reduction_gamma_s_per_byte}, {"source", link_source}};
  }
  if (!scheduler_source.empty())
    j["scheduler"] = Json{{"slice_s", scheduler_slice_s}, {"source", scheduler_source}};
  const std::string tmp = out_path + ".tmp";
  {
    std::ofstream out(tmp);
    require<InputError>(bool(out), "cannot write machine file '", tmp, "'");
    out << j.dump(2) << '\n';
    require<InputError>(bool(out), "writing machine file '", tmp, "' failed");
  }
  require<InputError>(std::rename(tmp.c_str(), out_path.c_str()) == 0, "cannot rename '", tmp,
                      "' to '", out_path, "'");
}

const LayerTiming* Machine::find(const std::string& layer, const Shape5& input,
                                 const Shape5& output, int threads,
                                 const std::array<int, 3>& neighbours) const {
  for (const LayerTiming& t : layers)
    if (t.layer == layer && t.input == input && t.output == output && t.threads == threads &&
        t.neighbours == neighbours)
      return &t;
  return nullptr;
}

void Machine::record(const LayerTiming& timing) {
  for (LayerTiming& t : layers)
    if (t.layer == timing.layer && t.input == timing.input && t.output == timing.output &&
        t.threads == timing.threads && t.neighbours == timing.neighbours) {
      t = timing;
      return;
    }
  layers.push_back(timing);
}

}  // namespace halo3d::nn
