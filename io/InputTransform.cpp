#include "halo3d/io/InputTransform.hpp"

#include <cmath>
#include <sstream>

#include "halo3d/core/Error.hpp"

namespace halo3d {

void InputTransform::validate(index_t channels) const {
  if (scaling == Scaling::Constant)
    require<InputError>(std::isfinite(factor) && factor != 0.0f, "input scaling factor ", factor,
                        " must be finite and non-zero");
  if (scaling != Scaling::MeanStd) return;
  auto fits = [&](std::size_t n) { return n == 1 || index_t(n) == channels; };
  require<InputError>(fits(mean.size()) && fits(std.size()), "input scaling has ", mean.size(),
                      " means and ", std.size(), " standard deviations; expected 1 or ", channels,
                      " (one per channel)");
  for (float s : std)
    require<InputError>(std::isfinite(s) && s > 0.0f, "input scaling standard deviation ", s,
                        " must be positive");
}

void InputTransform::apply(index_t c, float* values, std::size_t count) const {
  if (log1p)
    for (std::size_t i = 0; i < count; ++i)
      values[i] = std::log1p(values[i]);
  if (scaling == Scaling::Constant) {
    for (std::size_t i = 0; i < count; ++i)
      values[i] *= factor;
  } else if (scaling == Scaling::MeanStd) {
    const float m = mean.size() == 1 ? mean[0] : mean[std::size_t(c)];
    const float inv = 1.0f / (std.size() == 1 ? std[0] : std[std::size_t(c)]);
    for (std::size_t i = 0; i < count; ++i)
      values[i] = (values[i] - m) * inv;
  }
}

namespace {

std::vector<float> parseList(const std::string& list, const std::string& text) {
  std::vector<float> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      std::size_t used = 0;
      out.push_back(std::stof(item, &used));
      require<InputError>(used == item.size(), "");
    } catch (const std::exception&) {
      throw InputError(concat("input transform '", text, "': '", item, "' is not a number"));
    }
  }
  require<InputError>(!out.empty(), "input transform '", text, "': empty list");
  return out;
}

}  // namespace

InputTransform InputTransform::parse(const std::string& text) {
  InputTransform t;
  std::string rest = text;
  if (rest == "none" || rest.empty()) return t;
  if (rest.rfind("log1p", 0) == 0) {
    t.log1p = true;
    rest = rest.substr(5);
    if (rest.empty()) return t;
    require<InputError>(rest[0] == '+', "input transform '", text,
                        "': expected log1p, log1p+constant:F or log1p+meanstd:M:S");
    rest = rest.substr(1);
  }
  if (rest.rfind("constant:", 0) == 0) {
    t.scaling = Scaling::Constant;
    t.factor = parseList(rest.substr(9), text).at(0);
    return t;
  }
  if (rest.rfind("meanstd:", 0) == 0) {
    const std::string lists = rest.substr(8);
    const auto colon = lists.find(':');
    require<InputError>(colon != std::string::npos, "input transform '", text,
                        "': expected meanstd:M1,M2,...:S1,S2,...");
    t.scaling = Scaling::MeanStd;
    t.mean = parseList(lists.substr(0, colon), text);
    t.std = parseList(lists.substr(colon + 1), text);
    return t;
  }
  throw InputError(
      concat("unknown input transform '", text,
             "' (expected none, log1p, constant:F, meanstd:M1,...:S1,... or log1p+...)"));
}

}  // namespace halo3d
