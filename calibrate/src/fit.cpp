// SPDX-License-Identifier: BSD-3-Clause
// The pure half of mcmclb::calibrate: the least-squares fits, the platform's shape and its text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/calibrate.hpp"

namespace mcmclb::calibrate {

Line fit_line(std::span<const Point> points) {
  std::set<std::int64_t> sizes;
  for (const auto& p : points) sizes.insert(p.bytes);
  if (sizes.size() < 2) throw std::invalid_argument("fit_line: needs at least two distinct message sizes");
  // Weighted by 1 / time^2, i.e. least squares on relative errors: a timing's noise grows with the time, and on
  // plain squares the 4 MiB message's fraction of a per cent outweighs the whole latency of the small ones.
  // Centred sums: the sizes span six orders of magnitude, and raw x^2 sums would lose the small ones.
  double w_sum = 0, mean_x = 0, mean_y = 0;
  for (const auto& p : points) {
    const double w = p.seconds > 0 ? 1.0 / (p.seconds * p.seconds) : 1.0;
    w_sum += w;
    mean_x += w * static_cast<double>(p.bytes);
    mean_y += w * p.seconds;
  }
  mean_x /= w_sum;
  mean_y /= w_sum;
  double sxx = 0, sxy = 0;
  for (const auto& p : points) {
    const double w = p.seconds > 0 ? 1.0 / (p.seconds * p.seconds) : 1.0;
    const double dx = static_cast<double>(p.bytes) - mean_x;
    sxx += w * dx * dx;
    sxy += w * dx * (p.seconds - mean_y);
  }
  const double slope = sxy / sxx;
  return Line{mean_y - slope * mean_x, slope > 0 ? 1.0 / slope : 0.0};
}

Model fit_model(std::span<const Point> points, std::int64_t threshold) {
  std::vector<Point> small, large;
  for (const auto& p : points) (p.bytes < threshold ? small : large).push_back(p);
  return Model{threshold, fit_line(small), fit_line(large)};
}

// The large messages' line is the link's bandwidth with the small messages' latency scaled by this factor. A fit
// whose intercept came out negative (noise on a line that passes near the origin) is taken as no latency.
double Model::lat_factor_large() const {
  return small.latency_s > 0 ? std::max(0.0, large.latency_s) / small.latency_s : 1.0;
}

// The small messages' bandwidth as a share of the link's. Where their times do not grow with the size (no positive
// slope), the size costs them nothing measurable: the link's bandwidth stands.
double Model::bw_factor_small() const {
  return small.bandwidth_Bps > 0 && large.bandwidth_Bps > 0 ? small.bandwidth_Bps / large.bandwidth_Bps : 1.0;
}

std::vector<std::int64_t> message_sizes() { return {8, 64, 512, 2048, 8192, 32768, 65536, 262144, 1048576, 4194304}; }

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

std::string line_words(const Line& l) {
  return num(l.latency_s * 1e6) + " us + bytes / " +
         (l.bandwidth_Bps > 0 ? num(l.bandwidth_Bps / 1e6) + " MB/s" : std::string("(no positive slope)"));
}

}  // namespace

std::string platform_xml(const Machine& m, const Shape& shape, const std::vector<std::string>& comments) {
  // The factors come from the pair that crosses the network where there was one: merges between nodes are what
  // the advice weighs. Inside one node SMPI applies the same factors to the loopback.
  const Model& net = m.has_inter ? m.inter : m.intra;
  const Model& node = m.has_intra ? m.intra : m.inter;
  const std::string large = std::to_string(net.threshold);
  std::string x = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<!--\n";
  x += "  Written by `mcmclb calibrate` from times measured on the machine below: a model of it for SimGrid SMPI,\n";
  x += "  not a measurement of any run on it.\n";
  for (const auto& c : comments) x += "  " + comment_safe(c) + "\n";
  x += "  Measured: " + std::to_string(m.nodes) + " node(s) of " + std::to_string(m.cores_per_node) + " core(s), " +
       std::to_string(m.ranks) + " rank(s).\n";
  if (m.has_intra) {
    x += "  Inside a node, one-way: below " + large + " B " + line_words(m.intra.small) + "; from it on " +
         line_words(m.intra.large) + ".\n";
  } else {
    x += "  Inside a node: NOT MEASURED (one rank per node); the loopback copies the times between nodes.\n";
  }
  if (m.has_inter) {
    x += "  Between nodes, one-way: below " + large + " B " + line_words(m.inter.small) + "; from it on " +
         line_words(m.inter.large) + ".\n";
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
       " links, so each link has the measured latency over " + std::to_string(shape.hops_in_leaf) +
       "; across leaves a route crosses twice as many.\n";
  x += "  The whole one-way time is in the links: smpi/os, smpi/ois and smpi/or are 0, and no TCP window bounds a\n"
       "  flow (network/TCP-gamma 0). smpi/lat-factor and\n"
       "  smpi/bw-factor make messages from " +
       large +
       " B on follow their own fitted line. Host speed is not measured (2.5 Gf, as\n"
       "  configs/platforms/fattree.xml).\n-->\n";
  x += "<platform version=\"4.1\">\n  <config id=\"General\">\n";
  x += "    <prop id=\"smpi/lat-factor\" value=\"0:1;" + large + ":" + num(net.lat_factor_large()) + "\"/>\n";
  x += "    <prop id=\"smpi/bw-factor\" value=\"0:" + num(net.bw_factor_small()) + ";" + large + ":1\"/>\n";
  // SimGrid bounds a flow's rate by a TCP window over the round trip (network/TCP-gamma, 4 MiB by default): at a
  // measured latency of milliseconds that bound, not the fitted bandwidth, would set a large message's time.
  x += "    <prop id=\"network/TCP-gamma\" value=\"0\"/>\n";
  for (const char* id : {"smpi/os", "smpi/ois", "smpi/or"}) {
    x += "    <prop id=\"" + std::string(id) + "\" value=\"0:0:0\"/>\n";
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
