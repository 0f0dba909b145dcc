// SPDX-License-Identifier: BSD-3-Clause
// A program's arguments through smpirun, unchanged. smpirun (a shell script) passes the arguments after the
// program through an unquoted expansion: it splits them again on blanks, expands * ? [ as file patterns, drops an
// empty one and takes --cfg=... and --log=... for itself. So `--set 'nprocs=[32, 2048]'` reached the program as
// two arguments, and a path with a space as two. The smpi launcher therefore writes each argument as one word that
// no step of that changes (percent-encoded, smpirun_word) behind the marker kEncodedArgsFlag, and the simulation
// build's mains decode them (MainArgs) before anything reads them, provenance's command line included.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcmclb {

/// First among a program's arguments: every argument after it is an smpirun_word.
inline constexpr std::string_view kEncodedArgsFlag = "--args-percent-encoded";

/// arg as one word that smpirun passes on as it is: letters, digits and _-./,:@+= kept (a typical path, point
/// list or key=value stays readable in a dry run), every other byte as %XX; an empty argument as "%"; the '=' of
/// a leading --cfg= or --log= as %3D, so that smpirun does not take the argument for its own option.
inline std::string smpirun_word(std::string_view arg) {
  if (arg.empty()) return "%";
  static constexpr char kHex[] = "0123456789ABCDEF";
  const bool smpirun_option = arg.rfind("--cfg=", 0) == 0 || arg.rfind("--log=", 0) == 0;
  std::string word;
  for (std::size_t i = 0; i < arg.size(); ++i) {
    const auto c = static_cast<unsigned char>(arg[i]);
    const bool keep = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("_-./,:@+=").find(static_cast<char>(c)) != std::string_view::npos) &&
                      !(smpirun_option && i == 5);
    if (keep) {
      word += static_cast<char>(c);
    } else {
      word += '%';
      word += kHex[c >> 4];
      word += kHex[c & 15];
    }
  }
  return word;
}

/// The argument smpirun_word(arg) came from. A word it cannot have made (a stray % or a bad hex digit) is
/// returned as it is, so that the program's own checks name it.
inline std::string from_smpirun_word(std::string_view word) {
  if (word == "%") return "";
  const auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string arg;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] != '%') {
      arg += word[i];
      continue;
    }
    if (i + 2 >= word.size()) return std::string(word);
    const int high = hex(word[i + 1]), low = hex(word[i + 2]);
    if (high < 0 || low < 0) return std::string(word);
    arg += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return arg;
}

/// main's argc and argv, decoded when the first argument is kEncodedArgsFlag (the marker itself dropped), else
/// as they came. Owns the strings; argv() stays valid while this object lives, and ends in a null pointer.
class MainArgs {
 public:
  MainArgs(int argc, char** argv) {
    const bool encoded = argc >= 2 && std::string_view(argv[1]) == kEncodedArgsFlag;
    for (int i = 0; i < argc; ++i) {
      if (encoded && i == 1) continue;
      args_.emplace_back(encoded && i > 1 ? from_smpirun_word(argv[i]) : std::string(argv[i]));
    }
    for (std::string& a : args_) pointers_.push_back(a.data());
    pointers_.push_back(nullptr);
  }
  MainArgs(const MainArgs&) = delete;
  MainArgs& operator=(const MainArgs&) = delete;
  [[nodiscard]] int argc() const { return static_cast<int>(args_.size()); }
  [[nodiscard]] char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> pointers_;
};

}  // namespace mcmclb
