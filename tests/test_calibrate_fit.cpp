// SPDX-License-Identifier: BSD-3-Clause
// mcmclb calibrate's pure half (mcmclb/calibrate.hpp) on made-up times of known latency and bandwidth: the fit
// recovers them, the platform's shape holds the ranks asked, and its text carries the fitted constants.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mcmclb/calibrate.hpp"

namespace cal = mcmclb::calibrate;

namespace {

/// Times on the line latency + bytes / bandwidth at the command's sizes of [from, to), each off by `noise` (a
/// fraction), alternately up and down.
std::vector<cal::Point> line_times(double latency_s, double bandwidth_Bps, std::int64_t from, std::int64_t to,
                                   double noise) {
  std::vector<cal::Point> points;
  int k = 0;
  for (const auto bytes : cal::message_sizes()) {
    if (bytes < from || bytes >= to) continue;
    const double exact = latency_s + static_cast<double>(bytes) / bandwidth_Bps;
    points.push_back({bytes, exact * (1 + (k++ % 2 == 0 ? noise : -noise))});
  }
  return points;
}

double off(double got, double want) { return std::fabs(got - want) / want; }

}  // namespace

TEST(CalibrateFit, RecoversLatencyAndBandwidthOfALine) {
  for (const double noise : {0.0, 0.001}) {
    const auto points = line_times(1.7e-6, 9.5e9, 0, 1LL << 40, noise);
    const cal::Line l = cal::fit_line(points);
    EXPECT_LT(off(l.latency_s, 1.7e-6), 0.01) << "noise " << noise << ": latency " << l.latency_s;
    EXPECT_LT(off(l.bandwidth_Bps, 9.5e9), 0.01) << "noise " << noise << ": bandwidth " << l.bandwidth_Bps;
  }
}

TEST(CalibrateFit, TwoRangesGiveTheLinkAndSmpiFactors) {
  // Small messages: 0.8 us and 2 GB/s; large ones (rendezvous): 4 us and 10 GB/s.
  auto points = line_times(0.8e-6, 2e9, 0, cal::kLargeFrom, 0.002);
  const auto large = line_times(4e-6, 10e9, cal::kLargeFrom, 1LL << 40, 0.002);
  points.insert(points.end(), large.begin(), large.end());
  const cal::Model m = cal::fit_model(points, cal::kLargeFrom);
  EXPECT_LT(off(m.latency_s(), 0.8e-6), 0.01) << m.latency_s();
  EXPECT_LT(off(m.bandwidth_Bps(), 10e9), 0.01) << m.bandwidth_Bps();
  EXPECT_LT(off(m.lat_factor_large(), 5.0), 0.02) << m.lat_factor_large();
  EXPECT_LT(off(m.bw_factor_small(), 0.2), 0.02) << m.bw_factor_small();
}

TEST(CalibrateFit, FlatSmallTimesLeaveTheLinkBandwidth) {
  // Small messages whose time does not grow with the size: no slope, factor 1 (not a division by zero).
  std::vector<cal::Point> points = {{8, 1e-6}, {64, 1e-6}, {512, 0.99e-6}, {65536, 10e-6}, {4194304, 400e-6}};
  const cal::Model m = cal::fit_model(points, cal::kLargeFrom);
  EXPECT_EQ(m.small.bandwidth_Bps, 0.0);
  EXPECT_EQ(m.bw_factor_small(), 1.0);
  EXPECT_THROW((void)cal::fit_line(std::vector<cal::Point>{{8, 1e-6}, {8, 2e-6}}), std::invalid_argument);
}

TEST(CalibrateFit, ShapeHoldsTheRanksAsked) {
  const cal::Shape one = cal::shape_for(8, 2);
  EXPECT_EQ(one.nodes, 4);
  EXPECT_EQ(one.topo, "1;4;1;1");
  const cal::Shape two = cal::shape_for(1000, 32);  // 32 nodes: two leaves of 16
  EXPECT_EQ(two.nodes, 32);
  EXPECT_EQ(two.leaves, 2);
  EXPECT_EQ(two.topo, "2;16,2;1,16;1,1");
  const cal::Shape odd = cal::shape_for(17 * 4, 4);  // 17 nodes: rounded up to two whole leaves
  EXPECT_EQ(odd.nodes, 32);
  const std::string hosts = cal::hostfile(odd, 4, 17 * 4);
  EXPECT_EQ(std::count(hosts.begin(), hosts.end(), '\n'), 68);
  EXPECT_EQ(hosts.substr(hosts.size() - 8), "node-16\n");
}

TEST(CalibrateFit, PlatformCarriesTheFittedConstants) {
  cal::Machine m;
  m.ranks = 2;
  m.cores_per_node = 2;
  m.intra = cal::fit_model(line_times(2e-6, 5e9, 0, 1LL << 40, 0), cal::kLargeFrom);
  m.has_intra = true;
  m.test_s = 0.1e-6;
  m.iprobe_s = 0.2e-6;
  const std::string xml = cal::platform_xml(m, cal::shape_for(8, 2), {"Command: a -- b"});
  // Two links per route in a leaf: each carries half the latency.
  EXPECT_NE(xml.find("lat=\"1e-06s\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("bw=\"5e+09Bps\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("loopback_lat=\"2e-06s\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("topo_parameters=\"1;4;1;1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<prop id=\"smpi/iprobe\" value=\"2e-07\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("NOT MEASURED"), std::string::npos) << xml;
  // The fitted line alone sets a message's time: no TCP window caps the rate at a long latency.
  EXPECT_NE(xml.find("<prop id=\"network/TCP-gamma\" value=\"0\"/>"), std::string::npos) << xml;
  // A comment may not hold "--": the command line's is broken up.
  EXPECT_NE(xml.find("a - - b"), std::string::npos) << xml;
}
