// SPDX-License-Identifier: BSD-3-Clause
// The pure half of mcmclb::calibrate: the least-squares fits, the platform's shape and its text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/calibrate.hpp"
#include "mcmclb/stats.hpp"

namespace mcmclb::calibrate {

namespace {

/// The weighted least-squares line through points[begin, end) on relative errors (weights 1 / time^2: a timing's
/// noise grows with the time, and on plain squares the 4 MiB message's fraction of a per cent would outweigh the
/// whole latency of the small ones), and its weighted sum of squared relative residuals. One distinct size: a flat
/// line through their weighted mean. Centred sums: the sizes span six orders of magnitude, and raw x^2 sums would
/// lose the small ones.
struct WeightedLine {
  double offset = 0, slope = 0, ssr = 0;
};
WeightedLine weighted_line(std::span<const Point> points) {
  const auto weight = [](const Point& p) { return p.seconds > 0 ? 1.0 / (p.seconds * p.seconds) : 1.0; };
  double w_sum = 0, mean_x = 0, mean_y = 0;
  for (const auto& p : points) {
    w_sum += weight(p);
    mean_x += weight(p) * static_cast<double>(p.bytes);
    mean_y += weight(p) * p.seconds;
  }
  mean_x /= w_sum;
  mean_y /= w_sum;
  double sxx = 0, sxy = 0;
  for (const auto& p : points) {
    const double dx = static_cast<double>(p.bytes) - mean_x;
    sxx += weight(p) * dx * dx;
    sxy += weight(p) * dx * (p.seconds - mean_y);
  }
  WeightedLine l;
  l.slope = sxx > 0 ? sxy / sxx : 0.0;
  l.offset = mean_y - l.slope * mean_x;
  for (const auto& p : points) {
    const double r = p.seconds - (l.offset + l.slope * static_cast<double>(p.bytes));
    l.ssr += weight(p) * r * r;
  }
  return l;
}

/// The relative noise below which a better fit is not believed: exact synthetic data would otherwise make every
/// extra piece look infinitely better (the log of a zero residual).
constexpr double kNoiseFloor = 1e-3;

}  // namespace

Spread spread_of(const Sample& sample) {
  if (sample.seconds.empty()) throw std::invalid_argument("spread_of: no timings");
  const stats::MedianCi ci = stats::median_ci(sample.seconds);
  return Spread{sample.bytes, ci.median, ci.low.value_or(ci.median), ci.high.value_or(ci.median), ci.n};
}

std::vector<Point> medians(std::span<const Spread> spreads) {
  std::vector<Point> points;
  for (const auto& s : spreads) points.push_back({s.bytes, s.median_s});
  return points;
}

const Piece* Piecewise::piece_of(std::int64_t bytes) const {
  if (pieces.empty()) return nullptr;
  const Piece* in = &pieces.front();
  for (const auto& p : pieces) {
    if (p.from <= bytes) in = &p;
  }
  return in;
}

double Piecewise::at(std::int64_t bytes) const {
  const Piece* p = piece_of(bytes);
  return p ? p->offset_s + p->per_byte_s * static_cast<double>(bytes) : 0.0;
}

Piecewise fit_segments(std::span<const Point> input, int max_pieces, std::size_t min_sizes) {
  std::vector<Point> points(input.begin(), input.end());
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
  // Each distinct size's range of points: a breakpoint falls between two sizes, never inside one's repetitions.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i == 0 || points[i].bytes != points[i - 1].bytes) starts.push_back(i);
  }
  const std::size_t m = starts.size();
  if (m < 2) throw std::invalid_argument("fit_segments: needs at least two distinct message sizes");
  starts.push_back(points.size());
  const std::size_t min_run = std::min(std::max<std::size_t>(min_sizes, 2), m);
  const std::size_t most =
      std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(max_pieces), m / min_run));
  // cost[i][j]: the line over sizes i..j (inclusive) and its residual, where it holds min_run sizes or more.
  std::vector<std::vector<WeightedLine>> line(m, std::vector<WeightedLine>(m));
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = i + min_run - 1; j < m; ++j) {
      line[i][j] = weighted_line(std::span<const Point>(points).subspan(starts[i], starts[j + 1] - starts[i]));
    }
  }
  constexpr double kNone = std::numeric_limits<double>::infinity();
  // best[k][j]: the least residual of sizes 0..j in k+1 pieces; cut[k][j] the first size of the last piece.
  std::vector<std::vector<double>> best(most, std::vector<double>(m, kNone));
  std::vector<std::vector<std::size_t>> cut(most, std::vector<std::size_t>(m, 0));
  for (std::size_t j = min_run - 1; j < m; ++j) best[0][j] = line[0][j].ssr;
  for (std::size_t k = 1; k < most; ++k) {
    for (std::size_t j = (k + 1) * min_run - 1; j < m; ++j) {
      for (std::size_t i = k * min_run; i + min_run - 1 <= j; ++i) {
        const double c = best[k - 1][i - 1] + line[i][j].ssr;
        if (c < best[k][j]) {
          best[k][j] = c;
          cut[k][j] = i;
        }
      }
    }
  }
  // The number of pieces of least Bayesian information: n ln(residual / n) + parameters x ln n, where each piece
  // has an offset, a slope and (all but the first) a breakpoint.
  const double n = static_cast<double>(points.size());
  const double floor = n * kNoiseFloor * kNoiseFloor;
  std::size_t chosen = 0;
  double least = kNone;
  for (std::size_t k = 0; k < most; ++k) {
    if (!(best[k][m - 1] < kNone)) continue;
    const double bic = n * std::log(std::max(best[k][m - 1], floor) / n) + static_cast<double>(3 * k + 2) * std::log(n);
    if (bic < least - 1e-9) {
      least = bic;
      chosen = k;
    }
  }
  Piecewise fit;
  for (std::size_t k = chosen + 1, j = m - 1; k-- > 0;) {
    const std::size_t i = k == 0 ? 0 : cut[k][j];
    const WeightedLine& l = line[i][j];
    fit.pieces.insert(fit.pieces.begin(), Piece{points[starts[i]].bytes, l.offset, l.slope});
    if (k > 0) j = i - 1;
  }
  return fit;
}

namespace {

/// The spreads of sizes below (below = true) or from (false) a limit.
std::vector<Point> medians_where(const std::vector<Spread>& spreads, std::int64_t limit, bool below) {
  std::vector<Point> points;
  for (const auto& s : spreads) {
    if ((s.bytes < limit) == below) points.push_back({s.bytes, s.median_s});
  }
  return points;
}

/// SMPI clamps nothing, but a negative overhead or factor is no cost: noise on a piece that passes near zero.
double positive(double v) { return v > 0 ? v : 0.0; }

/// The segmented fit of an overhead where there are two sizes or more to fit, else nothing (zero): one SMPI never
/// charges (above the eager limit) or one not measured. Each piece's offset and slope are made non-negative here,
/// so that the model checked against the medians is the one the platform's text writes.
Piecewise fit_or_zero(const std::vector<Point>& points) {
  std::set<std::int64_t> sizes;
  for (const auto& p : points) sizes.insert(p.bytes);
  if (sizes.size() < 2) return Piecewise{};
  Piecewise f = fit_segments(points);
  for (auto& piece : f.pieces) {
    piece.offset_s = positive(piece.offset_s);
    piece.per_byte_s = positive(piece.per_byte_s);
  }
  return f;
}

/// A piece without a positive slope costs its size nothing measurable: SMPI gets it as a bandwidth this many times
/// the link's, so that the size's share is below any timing's resolution.
constexpr double kFlatBwFactor = 1e3;

}  // namespace

PairModel fit_pair(const PairTimes& times) {
  PairModel m;
  m.eager_limit = times.eager_limit;
  m.os = fit_or_zero(medians_where(times.send, times.eager_limit, true));
  m.ois = fit_or_zero(medians(times.isend));
  // SMPI charges smpi/or, as smpi/os, only to a message sent detached (below the eager limit); a rendezvous receive
  // waits for the transfer, whose cost the network's pieces carry.
  m.orecv = fit_or_zero(medians_where(times.recv, times.eager_limit, true));
  // Both overheads within kOverheadShare of the one-way times they are charged to, scaled down alike where not: by
  // the 20th percentile of what each size needs (at most 1), so that one slow or fast timing does not set it while
  // the small sizes, which need it most, keep a network part. A size still over is clamped below and said by the check.
  std::vector<double> needs;
  for (const auto& s : times.pingpong) {
    const double both = m.overheads_s(s.bytes);
    if (both > 0 && s.median_s > 0) needs.push_back(std::min(1.0, kOverheadShare * s.median_s / both));
  }
  if (!needs.empty()) {
    std::sort(needs.begin(), needs.end());
    m.overhead_scale = needs[(needs.size() - 1) / 5];
  }
  for (Piecewise* f : {&m.os, &m.orecv}) {
    for (auto& piece : f->pieces) {
      piece.offset_s *= m.overhead_scale;
      piece.per_byte_s *= m.overhead_scale;
    }
  }
  // The network's share of each one-way time: what is left when the overheads SMPI charges to it are taken off,
  // at the payload SMPI sends (its breakpoints then fall where SMPI's lookup does). A time that the overheads exceed
  // (they were measured apart, with their own noise) keeps a thousandth of itself, so that the fit's relative
  // weights stay finite; the check then says where the model misses.
  std::vector<Point> network;
  for (const auto& s : times.pingpong) {
    const double overheads = m.overheads_s(s.bytes);
    network.push_back({s.bytes + kSmpiEnvelope, std::max(s.median_s - overheads, 1e-3 * s.median_s)});
  }
  m.network = fit_segments(network);
  return m;
}

double PairModel::latency_s() const {
  // The first piece with a positive offset: the small messages' latency, which every factor scales.
  for (const auto& p : network.pieces) {
    if (p.offset_s > 0) return p.offset_s;
  }
  return 0.0;
}

double PairModel::bandwidth_Bps() const {
  // The last piece with a positive slope: the large messages' bandwidth, which every factor scales.
  for (auto p = network.pieces.rbegin(); p != network.pieces.rend(); ++p) {
    if (p->per_byte_s > 0) return 1.0 / p->per_byte_s;
  }
  return 0.0;
}

std::vector<double> PairModel::lat_factors() const {
  std::vector<double> f;
  const double lat = latency_s();
  for (const auto& p : network.pieces) f.push_back(lat > 0 ? positive(p.offset_s) / lat : 1.0);
  return f;
}

std::vector<double> PairModel::bw_factors() const {
  std::vector<double> f;
  const double bw = bandwidth_Bps();
  for (const auto& p : network.pieces) {
    f.push_back(bw > 0 && p.per_byte_s > 0 ? std::min(1.0 / (p.per_byte_s * bw), kFlatBwFactor) : kFlatBwFactor);
  }
  return f;
}

double PairModel::overheads_s(std::int64_t bytes) const {
  return bytes < eager_limit ? positive(os.at(bytes)) + positive(orecv.at(bytes)) : 0.0;
}

double PairModel::one_way_s(std::int64_t bytes) const {
  double t = overheads_s(bytes);
  const std::int64_t payload = bytes + kSmpiEnvelope;
  const Piece* in = network.piece_of(payload);
  if (!in) return t;
  const auto at = static_cast<std::size_t>(in - network.pieces.data());
  const double lat = latency_s(), bw = bandwidth_Bps();
  t += lat * lat_factors()[at];
  if (bw > 0) t += static_cast<double>(payload) / (bw * bw_factors()[at]);
  return t;
}

std::optional<double> PairModel::call_s(const std::string& call, std::int64_t bytes) const {
  // The calls against their overheads as fitted, before the scaling that fits them within the one-way times.
  const double scale = overhead_scale > 0 ? overhead_scale : 1.0;
  if (call == "pingpong") return one_way_s(bytes);
  if (call == "isend") return positive(ois.at(bytes));
  if (bytes >= eager_limit) return std::nullopt;
  if (call == "send") return positive(os.at(bytes)) / scale;
  if (call == "recv") return positive(orecv.at(bytes)) / scale;
  throw std::invalid_argument("PairModel::call_s: unknown call '" + call + "'");
}

const std::vector<Spread>& spreads_of(const PairTimes& times, const std::string& call) {
  if (call == "pingpong") return times.pingpong;
  if (call == "send") return times.send;
  if (call == "isend") return times.isend;
  if (call == "recv") return times.recv;
  throw std::invalid_argument("spreads_of: unknown call '" + call + "'");
}

std::vector<Miss> misses(const PairModel& model, const PairTimes& times) {
  std::vector<Miss> out;
  const auto check = [&](const char* kind, const std::vector<Spread>& spreads) {
    for (const auto& s : spreads) {
      const auto got = model.call_s(kind, s.bytes);
      if (got && (*got < s.low_s * (1 - kFitTolerance) || *got > s.high_s * (1 + kFitTolerance))) {
        out.push_back(Miss{kind, s.bytes, *got, s});
      }
    }
  };
  for (const char* kind : kCalls) check(kind, spreads_of(times, kind));
  const auto off = [](const Miss& m) { return std::fabs(m.model_s - m.measured.median_s) / m.measured.median_s; };
  std::stable_sort(out.begin(), out.end(), [&](const Miss& a, const Miss& b) { return off(a) > off(b); });
  return out;
}

std::string misses_words(const std::vector<Miss>& missed) {
  if (missed.empty()) return "";
  const Miss& w = missed.front();
  char text[320];
  std::snprintf(text, sizeof text,
                "the fit misses %zu of its own medians by more than %.0f %% beyond their 95 %% intervals; worst: %s of "
                "%lld B, model %.3f us against a median of %.3f us [%.3f, %.3f] over %zu timings",
                missed.size(), 100 * kFitTolerance, w.kind.c_str(), static_cast<long long>(w.bytes), w.model_s * 1e6,
                w.measured.median_s * 1e6, w.measured.low_s * 1e6, w.measured.high_s * 1e6, w.measured.n);
  return text;
}

std::vector<std::int64_t> message_sizes() {
  std::vector<std::int64_t> sizes;
  for (std::int64_t b = 1; b <= 4194304; b *= 2) {
    sizes.push_back(b);
    if (b >= 2 && b < 4194304) sizes.push_back(b + b / 2);
  }
  return sizes;
}

Shape shape_for(int ranks, int cores_per_node) {
  Shape s;
  const int needed = std::max(1, (ranks + cores_per_node - 1) / cores_per_node);
  if (needed <= kLeafNodes) {
    // One switch: every route between nodes is the node's link up and the other's down.
    s.nodes = s.leaf_nodes = needed;
    s.leaves = 1;
    s.topo = "1;" + std::to_string(needed) + ";1;1";
  } else {
    // Two levels with full bisection: leaves of kLeafNodes nodes, each with one link to each of kLeafNodes spines.
    s.leaf_nodes = kLeafNodes;
    s.leaves = (needed + kLeafNodes - 1) / kLeafNodes;
    s.nodes = s.leaf_nodes * s.leaves;
    s.topo = "2;" + std::to_string(kLeafNodes) + "," + std::to_string(s.leaves) + ";1," + std::to_string(kLeafNodes) +
             ";1,1";
  }
  return s;
}

namespace {

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

/// What a comment may hold: no "--" (XML forbids it inside a comment) and no line breaks.
std::string comment_safe(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  for (std::size_t at; (at = text.find("--")) != std::string::npos;) text.replace(at, 2, "- -");
  return text;
}

/// SMPI's boundary for a piece from `from` bytes: a piece written "k:..." holds the sizes above k (SimGrid's
/// FactorSet picks the last boundary below the size), so a piece from the measured size `from` is written from - 1.
std::string boundary(const Piece& p, bool first) { return first ? "0" : std::to_string(p.from - 1); }

/// smpi/os, smpi/ois or smpi/or: "boundary:offset:per_byte;...", or no cost where nothing was fitted.
std::string overhead_value(const Piecewise& f) {
  if (f.pieces.empty()) return "0:0:0";
  std::string v;
  for (std::size_t i = 0; i < f.pieces.size(); ++i) {
    v += (i ? ";" : "") + boundary(f.pieces[i], i == 0) + ":" + num(positive(f.pieces[i].offset_s)) + ":" +
         num(positive(f.pieces[i].per_byte_s));
  }
  return v;
}

/// smpi/lat-factor or smpi/bw-factor: "boundary:factor;..." over the network's pieces.
std::string factor_value(const Piecewise& f, const std::vector<double>& factors) {
  if (f.pieces.empty()) return "0:1";
  std::string v;
  for (std::size_t i = 0; i < f.pieces.size(); ++i) {
    v += (i ? ";" : "") + boundary(f.pieces[i], i == 0) + ":" + num(factors[i]);
  }
  return v;
}

/// A piecewise line in words: each piece's sizes and its line, in microseconds.
std::string pieces_words(const Piecewise& f) {
  if (f.pieces.empty()) return "0";
  std::string w;
  for (std::size_t i = 0; i < f.pieces.size(); ++i) {
    const Piece& p = f.pieces[i];
    w += (i ? "; " : "") + std::string("from ") + std::to_string(i ? p.from : 0) + " B " + num(p.offset_s * 1e6) +
         " us + " + num(p.per_byte_s * 1e6) + " us/B";
  }
  return w;
}

std::string pair_words(const PairModel& p) {
  return "eager limit " + std::to_string(p.eager_limit) + " B; os and or as timed x " + num(p.overhead_scale) +
         " (within " + num(100 * kOverheadShare) + " % of every one-way time); os " + pieces_words(p.os) + "; ois " +
         pieces_words(p.ois) + "; or " + pieces_words(p.orecv) + "; network, by payload (bytes + " +
         std::to_string(kSmpiEnvelope) + " B of SMPI's envelope), " + pieces_words(p.network);
}

}  // namespace

std::string platform_xml(const Machine& m, const Shape& shape, const std::vector<std::string>& comments) {
  // The overheads, factors and eager limit come from the pair that crosses the network where there was one: merges
  // between nodes are what the advice weighs. SMPI has one set of them, so inside a node it applies the same ones
  // to the loopback, whose latency and bandwidth are the node's network part.
  const PairModel& net = m.has_inter ? m.inter : m.intra;
  const PairModel& node = m.has_intra ? m.intra : m.inter;
  std::string x = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<!--\n";
  x += "  Written by `mcmclb calibrate` from times measured on the machine below: a model of it for SimGrid SMPI,\n";
  x += "  not a measurement of any run on it.\n";
  for (const auto& c : comments) x += "  " + comment_safe(c) + "\n";
  x += "  Measured: " + std::to_string(m.nodes) + " node(s) of " + std::to_string(m.cores_per_node) + " core(s), " +
       std::to_string(m.ranks) + " rank(s).\n";
  if (m.has_intra) {
    x += "  Inside a node (fitted to medians, seconds by bytes): " + comment_safe(pair_words(m.intra)) + ".\n";
  } else {
    x += "  Inside a node: NOT MEASURED (one rank per node); the loopback copies the times between nodes.\n";
  }
  if (m.has_inter) {
    x += "  Between nodes (fitted to medians): " + comment_safe(pair_words(m.inter)) + ".\n";
  } else {
    x += "  Between nodes: NOT MEASURED (the launch ran on one node); the links copy the times inside a node.\n"
         "  Run it on two nodes or more for a network's constants.\n";
  }
  x += "  MPI_Allreduce of 8 bytes over the " + std::to_string(m.ranks) + " ranks: " + num(m.allreduce_s * 1e6) +
       " us (median). MPI_Test " + num(m.test_s * 1e6) + " us, MPI_Iprobe " + num(m.iprobe_s * 1e6) +
       " us per call (smpi/test, smpi/iprobe).\n";
  x += "  Shape: FAT_TREE \"" + shape.topo + "\", " + std::to_string(shape.nodes) + " nodes of " +
       std::to_string(m.cores_per_node) + " cores";
  x += shape.leaves > 1
           ? ": " + std::to_string(shape.leaves) + " leaf switches of " + std::to_string(shape.leaf_nodes) +
                 " nodes, " + std::to_string(shape.leaf_nodes) + " spine switches, full bisection."
           : ": one switch.";
  x += " A route inside a leaf crosses " + std::to_string(shape.hops_in_leaf) +
       " links, so each link has the network's latency over " + std::to_string(shape.hops_in_leaf) +
       "; across leaves a route crosses twice as many, and only that network part grows: the software's per-call\n"
       "  costs are smpi/os, smpi/ois and smpi/or, paid once per message. No TCP window bounds a flow\n"
       "  (network/TCP-gamma 0). Host speed is not measured (2.5 Gf, as configs/platforms/fattree.xml).\n";
  for (const auto& n : m.notes) x += "  " + comment_safe(n) + "\n";
  x += "-->\n";
  x += "<platform version=\"4.1\">\n  <config id=\"General\">\n";
  x += "    <prop id=\"smpi/lat-factor\" value=\"" + factor_value(net.network, net.lat_factors()) + "\"/>\n";
  x += "    <prop id=\"smpi/bw-factor\" value=\"" + factor_value(net.network, net.bw_factors()) + "\"/>\n";
  // SimGrid bounds a flow's rate by a TCP window over the round trip (network/TCP-gamma, 4 MiB by default): at a
  // measured latency of milliseconds that bound, not the fitted bandwidth, would set a large message's time.
  x += "    <prop id=\"network/TCP-gamma\" value=\"0\"/>\n";
  x += "    <prop id=\"smpi/os\" value=\"" + overhead_value(net.os) + "\"/>\n";
  x += "    <prop id=\"smpi/ois\" value=\"" + overhead_value(net.ois) + "\"/>\n";
  x += "    <prop id=\"smpi/or\" value=\"" + overhead_value(net.orecv) + "\"/>\n";
  // The measured library's switch from eager to rendezvous sends: below it SMPI sends detached (MPI_Send returns
  // once its overhead is paid) and delivers before the receive is posted, as an eager send does.
  if (net.eager_limit > 0) {
    x += "    <prop id=\"smpi/send-is-detached-thresh\" value=\"" + std::to_string(net.eager_limit) + "\"/>\n";
    x += "    <prop id=\"smpi/async-small-thresh\" value=\"" + std::to_string(net.eager_limit) + "\"/>\n";
  }
  x += "    <prop id=\"smpi/test\" value=\"" + num(m.test_s) + "\"/>\n";
  x += "    <prop id=\"smpi/iprobe\" value=\"" + num(m.iprobe_s) + "\"/>\n";
  x += "  </config>\n  <zone id=\"calibrated\" routing=\"Full\">\n";
  x += "    <cluster id=\"machine\" topology=\"FAT_TREE\" topo_parameters=\"" + shape.topo +
       "\" prefix=\"node-\" radical=\"0-" + std::to_string(shape.nodes - 1) +
       "\" suffix=\"\"\n             speed=\"2.5Gf\" core=\"" + std::to_string(m.cores_per_node) + "\" bw=\"" +
       num(net.bandwidth_Bps()) + "Bps\" lat=\"" + num(net.latency_s() / shape.hops_in_leaf) +
       "s\"\n             loopback_bw=\"" + num(node.bandwidth_Bps()) + "Bps\" loopback_lat=\"" +
       num(node.latency_s()) + "s\"/>\n";
  x += "  </zone>\n</platform>\n";
  return x;
}

std::string hostfile(const Shape& shape, int cores_per_node, int ranks) {
  std::string text;
  for (int r = 0; r < ranks && r / cores_per_node < shape.nodes; ++r) {
    text += "node-" + std::to_string(r / cores_per_node) + "\n";
  }
  return text;
}

}  // namespace mcmclb::calibrate
