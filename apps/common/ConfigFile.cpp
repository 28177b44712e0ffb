#include "halo3d/apps/common/ConfigFile.hpp"

#include <algorithm>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace halo3d::apps {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 || c == '\t' || c == '\r';
  });
}

// A value without its quotes, or without a trailing comment when unquoted.
std::string unquote(const std::string& v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.substr(1, v.size() - 2);
  const auto comment = v.find(" #");
  return comment == std::string::npos ? v : trim(v.substr(0, comment));
}

// Parses strictly (see ConfigFile.hpp) and keeps the items of the subcommand being run.
class StrictConfig : public CLI::Config {
 public:
  explicit StrictConfig(CLI::App* app) : _app(app) {}

  std::string to_config(const CLI::App* app, bool default_also, bool write_description,
                        std::string prefix) const override {
    return CLI::ConfigTOML().to_config(app, default_also, write_description, std::move(prefix));
  }

  std::vector<CLI::ConfigItem> from_config(std::istream& in) const override {
    const std::string file = _app->get_config_ptr()->as<std::string>();
    const std::vector<CLI::App*> running = _app->get_subcommands();
    CLI::App* current = running.empty() ? _app : running.front();
    CLI::App* section = current;
    std::map<std::string, int> seen;  // "<section>.<key>" -> line ("" for no section)
    std::map<std::string, std::pair<std::string, bool>> values;  // key -> (value, from a section)
    bool in_section = false;
    std::string line;
    auto fail = [&](int n, const std::string& what) {
      throw CLI::ConfigError("--config " + file + ", line " + std::to_string(n) + ": " + what);
    };
    for (int n = 1; std::getline(in, line); ++n) {
      if (!printable(line)) fail(n, "not text (binary data?)");
      const std::string t = trim(line);
      if (t.empty() || t[0] == '#' || t[0] == ';') continue;
      if (t.front() == '[') {
        const std::string name = trim(t.substr(1, t.size() - 2));
        if (t.back() != ']' || name.empty()) fail(n, "'" + t + "' is not a [section] header");
        section = subcommand(name);
        if (section == nullptr) fail(n, "unknown section [" + name + "]" + sectionsHint());
        in_section = true;
        continue;
      }
      const auto eq = t.find('=');
      if (eq == std::string::npos || eq == 0)
        fail(n, "'" + t + "' is not of the form `flag = value`");
      std::string key = trim(t.substr(0, eq));
      std::replace(key.begin(), key.end(), '_', '-');
      const bool known = key != "help" && (section->get_option_no_throw("--" + key) != nullptr ||
                                           (!in_section && anySubcommandHas(key)));
      if (!known) fail(n, "unknown key '" + key + "' for `" + section->get_name() + "`");
      const std::string where = (in_section ? section->get_name() : std::string()) + "." + key;
      if (seen.count(where))
        fail(n, "'" + key + "' is set again (first on line " + std::to_string(seen[where]) + ")");
      seen[where] = n;
      // Checked, but for another subcommand.
      if (section != current || current->get_option_no_throw("--" + key) == nullptr) continue;
      auto& v = values[key];
      if (in_section || !v.second) v = {unquote(trim(t.substr(eq + 1))), in_section};
    }
    std::vector<CLI::ConfigItem> items;
    for (const auto& [key, value] : values) {
      CLI::ConfigItem item;
      if (current != _app) item.parents = {current->get_name()};
      item.name = key;
      item.inputs = {value.first};
      items.push_back(std::move(item));
    }
    return items;
  }

 private:
  CLI::App* subcommand(const std::string& name) const {
    for (CLI::App* s : _app->get_subcommands({}))
      if (s->get_name() == name) return s;
    return nullptr;
  }

  bool anySubcommandHas(const std::string& key) const {
    for (const CLI::App* s : _app->get_subcommands({}))
      if (s->get_option_no_throw("--" + key) != nullptr) return true;
    return false;
  }

  std::string sectionsHint() const {
    std::string names;
    for (const CLI::App* s : _app->get_subcommands({}))
      names += (names.empty() ? " (expected [" : ", [") + s->get_name() + "]";
    return names.empty() ? "" : names + ")";
  }

  CLI::App* _app;
};

}  // namespace

void addConfigFile(CLI::App& app) {
  app.set_config("--config", "",
                 "read flags from a file: `flag = value` lines, [subcommand] sections");
  app.config_formatter(std::make_shared<StrictConfig>(&app));
  for (CLI::App* sub : app.get_subcommands({}))
    sub->fallthrough();
}

}  // namespace halo3d::apps
