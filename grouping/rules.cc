// Rule matching and the YAML rule-file reader (format: rules.h, config/grouping-rules.example.yaml).
#include "grouping/rules.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/common/platforms.h"

namespace restack::grouping {

bool globMatch(std::string_view pattern, std::string_view text) {
  // Classic two-pointer glob: on mismatch, retry from the last `*` one character further.
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

std::string_view basename(std::string_view path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool FrameMatcher::empty() const {
  return function.empty() && package.empty() && module.empty() && file.empty();
}

bool FrameMatcher::matches(const GroupingFrame& frame, std::string_view normalized_function,
                           std::string_view platform_name) const {
  if (empty()) return false;
  if (!platform.empty() && platform != platform_name) return false;
  if (!function.empty() && !globMatch(function, normalized_function)) return false;
  if (!package.empty() && !normalized_function.starts_with(package) &&
      !std::string_view(frame.module).starts_with(package)) {
    return false;
  }
  if (!module.empty() && !globMatch(module, frame.module) && !globMatch(module, basename(frame.module))) {
    return false;
  }
  if (!file.empty() && !globMatch(file, frame.file)) return false;
  return true;
}

std::string FrameMatcher::describe() const {
  std::string out;
  auto add = [&out](const char* key, const std::string& value) {
    if (value.empty()) return;
    if (!out.empty()) out += ' ';
    out += key;
    out += ' ';
    out += value;
  };
  add("function", function);
  add("package", package);
  add("module", module);
  add("file", file);
  add("platform", platform);
  return out;
}

const AppRules* GroupingConfig::rulesFor(std::string_view app) const {
  auto it = apps.find(std::string(app));
  return it == apps.end() ? nullptr : &it->second;
}

namespace {

// Reads one rule file; every error names "<source>:<line>: <what to fix>".
class RuleReader {
 public:
  explicit RuleReader(std::string source) : source_(std::move(source)) {}

  Expected<AppRules> read(const YAML::Node& root) {
    AppRules rules;
    rules.source = source_;
    if (root.IsNull()) return rules;  // an empty file: no rules
    if (!root.IsMap()) return fail(root, "the rule file must be a mapping of keys (version, in_app, …)");
    for (const auto& entry : root) {
      const std::string key = entry.first.as<std::string>();
      const YAML::Node& value = entry.second;
      Status status;
      if (key == "version") {
        std::string version = scalar(value, "version", status);
        if (status && version != "1") {
          status = fail(value, "unsupported version '" + version + "' (this Restack reads version 1)");
        }
      } else if (key == "app_packages") {
        rules.app_packages = stringList(value, key, status);
      } else if (key == "app_modules") {
        rules.app_modules = stringList(value, key, status);
      } else if (key == "in_app") {
        status = readInApp(value, rules);
      } else if (key == "ignore") {
        status = readIgnore(value, rules);
      } else if (key == "fingerprint") {
        status = readFingerprints(value, rules);
      } else {
        status = fail(entry.first, "unknown key '" + key +
                                       "' (expected version, app_packages, app_modules, in_app, "
                                       "ignore or fingerprint)");
      }
      if (!status) return status.error();
    }
    return rules;
  }

  Error fail(const YAML::Node& node, const std::string& message) const {
    return malformed(where(node) + ": " + message);
  }

  std::string where(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) return source_;
    return source_ + ":" + std::to_string(mark.line + 1);
  }

 private:
  std::string scalar(const YAML::Node& node, const std::string& key, Status& status) const {
    if (!node.IsScalar()) {
      status = fail(node, "'" + key + "' must be a single value");
      return {};
    }
    return node.Scalar();
  }

  std::vector<std::string> stringList(const YAML::Node& node, const std::string& key, Status& status) const {
    std::vector<std::string> out;
    if (node.IsScalar()) {
      out.push_back(node.Scalar());
      return out;
    }
    if (!node.IsSequence()) {
      status = fail(node, "'" + key + "' must be a list of strings");
      return out;
    }
    for (const auto& item : node) {
      if (!item.IsScalar() || item.Scalar().empty()) {
        status = fail(item, "'" + key + "' entries must be non-empty strings");
        return out;
      }
      out.push_back(item.Scalar());
    }
    return out;
  }

  // Reads the matcher keys of one list entry; `extra` names the other keys the entry may hold.
  Status readMatcher(const YAML::Node& item, const std::string& list, const std::vector<std::string>& extra,
                     FrameMatcher& matcher) const {
    if (!item.IsMap()) return fail(item, "each '" + list + "' entry must be a mapping");
    for (const auto& field : item) {
      const std::string key = field.first.as<std::string>();
      Status status;
      if (key == "function") {
        matcher.function = scalar(field.second, key, status);
      } else if (key == "package") {
        matcher.package = scalar(field.second, key, status);
      } else if (key == "module") {
        matcher.module = scalar(field.second, key, status);
      } else if (key == "file") {
        matcher.file = scalar(field.second, key, status);
      } else if (key == "platform") {
        matcher.platform = scalar(field.second, key, status);
        if (status) status = checkPlatform(field.second, matcher.platform);
      } else if (std::find(extra.begin(), extra.end(), key) == extra.end()) {
        std::string expected = "function, package, module, file, platform";
        for (const auto& name : extra) expected += ", " + name;
        status = fail(field.first, "unknown key '" + key + "' in '" + list + "' (expected " + expected + ")");
      }
      if (!status) return status;
    }
    if (matcher.empty()) {
      return fail(item, "'" + list + "' entry needs at least one of function, package, module, file");
    }
    return Status::ok();
  }

  Status checkPlatform(const YAML::Node& node, const std::string& platform) const {
    if (isRegisteredPlatform(platform)) {
      return Status::ok();
    }
    return fail(node, "unknown platform '" + platform + "' (expected " + platformList() + ")");
  }

  Status readInApp(const YAML::Node& node, AppRules& rules) const {
    if (!node.IsSequence()) return fail(node, "'in_app' must be a list of rules");
    for (const auto& item : node) {
      InAppRule rule;
      RESTACK_RETURN_IF_ERROR(readMatcher(item, "in_app", {"in_app"}, rule.match));
      const YAML::Node flag = item["in_app"];
      if (flag) {
        bool value = false;
        if (!flag.IsScalar() || !YAML::convert<bool>::decode(flag, value)) {
          return fail(flag, "'in_app' must be true or false");
        }
        rule.in_app = value;
      }
      rule.origin = where(item);
      rules.in_app.push_back(std::move(rule));
    }
    return Status::ok();
  }

  Status readIgnore(const YAML::Node& node, AppRules& rules) const {
    if (!node.IsSequence()) return fail(node, "'ignore' must be a list of frame patterns");
    for (const auto& item : node) {
      IgnoreRule rule;
      RESTACK_RETURN_IF_ERROR(readMatcher(item, "ignore", {}, rule.match));
      rule.origin = where(item);
      rules.ignore.push_back(std::move(rule));
    }
    return Status::ok();
  }

  Status readFingerprints(const YAML::Node& node, AppRules& rules) const {
    if (!node.IsSequence()) return fail(node, "'fingerprint' must be a list of rules");
    for (const auto& item : node) {
      if (!item.IsMap()) return fail(item, "each 'fingerprint' entry must be a mapping");
      FingerprintRule rule;
      for (const auto& field : item) {
        const std::string key = field.first.as<std::string>();
        Status status;
        std::string value = scalar(field.second, key, status);
        if (!status) return status;
        if (key == "exception_type") {
          rule.exception_type = value;
        } else if (key == "message") {
          rule.message = value;
        } else if (key == "kind") {
          if (value != "crash" && value != "anr" && value != "lag" && value != "error") {
            return fail(field.second, "unknown kind '" + value + "' (expected crash, anr, lag or error)");
          }
          rule.kind = value;
        } else if (key == "platform") {
          RESTACK_RETURN_IF_ERROR(checkPlatform(field.second, value));
          rule.platform = value;
        } else if (key == "fingerprint") {
          rule.fingerprint = value;
        } else if (key == "title") {
          rule.title = value;
        } else {
          return fail(field.first, "unknown key '" + key +
                                       "' in 'fingerprint' (expected exception_type, message, "
                                       "kind, platform, fingerprint, title)");
        }
      }
      if (rule.fingerprint.empty()) {
        return fail(item, "'fingerprint' entry needs 'fingerprint: <group name>'");
      }
      if (rule.exception_type.empty() && rule.message.empty()) {
        return fail(item, "'fingerprint' entry needs 'exception_type' or 'message' to match on");
      }
      rule.origin = where(item);
      rules.fingerprints.push_back(std::move(rule));
    }
    return Status::ok();
  }

  std::string source_;
};

}  // namespace

Expected<AppRules> parseAppRules(std::string_view yaml_text, const std::string& source_name) {
  RuleReader reader(source_name);
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    return reader.read(root);
  } catch (const YAML::Exception& error) {
    // yaml-cpp reports syntax errors with a 0-based mark; print it 1-based like editors do.
    std::string where = source_name;
    if (!error.mark.is_null()) where += ":" + std::to_string(error.mark.line + 1);
    return malformed(where + ": " + error.msg);
  }
}

Expected<AppRules> loadAppRules(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ioError(path + ": cannot open the grouping rule file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return ioError(path + ": read failed");
  return parseAppRules(text.str(), path);
}

Status loadRulesDirectory(const std::string& directory, GroupingConfig& config) {
  std::error_code error;
  std::filesystem::directory_iterator it(directory, error);
  if (error) return ioError(directory + ": cannot list the grouping rules folder: " + error.message());
  std::vector<std::filesystem::path> files;
  for (const auto& entry : it) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // deterministic: a duplicate app fails the same way
  for (const auto& file : files) {
    const std::string app = file.stem().string();
    if (config.apps.count(app) != 0) {
      return invalidArgument(file.string() + ": rules for app '" + app + "' are defined twice");
    }
    auto rules = loadAppRules(file.string());
    if (!rules) return rules.error();
    config.apps.emplace(app, std::move(rules).value());
  }
  return Status::ok();
}

}  // namespace restack::grouping
