#include "halo3d/apps/common/TestFault.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>

#include "halo3d/apps/common/Preemption.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::apps {

TestFault TestFault::fromEnvironment() {
  const char* spec = std::getenv("HALO3D_TEST_FAULT");
  return parse(spec ? spec : "");
}

TestFault TestFault::parse(const std::string& spec) {
  TestFault f;
  if (spec.empty()) return f;
  auto bad = [&](const std::string& why) {
    return InputError(concat("HALO3D_TEST_FAULT='", spec, "': ", why,
                             " (expected sleep:rank=R:step=S:seconds=T or "
                             "signal:rank=R:step=S:signal=USR1|TERM)"));
  };
  std::istringstream in(spec);
  std::string kind, field;
  std::getline(in, kind, ':');
  std::map<std::string, std::string> fields;
  while (std::getline(in, field, ':')) {
    const auto eq = field.find('=');
    if (eq == std::string::npos) throw bad("'" + field + "' is not key=value");
    fields[field.substr(0, eq)] = field.substr(eq + 1);
  }
  auto number = [&](const char* key) {
    const auto it = fields.find(key);
    if (it == fields.end()) throw bad(std::string("no ") + key);
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0') throw bad(std::string("bad ") + key);
    return v;
  };
  f._rank = int(number("rank"));
  f._step = long(number("step"));
  if (kind == "sleep") {
    f._kind = Kind::Sleep;
    f._seconds = number("seconds");
  } else if (kind == "signal") {
    f._kind = Kind::Signal;
    const std::string s = fields.count("signal") ? fields["signal"] : "";
    if (s == "USR1")
      f._signal = SIGUSR1;
    else if (s == "TERM")
      f._signal = SIGTERM;
    else
      throw bad("signal must be USR1 or TERM");
  } else {
    throw bad("unknown fault '" + kind + "'");
  }
  return f;
}

void TestFault::at(int rank, long step) const {
  if (_kind == Kind::None || rank != _rank || step != _step) return;
  if (_kind == Kind::Signal) {
    std::raise(_signal);
    return;
  }
  ScopedActivity activity("test fault: sleeping");
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(_seconds);
  while (std::chrono::steady_clock::now() < end && PreemptionSignals::received() == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace halo3d::apps
