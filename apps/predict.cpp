// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb predict` (apps/predict.hpp): reads one run's rows of a calibration.csv, builds the MergeModel the run
// built from them, and prints its item time at each atom count and group size asked for.
#include "predict.hpp"

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mcmclb/csv.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/lj.hpp"
#include "mcmclb/merge_model.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

// Named, not anonymous: the build compiles apps/ as one unity file, where compare.cpp's anonymous namespace has an
// Options and a kAllowed too.
namespace predicting {

const char* const kAllowed =
    "allowed: mcmclb predict CALIBRATION.csv --run RUN_ID --move single|all --moves N --atoms A[,A...] "
    "--sizes M[,M...]";

struct Options {
  std::string file, run, move;
  long moves = 0;
  std::vector<long> atoms, sizes;
};

Options parse(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw InputError(a + ": missing value (" + kAllowed + ")");
      return args[++i];
    };
    if (a == "--run") {
      o.run = value();
    } else if (a == "--move") {
      o.move = value();
      if (o.move != "single" && o.move != "all") {
        throw InputError("--move: '" + printable(o.move) + "' is not a move kind (allowed: single or all)");
      }
    } else if (a == "--moves") {
      o.moves = parse_integer_flag("--moves", value(), 1, 1000000000, "a number of trial moves per item");
    } else if (a == "--atoms") {
      o.atoms = parse_integer_list("--atoms", value(), 2, 100000, "an atom count");
    } else if (a == "--sizes") {
      o.sizes = parse_integer_list("--sizes", value(), 1, 1 << 24, "a group size");
    } else if (!a.empty() && a[0] == '-') {
      throw InputError("unknown flag '" + printable(a) + "' (" + kAllowed + ")");
    } else if (o.file.empty()) {
      o.file = a;
    } else {
      throw InputError("a second file '" + printable(a) + "' (" + kAllowed + ")");
    }
  }
  if (o.file.empty() || o.run.empty() || o.move.empty() || o.moves == 0 || o.atoms.empty() || o.sizes.empty()) {
    throw InputError(std::string("missing argument (") + kAllowed + ")");
  }
  return o;
}

/// The run's model: its calibration.csv rows (sizes ascending from 1) and its seconds per flop.
MergeModel read_model(const Options& o) {
  const std::string shown = printable(o.file);
  std::string why;
  // read_text_file: a FIFO or device is refused from what it is, never opened and waited on.
  const auto text = read_text_file(o.file, &why);
  if (!text) throw InputError(shown + ": cannot be read: " + why + " (allowed: a calibration.csv)");
  if (const auto crlf = crlf_line(*text)) {
    throw InputError(shown + ": line " + std::to_string(*crlf) +
                     " ends in \\r\\n (allowed: \\n line endings, as mcmclb writes calibration.csv)");
  }
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(shown + ": empty (allowed: a calibration.csv)");
  if (csv::split_line(line) != calibration_header()) {
    throw InputError(shown + ": not a calibration.csv (header: " + printable(line, 120) + ")");
  }
  std::map<int, SizeCosts> by_size;
  double s_per_flop = -1;
  const auto real = [&](const std::string& text, const char* column) {
    std::size_t end = 0;
    double v = 0;
    try {
      v = std::stod(text, &end);
    } catch (const std::exception&) {
      end = 0;
    }
    if (text.empty() || end != text.size()) {
      throw InputError(shown + ": " + column + " '" + printable(text) +
                       "' is not a number (allowed: a calibration.csv)");
    }
    return v;
  };
  while (std::getline(in, line)) {
    const csv::Row row = csv::split_line(line);
    if (row.size() != calibration_header().size()) {
      throw InputError(shown + ": a row of " + std::to_string(row.size()) + " fields (allowed: a calibration.csv)");
    }
    if (row[0] != o.run) continue;
    const long size = parse_integer_flag(shown + ": size", row[1], 1, 1 << 24, "a group size");
    by_size[static_cast<int>(size)] = {static_cast<int>(size), real(row[2], "create_s"), real(row[3], "reduce_s"),
                                       real(row[4], "bcast_s")};
    s_per_flop = real(row[5], "s_per_flop");
  }
  if (by_size.empty() || by_size.begin()->first != 1) {
    throw InputError(shown + ": no rows of run '" + printable(o.run) +
                     "' starting at size 1 (allowed: a run_id of the file)");
  }
  std::vector<SizeCosts> table;
  for (const auto& [size, costs] : by_size) table.push_back(costs);
  return MergeModel(std::move(table), s_per_flop);
}

}  // namespace predicting

const csv::Row& predict_header() {
  static const csv::Row h = {"run_id", "move", "moves_per_item", "atoms", "size", "item_s"};
  return h;
}

int predict_main(const std::vector<std::string>& args) {
  const predicting::Options o = predicting::parse(args);
  const MergeModel model = predicting::read_model(o);
  const lj::MoveKind move = o.move == "all" ? lj::MoveKind::all : lj::MoveKind::single;
  std::ostringstream out;
  out << csv::line(predict_header());
  for (const long atoms : o.atoms) {
    for (const long size : o.sizes) {
      out << csv::line(
          {o.run, o.move, std::to_string(o.moves), std::to_string(atoms), std::to_string(size),
           csv::number(model.compute_item_s(move, static_cast<int>(atoms), o.moves, static_cast<int>(size)))});
    }
  }
  std::fputs(out.str().c_str(), stdout);
  return 0;
}

}  // namespace mcmclb
