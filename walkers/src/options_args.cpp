// SPDX-License-Identifier: BSD-3-Clause
// Options from a program's command line and environment (options_from_args): one table of keys, each with its flag
// (--mcmclb-KEY), its variable (MCMCLB_KEY) and how its value is read, so a production code switches balancer, rule,
// recording and checkpoints per job without recompiling.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/input_error.hpp"
#include "mcmclb/walkers.hpp"

namespace mcmclb::walkers {

namespace {

using Setter = std::function<void(Options&, const std::string& flag, const std::string& value)>;

struct OptionKey {
  std::string_view key;   ///< --mcmclb-KEY and MCMCLB_KEY (upper case, '-' as '_')
  std::string_view help;  ///< what it sets, for --mcmclb-help
  Setter set;
};

double seconds(const std::string& flag, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || at != end || !std::isfinite(value) || value < 0) {
    throw InputError(flag + ": '" + text + "' is not allowed (allowed: seconds, a number >= 0)");
  }
  return value;
}

std::string path(const std::string& flag, const std::string& text) { return require_path(flag, text); }

template <class E>
E one_of(const std::string& flag, const std::string& text,
         std::initializer_list<std::pair<std::string_view, E>> names) {
  std::string allowed;
  for (const auto& [name, value] : names) {
    if (text == name) return value;
    allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  }
  throw InputError(flag + ": '" + text + "' is not allowed (allowed: " + allowed + ")");
}

/// No layout of the initial groups chosen: the default, one rank each.
void clear_layout(Options& o) {
  o.group_size = 1;
  o.groups = 0;
  o.group_sizes.clear();
}

/// The keys that choose the initial groups, of which a command line or an environment names one at most.
constexpr std::array<std::string_view, 3> kLayoutKeys = {"group-size", "groups", "group-sizes"};

/// Every key, in the order --mcmclb-help lists them. Names follow a study file's keys where one exists.
const std::vector<OptionKey>& option_keys() {
  static const std::vector<OptionKey> keys = {
      {"balancer", "the balancer (Options::balancer)",
       [](Options& o, const std::string&, const std::string& v) { o.balancer = v; }},
      {"method", "its creation method (Options::method)",
       [](Options& o, const std::string&, const std::string& v) { o.method = v; }},
      {"finished", "the finished rule: retire, coalesce or pays (Options::finished)",
       [](Options& o, const std::string&, const std::string& v) { o.finished = v; }},
      {"interval", "items between regroupings or the window ahead (Options::interval)",
       [](Options& o, const std::string& f, const std::string& v) {
         o.interval = static_cast<int>(parse_integer_flag(f, v, 1, 1 << 30, "an interval"));
       }},
      // The initial groups, by one of three keys: each replaces what the program set by another, so that a line
      // that names one (as mcmclb advise prints) runs that layout whatever the program's own.
      {"group-size", "ranks per initial group, a study file's G (Options::group_size)",
       [](Options& o, const std::string& f, const std::string& v) {
         clear_layout(o);
         o.group_size = static_cast<int>(parse_integer_flag(f, v, 1, 1 << 30, "a group size"));
       }},
      {"groups", "initial groups of nearly equal sizes, the larger first: groups.count (Options::groups)",
       [](Options& o, const std::string& f, const std::string& v) {
         clear_layout(o);
         o.groups = static_cast<int>(parse_integer_flag(f, v, 1, 1 << 30, "a number of groups"));
       }},
      {"group-sizes", "the initial groups' sizes in rank order, e.g. 3,2,2: groups.sizes (Options::group_sizes)",
       [](Options& o, const std::string& f, const std::string& v) {
         clear_layout(o);
         for (std::size_t at = 0; at <= v.size();) {
           const std::size_t comma = std::min(v.find(',', at), v.size());
           int size = 0;
           const auto [end, error] = std::from_chars(v.data() + at, v.data() + comma, size);
           if (comma == at || error != std::errc() || end != v.data() + comma || size < 1) {
             throw InputError(f + ": '" + v + "' is not allowed (allowed: sizes >= 1 in rank order, e.g. 3,2,2)");
           }
           o.group_sizes.push_back(size);
           at = comma + 1;
         }
       }},
      {"placement", "by-items or as-numbered (Options::placement)",
       [](Options& o, const std::string& f, const std::string& v) {
         o.placement =
             one_of<Placement>(f, v, {{"by-items", Placement::by_items}, {"as-numbered", Placement::as_numbered}});
       }},
      {"item-s", "seconds one item takes on one rank; 0: measured (Options::item_s)",
       [](Options& o, const std::string& f, const std::string& v) { o.item_s = seconds(f, v); }},
      {"wait", "spin, polite, yield or auto (Options::wait)",
       [](Options& o, const std::string&, const std::string& v) { o.wait = v; }},
      {"item-timeout-s", "seconds a Chains call may take; 0: no limit (Options::item_timeout_s)",
       [](Options& o, const std::string& f, const std::string& v) { o.item_timeout_s = seconds(f, v); }},
      {"record", "a trace file to write (Options::record)",
       [](Options& o, const std::string& f, const std::string& v) { o.record = path(f, v); }},
      {"results", "none, root or all (Options::results)",
       [](Options& o, const std::string& f, const std::string& v) {
         o.results = one_of<Results>(f, v, {{"none", Results::none}, {"root", Results::root}, {"all", Results::all}});
       }},
      {"name", "the application's name in the trace and checkpoints (Options::name)",
       [](Options& o, const std::string&, const std::string& v) { o.name = v; }},
      {"checkpoint", "a folder for the chains' checkpoints (Options::checkpoint)",
       [](Options& o, const std::string& f, const std::string& v) { o.checkpoint = path(f, v); }},
      {"checkpoint-every-s", "seconds between a chain's checkpoints (Options::checkpoint_every_s)",
       [](Options& o, const std::string& f, const std::string& v) { o.checkpoint_every_s = seconds(f, v); }},
      {"checkpoint-every-items", "items between them instead; 0: by seconds (Options::checkpoint_every_items)",
       [](Options& o, const std::string& f, const std::string& v) {
         o.checkpoint_every_items = parse_integer_flag(f, v, 0, 1L << 40, "a number of items");
       }},
      {"checkpoint-mtbf-s",
       "seconds expected between failures: each chain's interval from its checkpoints' cost "
       "(Options::checkpoint_mtbf_s)",
       [](Options& o, const std::string& f, const std::string& v) { o.checkpoint_mtbf_s = seconds(f, v); }},
      {"stop-grace-s", "seconds a signalled run waits for its last checkpoints (Options::stop_grace_s)",
       [](Options& o, const std::string& f, const std::string& v) { o.stop_grace_s = seconds(f, v); }},
  };
  return keys;
}

std::string variable_of(std::string_view key) {
  std::string name = "MCMCLB_";
  for (const char c : key) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

constexpr std::string_view kPrefix = "--mcmclb-";

}  // namespace

std::string options_help() {
  std::string text;
  for (const OptionKey& k : option_keys()) {
    text += "  " + std::string(kPrefix) + std::string(k.key) + " VALUE  (or " + variable_of(k.key) + ")  " +
            std::string(k.help) + "\n";
  }
  return text;
}

Options options_from_args(int& argc, char** argv, Options options) {
  const auto find = [](std::string_view key) -> const OptionKey* {
    for (const OptionKey& k : option_keys()) {
      if (k.key == key) return &k;
    }
    return nullptr;
  };
  // Two layouts named in one place are refused: which one was meant is not known. One named on the command line
  // replaces one in the environment (as every key does).
  const auto one_layout = [](std::string& seen, std::string_view key, const std::string& name) {
    if (std::find(kLayoutKeys.begin(), kLayoutKeys.end(), key) == kLayoutKeys.end()) return;
    if (!seen.empty() && seen != name) {
      throw InputError(name + ": given with " + seen + " (allowed: one of group-size, groups, group-sizes)");
    }
    seen = name;
  };
  // The environment first, then the command line over it.
  std::string layout;
  for (const OptionKey& k : option_keys()) {
    if (const char* value = std::getenv(variable_of(k.key).c_str()); value != nullptr) {
      one_layout(layout, k.key, variable_of(k.key));
      k.set(options, variable_of(k.key), value);
    }
  }
  layout.clear();
  int kept = argc > 0 ? 1 : 0;
  for (int i = kept; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") {  // the application's own from here on, untouched
      for (; i < argc; ++i) argv[kept++] = argv[i];
      break;
    }
    if (arg.substr(0, kPrefix.size()) != kPrefix) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::size_t equals = arg.find('=');
    const std::string_view key =
        arg.substr(kPrefix.size(), equals == std::string_view::npos ? arg.npos : equals - kPrefix.size());
    const std::string flag = std::string(kPrefix) + std::string(key);
    const OptionKey* k = find(key);
    if (k == nullptr) {
      std::string allowed;
      for (const OptionKey& each : option_keys()) allowed += (allowed.empty() ? "" : ", ") + std::string(each.key);
      throw InputError(flag + ": unknown (allowed: " + std::string(kPrefix) + "KEY for KEY one of " + allowed + ")");
    }
    std::string value;
    if (equals != std::string_view::npos) {
      value = std::string(arg.substr(equals + 1));
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw InputError(flag + ": a value is missing (" + std::string(k->help) + ")");
    }
    one_layout(layout, key, flag);
    k->set(options, flag, value);
  }
  for (int i = kept; i < argc; ++i) argv[i] = nullptr;
  argc = kept;
  check_options(options);
  return options;
}

}  // namespace mcmclb::walkers
