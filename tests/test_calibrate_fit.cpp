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

/// A made-up machine of known piecewise constants, as SMPI would charge them: os and or below the eager limit (to a
/// message it sends detached), ois everywhere, and the network's pieces by payload, the bytes and SMPI's envelope
/// (latency x factor + payload / (bandwidth x factor)). Its step at a payload of 40 B lies between the timed sizes
/// 16 and 24 B, yet a boundary written at 23 B (the message's size) would move 8 and 12 B, by their payloads, into
/// the piece above.
struct Truth {
  std::int64_t eager = 16384;
  cal::Piecewise os{{{0, 0.30e-6, 0.2e-9}, {1024, 0.9e-6, 0.05e-9}}};
  cal::Piecewise ois{{{0, 0.20e-6, 0.1e-9}, {4096, 1.0e-6, 0.02e-9}}};
  cal::Piecewise orecv{{{0, 0.25e-6, 0.3e-9}, {2048, 1.5e-6, 0.1e-9}}};
  double latency = 1.2e-6, bandwidth = 8e9;
  std::vector<std::int64_t> from = {0, 40, 8200, 262144};  // by payload
  std::vector<double> lat_factor = {1.0, 1.5, 1.8, 6.0}, bw_factor = {0.5, 0.5, 0.8, 1.0};
  [[nodiscard]] std::size_t piece_of_payload(std::int64_t payload) const {
    std::size_t i = 0;
    while (i + 1 < from.size() && from[i + 1] <= payload) ++i;
    return i;
  }
  [[nodiscard]] double network(std::int64_t bytes) const {
    const std::int64_t payload = bytes + cal::kSmpiEnvelope;
    const std::size_t i = piece_of_payload(payload);
    return latency * lat_factor[i] + static_cast<double>(payload) / (bandwidth * bw_factor[i]);
  }
  [[nodiscard]] double one_way(std::int64_t bytes) const {
    return (bytes < eager ? os.at(bytes) + orecv.at(bytes) : 0.0) + network(bytes);
  }
};

/// One size's spread around time: the median off by `noise` (alternately up and down), its interval 1 % wide.
cal::Spread spread(std::int64_t bytes, double time, double noise, int k) {
  const double median = time * (1 + (k % 2 == 0 ? noise : -noise));
  return {bytes, median, median * 0.995, median * 1.005, 30};
}

cal::PairTimes times_of(const Truth& t, double noise) {
  cal::PairTimes times;
  times.eager_limit = t.eager;
  int k = 0;
  for (const auto bytes : cal::message_sizes()) {
    times.pingpong.push_back(spread(bytes, t.one_way(bytes), noise, k++));
    // Above the eager limit MPI_Send waits for the late receiver, and MPI_Recv for the transfer: long times the fit
    // must leave out.
    times.send.push_back(spread(bytes, bytes < t.eager ? t.os.at(bytes) : 50e-6, noise, k++));
    times.isend.push_back(spread(bytes, t.ois.at(bytes), noise, k++));
    times.recv.push_back(spread(bytes, bytes < t.eager ? t.orecv.at(bytes) : t.one_way(bytes), noise, k++));
  }
  return times;
}

void expect_pieces(const cal::Piecewise& got, const cal::Piecewise& want, const char* what) {
  ASSERT_EQ(got.pieces.size(), want.pieces.size()) << what;
  for (std::size_t i = 0; i < want.pieces.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(got.pieces[i].from, want.pieces[i].from) << what << " piece " << i;
    }
    EXPECT_LT(off(got.pieces[i].offset_s, want.pieces[i].offset_s), 0.05)
        << what << " piece " << i << " offset " << got.pieces[i].offset_s;
    EXPECT_LT(off(got.pieces[i].per_byte_s, want.pieces[i].per_byte_s), 0.05)
        << what << " piece " << i << " per byte " << got.pieces[i].per_byte_s;
  }
}

}  // namespace

TEST(CalibrateFit, RecoversLatencyAndBandwidthOfALine) {
  for (const double noise : {0.0, 0.001}) {
    const auto points = line_times(1.7e-6, 9.5e9, 0, 1LL << 40, noise);
    const cal::Piecewise l = cal::fit_segments(points);
    ASSERT_EQ(l.pieces.size(), 1U) << "noise " << noise;
    EXPECT_LT(off(l.pieces[0].offset_s, 1.7e-6), 0.01) << "noise " << noise << ": latency " << l.pieces[0].offset_s;
    EXPECT_LT(off(1 / l.pieces[0].per_byte_s, 9.5e9), 0.01) << "noise " << noise << ": bandwidth";
  }
}

TEST(CalibrateFit, SegmentsFindTheBreakpointsInTheData) {
  // Three lines meeting nowhere in particular: 1 us flat, then 3 us + 1 ns/B from 1536 B, then 20 us + 0.1 ns/B
  // from 98304 B (sizes the command times, not round ones: the breakpoints are found, not assumed).
  const cal::Piecewise want{{{0, 1e-6, 0.0}, {1536, 3e-6, 1e-9}, {98304, 20e-6, 0.1e-9}}};
  std::vector<cal::Point> points;
  int k = 0;
  for (const auto bytes : cal::message_sizes()) {
    points.push_back({bytes, want.at(bytes) * (1 + (k++ % 2 == 0 ? 0.002 : -0.002))});
  }
  const cal::Piecewise got = cal::fit_segments(points);
  ASSERT_EQ(got.pieces.size(), 3U);
  EXPECT_EQ(got.pieces[1].from, 1536);
  EXPECT_EQ(got.pieces[2].from, 98304);
  EXPECT_LT(off(got.pieces[0].offset_s, 1e-6), 0.05) << got.pieces[0].offset_s;
  EXPECT_LT(std::fabs(got.pieces[0].per_byte_s), 1e-12) << got.pieces[0].per_byte_s;
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_LT(off(got.pieces[i].offset_s, want.pieces[i].offset_s), 0.05) << i << ": " << got.pieces[i].offset_s;
    EXPECT_LT(off(got.pieces[i].per_byte_s, want.pieces[i].per_byte_s), 0.05) << i << ": " << got.pieces[i].per_byte_s;
  }
  // One line with the same noise stays one piece: a breakpoint is added only where the data bend.
  std::vector<cal::Point> straight;
  for (const auto bytes : cal::message_sizes()) {
    straight.push_back({bytes, (2e-6 + static_cast<double>(bytes) * 0.3e-9) * (1 + (k++ % 2 == 0 ? 0.002 : -0.002))});
  }
  EXPECT_EQ(cal::fit_segments(straight).pieces.size(), 1U);
  EXPECT_THROW((void)cal::fit_segments(std::vector<cal::Point>{{8, 1e-6}, {8, 2e-6}}), std::invalid_argument);
}

TEST(CalibrateFit, PairRecoversEveryKnownConstantWithinFivePercent) {
  const Truth t;
  const cal::PairModel m = cal::fit_pair(times_of(t, 0.002));
  EXPECT_EQ(m.eager_limit, t.eager);
  expect_pieces(m.os, t.os, "os");
  expect_pieces(m.ois, t.ois, "ois");
  expect_pieces(m.orecv, t.orecv, "or");
  EXPECT_LT(off(m.latency_s(), t.latency), 0.05) << m.latency_s();
  EXPECT_LT(off(m.bandwidth_Bps(), t.bandwidth), 0.05) << m.bandwidth_Bps();
  ASSERT_EQ(m.network.pieces.size(), t.from.size());
  // Every timed size falls, by its payload, in the piece the machine's does: a breakpoint is known only to lie
  // between two timed sizes.
  for (const auto bytes : cal::message_sizes()) {
    const auto* in = m.network.piece_of(bytes + cal::kSmpiEnvelope);
    EXPECT_EQ(static_cast<std::size_t>(in - m.network.pieces.data()), t.piece_of_payload(bytes + cal::kSmpiEnvelope))
        << bytes << " B";
  }
  for (std::size_t i = 0; i < t.from.size(); ++i) {
    EXPECT_LT(off(m.lat_factors()[i], t.lat_factor[i]), 0.05) << i << ": " << m.lat_factors()[i];
    EXPECT_LT(off(m.bw_factors()[i], t.bw_factor[i]), 0.05) << i << ": " << m.bw_factors()[i];
  }
  // The fitted model meets every median it was fitted to: nothing to say.
  EXPECT_TRUE(cal::misses(m, times_of(t, 0.002)).empty()) << cal::misses_words(cal::misses(m, times_of(t, 0.002)));
}

TEST(CalibrateFit, AFitThatMissesItsOwnMediansIsSaid) {
  // A busy host's ping-pong, as measured beside two spinning processes: 100-107 us at 8 B to 2 KiB (a scheduler's
  // time slice, not the library), the other sizes alternately fast and slow; the overheads timed fast. No piecewise
  // line meets such medians, and the model must say so rather than be written in silence.
  const Truth t;
  cal::PairTimes times = times_of(t, 0.0);
  int k = 0;
  for (auto& s : times.pingpong) {
    const double busy = s.bytes <= 2048 ? 100e-6 + 7e-6 * (k % 3) / 2 : (k % 2 == 0 ? 0.9 : 20) * s.median_s;
    s = {s.bytes, busy, busy * 0.98, busy * 1.02, 30};
    ++k;
  }
  const cal::PairModel m = cal::fit_pair(times);
  const auto missed = cal::misses(m, times);
  ASSERT_FALSE(missed.empty());
  EXPECT_EQ(missed.front().kind, "pingpong");
  const std::string words = cal::misses_words(missed);
  EXPECT_NE(words.find("the fit misses"), std::string::npos) << words;
  EXPECT_NE(words.find("pingpong"), std::string::npos) << words;
  // Its worst miss is off by more than the stated tolerance beyond the interval.
  const cal::Miss& w = missed.front();
  EXPECT_TRUE(w.model_s > w.measured.high_s * (1 + cal::kFitTolerance) ||
              w.model_s < w.measured.low_s * (1 - cal::kFitTolerance));
}

TEST(CalibrateFit, OverheadsTimedApartAreScaledIntoTheOneWayTime) {
  // Inside a node: an MPI_Recv of an unexpected message (0.13 us) and an MPI_Send (0.09 us) timed apart exceed a warm
  // ping-pong's one-way time (0.13 us below 64 KiB). SMPI charges both to every eager message, so the model scales
  // them down alike and meets the ping-pong; the scaling is recorded, and the calls are checked as timed.
  cal::PairTimes times;
  times.eager_limit = 65536;
  int k = 0;
  for (const auto bytes : cal::message_sizes()) {
    const double b = static_cast<double>(bytes);
    times.pingpong.push_back(spread(bytes, 0.13e-6 + b / 10e9, 0.002, k++));
    times.send.push_back(spread(bytes, 0.09e-6 + b / 40e9, 0.002, k++));
    times.isend.push_back(spread(bytes, 0.09e-6, 0.002, k++));
    times.recv.push_back(spread(bytes, 0.13e-6 + b / 40e9, 0.002, k++));
  }
  const cal::PairModel m = cal::fit_pair(times);
  EXPECT_LT(m.overhead_scale, 0.56);
  EXPECT_GT(m.overhead_scale, 0.5);
  for (const auto& s : times.pingpong) {
    EXPECT_LE(m.overheads_s(s.bytes), cal::kOverheadShare * s.median_s * 1.05) << s.bytes;
  }
  const auto missed = cal::misses(m, times);
  EXPECT_TRUE(missed.empty()) << cal::misses_words(missed);
}

TEST(CalibrateFit, SpreadIsTheMedianWithItsInterval) {
  const cal::Spread s = cal::spread_of({64, {5, 1, 4, 2, 3, 100, 6, 7, 8}});
  EXPECT_EQ(s.median_s, 5);
  EXPECT_EQ(s.n, 9U);
  EXPECT_LE(s.low_s, 5);
  EXPECT_GE(s.high_s, 5);
  EXPECT_LT(s.high_s, 100);  // one preempted timing moves neither the median nor its interval to 100
  const cal::Spread few = cal::spread_of({64, {3, 1, 2}});
  EXPECT_EQ(few.low_s, 2);  // no interval below six timings: the median at both ends
  EXPECT_EQ(few.high_s, 2);
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
  const Truth t;
  m.intra = cal::fit_pair(times_of(t, 0.0));
  m.has_intra = true;
  m.test_s = 0.1e-6;
  m.iprobe_s = 0.2e-6;
  m.notes = {"WARNING: a -- note"};
  const std::string xml = cal::platform_xml(m, cal::shape_for(8, 2), {"Command: a -- b"});
  // Two links per route in a leaf: each carries half the network's latency.
  EXPECT_NE(xml.find("lat=\"6e-07s\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("bw=\"8e+09Bps\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("loopback_lat=\"1.2e-06s\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("topo_parameters=\"1;4;1;1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<prop id=\"smpi/iprobe\" value=\"2e-07\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("NOT MEASURED"), std::string::npos) << xml;
  // SMPI's pieces hold the sizes above their boundary: a piece from 1024 B is written 1023. The factors' pieces
  // are by payload: the one from 24 B (payload 40) is written 39, the one from 8192 B 8207.
  EXPECT_NE(xml.find("<prop id=\"smpi/os\" value=\"0:3e-07:2e-10;1023:9e-07:5e-11\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<prop id=\"smpi/lat-factor\" value=\"0:1;39:1.5;8207:1.8;262159:6\"/>"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<prop id=\"smpi/bw-factor\" value=\"0:0.5;39:0.5;8207:0.8;262159:1\"/>"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<prop id=\"smpi/send-is-detached-thresh\" value=\"16384\"/>"), std::string::npos) << xml;
  // The fitted line alone sets a message's time: no TCP window caps the rate at a long latency.
  EXPECT_NE(xml.find("<prop id=\"network/TCP-gamma\" value=\"0\"/>"), std::string::npos) << xml;
  // A comment may not hold "--": the command line's is broken up, and the notes are in the head.
  EXPECT_NE(xml.find("a - - b"), std::string::npos) << xml;
  EXPECT_NE(xml.find("WARNING: a - - note"), std::string::npos) << xml;
}
