// SPDX-License-Identifier: BSD-3-Clause
// Checkpoint files of an application's chains: a text meta file saying whose chains the folder holds, one binary
// record per chain ending in a checksum, each replaced whole (walkers/src/checkpoint.hpp), and the stop on a signal.
#include "checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "mcmclb/input_error.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/walkers.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb::walkers::detail {

namespace {

constexpr std::string_view kMetaName = "checkpoint.meta";
constexpr std::string_view kMetaFirstLine = "mcmclb walkers checkpoint 1";
constexpr std::string_view kStopPrefix = ".stopped-";
constexpr std::string_view kStoppedName = "stopped";
constexpr std::string_view kSavedName = "saved";         // the subfolder of marks (saved_marks)
constexpr std::string_view kLostName = "lost";           // the note of a run that could not save every chain
constexpr std::string_view kTemporary = ".tmp-";         // write_file_whole's temporary files: name.tmp-PID
constexpr std::string_view kRecordMagic = "MCMCLBW1";    // and the format's version
constexpr std::string_view kPrevious = ".prev";          // a chain's record before its latest, kept until that is whole
constexpr std::string_view kSetAside = ".bad";           // a record a run fell back from, kept for a look
constexpr std::string_view kAfresh = "afresh-";          // afresh-N: the user asks the next run to start chain N anew
constexpr std::string_view kPieces = "pieces";           // the subfolder of spread states' pieces, one folder per chain
constexpr std::string_view kManifestMagic = "PIECES01";  // a spread state's record (PieceManifest)

/// FNV-1a over bytes: a torn or altered record does not end in its own checksum.
uint64_t checksum(std::span<const std::byte> bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::byte b : bytes) h = (h ^ static_cast<uint64_t>(b)) * 0x100000001b3ULL;
  return h;
}

/// Values appended as their bytes (records are read back on machines of the same kind, as MPI's own are).
class Bytes {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    out_.insert(out_.end(), p, p + sizeof(T));
  }
  void put(std::span<const std::byte> bytes) {
    put(static_cast<uint64_t>(bytes.size()));
    out_.insert(out_.end(), bytes.begin(), bytes.end());
  }
  void put_rows(std::span<const ItemCost> rows) {
    put(static_cast<uint64_t>(rows.size()));
    for (const ItemCost& r : rows) {
      put(r.item);
      put(static_cast<int64_t>(r.ranks));
      put(r.seconds);
    }
  }
  [[nodiscard]] std::vector<std::byte>& bytes() noexcept { return out_; }

 private:
  std::vector<std::byte> out_;
};

/// Bytes read back in order; a read past the end throws std::runtime_error("torn").
class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get() {
    T value;
    need(sizeof(T));
    std::memcpy(&value, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::vector<std::byte> get_bytes() {
    const auto n = get<uint64_t>();
    need(n);
    std::vector<std::byte> out(in_.begin() + static_cast<std::ptrdiff_t>(at_),
                               in_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return out;
  }
  /// As get_bytes, without a copy: a view into the bytes read.
  std::span<const std::byte> get_span() {
    const auto n = get<uint64_t>();
    need(n);
    const std::span<const std::byte> out = in_.subspan(at_, n);
    at_ += n;
    return out;
  }
  void get_rows(int chain, std::vector<ItemCost>& rows) {
    const auto n = get<uint64_t>();
    need(n * 24);
    for (uint64_t i = 0; i < n; ++i) {
      ItemCost r;
      r.chain = chain;
      r.item = get<int64_t>();
      r.ranks = static_cast<int>(get<int64_t>());
      r.seconds = get<double>();
      rows.push_back(r);
    }
  }
  [[nodiscard]] std::size_t at() const noexcept { return at_; }
  [[nodiscard]] bool at_end() const noexcept { return at_ == in_.size(); }

 private:
  void need(uint64_t n) const {
    if (n > in_.size() - at_) throw std::runtime_error("torn: it ends early");
  }
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::strerror(errno));
  std::vector<char> text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(text.size());
  if (!text.empty()) std::memcpy(out.data(), text.data(), text.size());
  return out;
}

void fsync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename stands; only its durability across a power cut is less sure
  (void)::fsync(fd);
  ::close(fd);
}

std::string folder_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

/// The chain a file name's number names (chain-N, afresh-N, saved/N), or -1 where it is not a whole number >= 0.
int chain_number(const std::string& text) {
  try {
    std::size_t used = 0;
    const int chain = std::stoi(text, &used);
    return used == text.size() && chain >= 0 ? chain : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

[[noreturn]] void refuse(const std::string& file, const std::string& why) {
  throw InputError("Options::checkpoint: " + file + ": " + why +
                   " (allowed: a folder of this application's checkpoints, or an empty or new folder)");
}

std::atomic<int> g_signal{0};
extern "C" void on_stop_signal(int signo) { g_signal.store(signo); }

}  // namespace

uint64_t chains_fingerprint(const std::string& name, std::span<const int64_t> items) {
  uint64_t h = mix64(0x636b7074);  // "ckpt"
  for (const char c : name) h = mix64(h ^ static_cast<unsigned char>(c));
  h = mix64(h ^ items.size());
  for (const int64_t n : items) h = mix64(h ^ static_cast<uint64_t>(n));
  return h;
}

uint64_t parameters_hash(std::string_view parameters) {
  if (parameters.empty()) return 0;
  uint64_t h = mix64(0x706172616d73);  // "params"
  h = mix64(h ^ parameters.size());
  for (const char c : parameters) h = mix64(h ^ static_cast<unsigned char>(c));
  return h == 0 ? 1 : h;
}

uint64_t checkpoint_fingerprint(uint64_t chains, uint64_t parameters) {
  return parameters == 0 ? chains : mix64(chains ^ mix64(parameters));
}

std::string parameters_shown(std::string_view parameters) { return one_line(parameters, 120); }

std::vector<std::byte> pack_state(std::span<const std::byte> state, int64_t ended_at, std::span<const ItemCost> rows) {
  Bytes out;
  out.put(ended_at);
  out.put(state);
  out.put_rows(rows);
  return std::move(out.bytes());
}

Travelling unpack_state(std::span<const std::byte> packed, int chain) {
  Reader in(packed);
  Travelling out;
  out.ended_at = in.get<int64_t>();
  out.state = in.get_bytes();
  in.get_rows(chain, out.rows);
  if (!in.at_end()) throw std::runtime_error("a chain's state with bytes after its rows");
  return out;
}

std::vector<std::byte> pack_manifest(const PieceManifest& m) {
  Bytes out;
  for (const char c : kManifestMagic) out.put(c);
  out.put(std::span<const std::byte>(m.shared));
  out.put(static_cast<uint64_t>(m.checksums.size()));
  for (const int64_t b : m.bounds) out.put(b);
  for (const uint64_t c : m.checksums) out.put(c);
  return std::move(out.bytes());
}

PieceManifest unpack_manifest(std::span<const std::byte> packed) {
  if (packed.size() < kManifestMagic.size() ||
      std::memcmp(packed.data(), kManifestMagic.data(), kManifestMagic.size()) != 0) {
    throw std::runtime_error("not a spread state's record (no pieces named)");
  }
  Reader in(packed.subspan(kManifestMagic.size()));
  PieceManifest m;
  m.shared = in.get_bytes();
  const auto n = in.get<uint64_t>();
  // Each piece takes 16 bytes at least: a count beyond that is not a record's.
  if (n == 0 || n > packed.size() / 16) throw std::runtime_error("a spread state of no pieces");
  for (uint64_t k = 0; k <= n; ++k) m.bounds.push_back(in.get<int64_t>());
  for (uint64_t k = 0; k < n; ++k) m.checksums.push_back(in.get<uint64_t>());
  if (!in.at_end()) throw std::runtime_error("a spread state's record with bytes after its pieces");
  if (m.bounds.front() != 0 || !std::is_sorted(m.bounds.begin(), m.bounds.end())) {
    throw std::runtime_error("a spread state whose pieces do not follow each other");
  }
  return m;
}

uint64_t piece_checksum(std::span<const std::byte> bytes, uint64_t h) {
  std::size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes.data() + at, 8);
    h = mix64(h ^ word);
  }
  for (; at < bytes.size(); ++at) h = mix64(h ^ static_cast<uint64_t>(bytes[at]) ^ 0x100);
  return h;
}

void write_file_whole(const std::string& path, std::span<const std::byte> bytes) {
  const std::string temporary = path + std::string(kTemporary) + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + temporary + ": " + std::strerror(errno));
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write " + temporary + ": " + why);
    }
    at += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write " + temporary + ": " + why);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + why);
  }
  fsync_folder(folder_of(path));
}

void CheckpointFolder::prepare() const {
  std::error_code error;
  std::filesystem::create_directories(path_, error);
  if (!std::filesystem::is_directory(path_)) {
    throw InputError("Options::checkpoint: " + path_ + " is not a folder" +
                     (error ? " (" + error.message() + ")" : std::string()) +
                     " (allowed: a folder, made if missing, that every rank can write)");
  }
  const std::string probe = path_ + "/.probe-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(probe.c_str(), "w");
  if (f == nullptr) {
    throw InputError("Options::checkpoint: cannot write in " + path_ + ": " + std::strerror(errno) +
                     " (allowed: a folder, made if missing, that every rank can write)");
  }
  std::fclose(f);
  std::remove(probe.c_str());
}

std::optional<CheckpointMeta> CheckpointFolder::read_meta() const {
  const std::string file = path_ + "/" + std::string(kMetaName);
  if (!std::filesystem::exists(file)) return std::nullopt;
  if (!std::filesystem::is_regular_file(file)) refuse(file, "not a regular file");
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line) || line != kMetaFirstLine) refuse(file, "not a checkpoint's meta file");
  CheckpointMeta m;
  std::map<std::string, std::string> values;
  while (std::getline(in, line)) {
    const std::size_t space = line.find(' ');
    values[line.substr(0, space)] = space == std::string::npos ? std::string() : line.substr(space + 1);
  }
  try {
    m.name = values.at("name");
    m.chains = std::stoi(values.at("chains"));
    m.fingerprint = std::stoull(values.at("fingerprint"), nullptr, 16);
    m.ranks = std::stoi(values.at("ranks"));
    m.groups = std::stoi(values.at("groups"));
    m.balancer = values.at("balancer");
    // Folders made before Options::parameters have no such line: made without parameters.
    if (const auto p = values.find("parameters"); p != values.end()) m.parameters = std::stoull(p->second, nullptr, 16);
    if (const auto p = values.find("parameters_text"); p != values.end()) m.parameters_text = p->second;
    if (const auto p = values.find("form"); p != values.end()) m.form = p->second;
    if (const auto p = values.find("held"); p != values.end()) {
      std::istringstream held(p->second);
      for (int c = 0; held >> c;) m.held.insert(c);
    }
    std::istringstream groups(values.at("chain_groups"));
    for (int g = 0; groups >> g;) m.chain_groups.push_back(g);
  } catch (const std::exception&) {
    refuse(file, "a meta file with a value missing or not a number");
  }
  if (static_cast<int>(m.chain_groups.size()) != m.chains) refuse(file, "chain_groups does not list every chain");
  if (!m.form.empty() && m.form != kFormWhole && m.form != kFormSpread) {
    refuse(file,
           "form '" + one_line(m.form) + "', neither " + std::string(kFormWhole) + " nor " + std::string(kFormSpread));
  }
  return m;
}

void CheckpointFolder::write_meta(const CheckpointMeta& m) const {
  std::ostringstream out;
  out << kMetaFirstLine << "\nname " << one_line(m.name) << "\nchains " << m.chains << "\nfingerprint " << std::hex
      << m.fingerprint << "\nparameters " << m.parameters << std::dec << "\nparameters_text "
      << parameters_shown(m.parameters_text) << "\nranks " << m.ranks << "\ngroups " << m.groups << "\nbalancer "
      << m.balancer << "\nchain_groups";
  for (const int g : m.chain_groups) out << ' ' << g;
  out << "\nform " << m.form << "\nheld";
  for (const int c : m.held) out << ' ' << c;
  out << "\n";
  const std::string text = out.str();
  write_file_whole(path_ + "/" + std::string(kMetaName),
                   std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

std::string CheckpointFolder::record_path(int chain) const { return path_ + "/chain-" + std::to_string(chain); }

std::string CheckpointFolder::stop_folder(const std::string& run_token) const {
  return path_ + "/" + std::string(kStopPrefix) + run_token;
}

std::set<int> CheckpointFolder::saved_marks() const {
  std::set<int> out;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(path_ + "/" + std::string(kSavedName), error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const int chain = chain_number(it->path().filename().string());
    if (chain >= 0) out.insert(chain);  // anything else is not a mark: left alone
  }
  return out;
}

void CheckpointFolder::mark_saved(int chain) const {
  if (marked_.count(chain) != 0) return;
  const std::string folder = path_ + "/" + std::string(kSavedName);
  std::error_code error;
  std::filesystem::create_directory(folder, error);
  const std::string mark = folder + "/" + std::to_string(chain);
  const int fd = ::open(mark.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + mark + ": " + std::strerror(errno));
  ::close(fd);
  marked_.insert(chain);
}

void CheckpointFolder::remove_leftovers() const {
  const auto remove_in = [](const std::string& folder, bool probes) {
    std::error_code error;
    for (auto it = std::filesystem::directory_iterator(folder, error);
         !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (name.find(kTemporary) != std::string::npos || (probes && name.rfind(".probe-", 0) == 0)) {
        std::error_code ignored;
        std::filesystem::remove(it->path(), ignored);
      }
    }
  };
  remove_in(path_, true);
  std::error_code error;
  const std::string pieces = path_ + "/" + std::string(kPieces);
  for (auto it = std::filesystem::directory_iterator(pieces, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (it->is_directory(error)) remove_in(it->path().string(), false);
  }
}

std::string CheckpointFolder::piece_path(int chain, int64_t item, int member, int size) const {
  return path_ + "/" + std::string(kPieces) + "/" + std::to_string(chain) + "/" + std::to_string(item) + "-" +
         std::to_string(member) + "-of-" + std::to_string(size);
}

uint64_t CheckpointFolder::write_piece(int chain, int64_t item, int member, int size,
                                       std::span<const std::byte> bytes) const {
  const std::string file = piece_path(chain, item, member, size);
  std::error_code error;
  std::filesystem::create_directories(folder_of(file), error);
  if (error) throw std::runtime_error("cannot make " + folder_of(file) + ": " + error.message());
  write_file_whole(file, bytes);
  return piece_checksum(bytes);
}

std::vector<std::byte> CheckpointFolder::read_piece_bytes(int chain, int64_t item, const PieceManifest& m,
                                                          int64_t begin, int64_t end) const {
  if (begin < 0 || end < begin || end > m.bounds.back()) {
    throw std::runtime_error("bytes " + std::to_string(begin) + " to " + std::to_string(end) + " of a state of " +
                             std::to_string(m.bounds.back()));
  }
  std::vector<std::byte> out(static_cast<std::size_t>(end - begin));
  const int size = static_cast<int>(m.checksums.size());
  for (int k = 0; k < size; ++k) {
    const int64_t from = std::max(begin, m.bounds[static_cast<std::size_t>(k)]);
    const int64_t to = std::min(end, m.bounds[static_cast<std::size_t>(k) + 1]);
    if (from >= to) continue;
    const std::string file = piece_path(chain, item, k, size);
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot read " + file + ": " + std::strerror(errno));
    auto at = static_cast<std::size_t>(from - begin);
    auto offset = static_cast<off_t>(from - m.bounds[static_cast<std::size_t>(k)]);
    auto left = static_cast<std::size_t>(to - from);
    while (left > 0) {
      const ssize_t n = ::pread(fd, out.data() + at, left, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string why = n < 0 ? std::strerror(errno) : std::string("it ends early");
        ::close(fd);
        throw std::runtime_error("cannot read " + file + ": " + why);
      }
      at += static_cast<std::size_t>(n);
      offset += n;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  return out;
}

namespace {

/// Why a spread state's running record cannot serve, from its pieces' files (empty: they are whole).
std::string pieces_fault(const CheckpointFolder& folder, const ChainRecord& r) {
  PieceManifest m;
  try {
    m = unpack_manifest(r.bytes);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  const int size = static_cast<int>(m.checksums.size());
  std::vector<std::byte> part(64 * 1024);  // a multiple of 8, as piece_checksum's parts must be
  for (int k = 0; k < size; ++k) {
    const std::string file = folder.piece_path(r.chain, r.next_item, k, size);
    std::ifstream in(file, std::ios::binary);
    if (!in) return "its piece " + file + " is missing";
    const int64_t length = m.bounds[static_cast<std::size_t>(k) + 1] - m.bounds[static_cast<std::size_t>(k)];
    uint64_t h = kPieceChecksumStart;
    int64_t got = 0;
    while (in) {
      in.read(reinterpret_cast<char*>(part.data()), static_cast<std::streamsize>(part.size()));
      const auto n = static_cast<std::size_t>(in.gcount());
      h = piece_checksum(std::span<const std::byte>(part).first(n), h);
      got += static_cast<int64_t>(n);
    }
    if (got != length) {
      return "its piece " + file + " is torn: " + std::to_string(got) + " bytes, where it had " +
             std::to_string(length);
    }
    if (h != m.checksums[static_cast<std::size_t>(k)]) return "its piece " + file + " is altered: its checksum differs";
  }
  return {};
}

}  // namespace

std::string CheckpointFolder::lost_note() const {
  std::ifstream in(path_ + "/" + std::string(kLostName));
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return one_line(line, 1000);
}

void CheckpointFolder::write_lost_note(const std::string& text) const {
  const std::string file = path_ + "/" + std::string(kLostName);
  if (text.empty()) {
    std::error_code error;
    std::filesystem::remove(file, error);
    return;
  }
  const std::string line = text + "\n";
  write_file_whole(file, std::as_bytes(std::span(line)));
}

void CheckpointFolder::remove_stop_marks() const {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(path_, error)) {
    if (entry.path().filename().string().rfind(kStopPrefix, 0) == 0) std::filesystem::remove_all(entry.path(), error);
  }
  std::filesystem::remove(path_ + "/" + std::string(kStoppedName), error);
}

namespace {

/// The record in file, of chain, or why it is none (torn, altered, of other chains, not a record).
ChainRecord parse_record(const std::string& file, int chain, uint64_t fingerprint) {
  if (!std::filesystem::is_regular_file(file)) throw std::runtime_error("not a regular file");
  const std::vector<std::byte> bytes = read_file(file);
  ChainRecord r;
  if (bytes.size() < kRecordMagic.size() + 8 ||
      std::memcmp(bytes.data(), kRecordMagic.data(), kRecordMagic.size()) != 0) {
    throw std::runtime_error("not a chain's checkpoint");
  }
  const std::span<const std::byte> body(bytes.data(), bytes.size() - 8);
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + body.size(), 8);
  if (stored != checksum(body)) throw std::runtime_error("torn or altered: its checksum differs");
  Reader in(body.subspan(kRecordMagic.size()));
  if (in.get<uint64_t>() != fingerprint) {
    throw std::runtime_error("of another application's chains (another name, chain count or item bounds)");
  }
  r.chain = static_cast<int>(in.get<int64_t>());
  r.finished = in.get<int64_t>() != 0;
  r.next_item = in.get<int64_t>();
  r.bytes = in.get_bytes();
  in.get_rows(chain, r.rows);
  if (!in.at_end()) throw std::runtime_error("torn: bytes after its last row");
  if (r.chain != chain) throw std::runtime_error("the record of chain " + std::to_string(r.chain));
  return r;
}

/// The record at file kept as file.prev before a new one replaces it: a hard link (no copy) swapped in by a
/// rename, so that a kill leaves a whole previous record, the older or the newer. Nothing where file is absent (the
/// chain's first record); a copy where the file system has no hard links.
void keep_previous(const std::string& file) {
  const std::string previous = file + std::string(kPrevious);
  const std::string temporary = previous + std::string(kTemporary) + std::to_string(::getpid());
  std::error_code error;
  // None yet (the chain's first record), or something in the way, which the write then names.
  if (!std::filesystem::is_regular_file(file, error)) return;
  std::remove(temporary.c_str());  // a kill's leftover of this pid
  if (::link(file.c_str(), temporary.c_str()) != 0) {
    std::vector<std::byte> bytes;
    try {
      bytes = read_file(file);
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot keep " + file + " as " + previous + ": " + e.what());
    }
    write_file_whole(previous, bytes);
    return;
  }
  const bool renamed = std::rename(temporary.c_str(), previous.c_str()) == 0;
  const std::string why = std::strerror(errno);
  // Where the previous record is the latest already (a write cut short after this step), the two names are links
  // to one file, and rename leaves both in place.
  std::remove(temporary.c_str());
  if (!renamed) throw std::runtime_error("cannot rename " + temporary + " to " + previous + ": " + why);
}

}  // namespace

ChainRecord CheckpointFolder::read_record(int chain, uint64_t fingerprint) const {
  const std::string file = record_path(chain);
  try {
    return parse_record(file, chain, fingerprint);
  } catch (const std::runtime_error& e) {
    refuse(file, e.what());
  }
}

void CheckpointFolder::prune_pieces(int chain, uint64_t fingerprint) const noexcept {
  try {
    std::set<std::string> named;
    for (const std::string& file : {record_path(chain), record_path(chain) + std::string(kPrevious)}) {
      try {
        const ChainRecord r = parse_record(file, chain, fingerprint);
        if (r.finished) continue;
        const PieceManifest m = unpack_manifest(r.bytes);
        const int size = static_cast<int>(m.checksums.size());
        for (int k = 0; k < size; ++k) named.insert(piece_path(chain, r.next_item, k, size));
      } catch (const std::exception&) {  // a record gone or bad names no piece worth keeping
      }
    }
    const std::string folder = path_ + "/" + std::string(kPieces) + "/" + std::to_string(chain);
    std::error_code error;
    std::vector<std::filesystem::path> stale;
    for (auto it = std::filesystem::directory_iterator(folder, error);
         !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
      const std::string name = it->path().filename().string();
      // Temporary files are another writer's, in progress: remove_leftovers takes those of killed runs.
      if (name.find(kTemporary) == std::string::npos && named.count(folder + "/" + name) == 0) {
        stale.push_back(it->path());
      }
    }
    for (const auto& file : stale) std::filesystem::remove(file, error);
  } catch (const std::exception&) {  // stale pieces only take room
  }
}

void CheckpointFolder::note_held() const noexcept {
  try {
    std::optional<CheckpointMeta> meta = read_meta();
    if (!meta) return;
    meta->held.clear();
    for (int c = 0; c < meta->chains; ++c) {
      if (std::filesystem::is_regular_file(record_path(c))) meta->held.insert(c);
    }
    write_meta(*meta);
  } catch (const std::exception&) {  // the marks still serve
  }
}

std::set<int> CheckpointFolder::afresh_requests(int chains) const {
  std::set<int> out;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kAfresh, 0) != 0) continue;
    const std::string number = name.substr(kAfresh.size());
    const int chain = chain_number(number);
    if (chain < 0 || chain >= chains) {
      refuse(entry.path().string(), "asks to start anew a chain that is not one of the " + std::to_string(chains) +
                                        " this folder holds (allowed: afresh-N for N from 0 to " +
                                        std::to_string(chains - 1) + ")");
    }
    out.insert(chain);
  }
  return out;
}

void CheckpointFolder::start_afresh(int chain) const {
  const std::string file = record_path(chain);
  std::error_code error;
  if (std::filesystem::exists(file, error)) {
    std::filesystem::rename(file, file + std::string(kSetAside), error);
    if (error) throw std::runtime_error("cannot set " + file + " aside: " + error.message());
  }
  std::filesystem::remove(file + std::string(kPrevious), error);
  std::filesystem::remove(path_ + "/" + std::string(kSavedName) + "/" + std::to_string(chain), error);
  marked_.erase(chain);
  // The request goes last: a run cut short before this point repeats it.
  fsync_folder(path_);
  std::filesystem::remove(path_ + "/" + std::string(kAfresh) + std::to_string(chain), error);
  if (error) throw std::runtime_error("cannot remove " + path_ + "/" + std::string(kAfresh) + std::to_string(chain));
}

std::map<int, ChainRecord> CheckpointFolder::read_records(const CheckpointMeta& meta, const std::set<int>& skip,
                                                          std::vector<Fallback>& fallbacks) const {
  std::set<int> chains;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("chain-", 0) != 0 || name.find(kTemporary) != std::string::npos) continue;
    std::string number = name.substr(6);
    if (number.size() > kPrevious.size() && number.ends_with(kPrevious)) {
      number.resize(number.size() - kPrevious.size());
    } else if (number.size() > kSetAside.size() && number.ends_with(kSetAside)) {
      continue;  // set aside by a run that fell back from it
    }
    const int chain = chain_number(number);
    if (chain < 0 || chain >= meta.chains) {
      refuse(entry.path().string(), "not a chain of the " + std::to_string(meta.chains) + " this folder holds");
    }
    chains.insert(chain);
  }
  std::map<int, ChainRecord> records;
  // A record, its spread state's pieces whole too.
  const auto load = [&](const std::string& file, int chain) {
    ChainRecord r = parse_record(file, chain, meta.fingerprint);
    if (meta.form == kFormSpread && !r.finished) {
      if (const std::string fault = pieces_fault(*this, r); !fault.empty()) throw std::runtime_error(fault);
    }
    return r;
  };
  for (const int chain : chains) {
    if (skip.count(chain) != 0) continue;
    const std::string file = record_path(chain), previous = file + std::string(kPrevious);
    std::string why = "missing";
    try {
      if (std::filesystem::exists(file)) {
        records.emplace(chain, load(file, chain));
        continue;
      }
    } catch (const std::runtime_error& e) {
      why = e.what();
    }
    // The latest record is bad or gone: the one before it, if that one is whole.
    std::string previous_why = "missing";
    try {
      if (std::filesystem::exists(previous)) {
        records.emplace(chain, load(previous, chain));
        fallbacks.push_back({chain, why});
        continue;
      }
    } catch (const std::runtime_error& e) {
      previous_why = e.what();
    }
    refuse(file, why + "; its previous record " + std::string(kPrevious) + " is " +
                     (previous_why == "missing" ? std::string("missing too") : "no better: " + previous_why));
  }
  return records;
}

void CheckpointFolder::take_previous(int chain) const {
  const std::string file = record_path(chain), previous = file + std::string(kPrevious);
  std::error_code error;
  if (std::filesystem::exists(file, error)) {
    std::filesystem::rename(file, file + std::string(kSetAside), error);
    if (error) throw std::runtime_error("cannot set " + file + " aside: " + error.message());
  }
  std::filesystem::rename(previous, file, error);
  if (error) throw std::runtime_error("cannot rename " + previous + " to " + file + ": " + error.message());
  fsync_folder(path_);
}

void CheckpointFolder::write_record(const ChainRecord& r, uint64_t fingerprint) const {
  Bytes out;
  for (const char c : kRecordMagic) out.put(c);
  out.put(fingerprint);
  out.put(static_cast<int64_t>(r.chain));
  out.put(static_cast<int64_t>(r.finished ? 1 : 0));
  out.put(r.next_item);
  out.put(std::span<const std::byte>(r.bytes));
  out.put_rows(r.rows);
  out.put(checksum(out.bytes()));
  // The record it replaces stays, whole, until this one is: a run that finds this one torn goes on from that.
  keep_previous(record_path(r.chain));
  write_file_whole(record_path(r.chain), out.bytes());
  // The mark comes after the record is in place: a mark never names a record that was not written. A mark that
  // cannot be made is made by the next run that finds the record (open_checkpoint).
  try {
    mark_saved(r.chain);
  } catch (const std::runtime_error&) {
  }
}

Resumption open_checkpoint(const mpi::Comm& comm, const CheckpointFolder& folder, const std::string& name,
                           const std::string& parameters, std::span<const int64_t> items, std::string_view form) {
  Resumption out;
  const uint64_t params = parameters_hash(parameters);
  out.fingerprint = checkpoint_fingerprint(chains_fingerprint(name, items), params);
  const auto chains = items.size();
  out.resumed_at.assign(chains, 0);
  out.ended_at.assign(chains, 0);
  std::string error;
  std::string fallen_back;  // rank 0: a line per chain that goes on from its previous record
  if (comm.rank() == 0) {
    try {
      folder.prepare();
      std::map<int, ChainRecord> records;
      std::vector<CheckpointFolder::Fallback> fallbacks;
      std::set<int> afresh;  // chains the user asks to start anew (afresh-N)
      if (const std::optional<CheckpointMeta> meta = folder.read_meta()) {
        const std::string file = folder.path() + "/" + std::string(kMetaName);
        if (meta->name != one_line(name)) {
          refuse(file, "the checkpoint of application '" + meta->name + "', not '" + one_line(name) + "'");
        }
        if (meta->chains != static_cast<int>(chains)) {
          refuse(file, "a checkpoint of " + std::to_string(meta->chains) + " chains, where this run has " +
                           std::to_string(chains));
        }
        if (meta->parameters != params) {
          const auto shown = [](uint64_t hash, const std::string& text) {
            return hash == 0 ? std::string("none") : "'" + parameters_shown(text) + "'";
          };
          refuse(file, "a checkpoint made with other parameters (Options::parameters " +
                           shown(meta->parameters, meta->parameters_text) + ", where this run has " +
                           shown(params, parameters) + "): resuming would mix chains of two set-ups");
        }
        if (meta->fingerprint != out.fingerprint) refuse(file, "a checkpoint of chains with other item bounds");
        // Pieces handed to Chains::restore, or a whole state to SpreadChains::restore_piece, would fail mid-run or
        // make a wrong state.
        if (!meta->form.empty() && meta->form != form) {
          const auto said = [](std::string_view f) {
            return f == kFormSpread ? std::string("spread over each group (SpreadChains, saved piece by piece)")
                                    : std::string("saved whole (Chains::save)");
          };
          refuse(file, "a checkpoint of chains whose state is " + said(meta->form) + ", where this run's is " +
                           said(form) + ": its records cannot restore these chains");
        }
        out.meta = *meta;
        afresh = folder.afresh_requests(meta->chains);
        records = folder.read_records(*meta, afresh, fallbacks);
        std::set<int> held = folder.saved_marks();
        held.insert(meta->held.begin(), meta->held.end());
        for (const int c : held) {
          if (c < static_cast<int>(chains) && records.count(c) == 0 && afresh.count(c) == 0) {
            refuse(folder.path() + "/chain-" + std::to_string(c),
                   "missing, and so is its previous record, though this folder held them (its mark " +
                       std::string(kSavedName) + "/" + std::to_string(c) + " or the meta file's list held" +
                       "): put a file back, or make an empty file " + std::string(kAfresh) + std::to_string(c) +
                       " in the folder to start the chain anew");
          }
        }
        for (auto& [c, r] : records) {
          out.resumed = true;
          const auto at = static_cast<std::size_t>(c);
          if (r.finished) {
            out.resumed_at[at] = -1;
            out.ended_at[at] = r.next_item;
            out.results[c] = std::move(r.bytes);
          } else {
            out.resumed_at[at] = r.next_item;
          }
          if (!r.finished && (r.next_item < 0 || r.next_item > items[at])) {
            refuse(folder.path() + "/chain-" + std::to_string(c), "an item beyond the chain's bound");
          }
          out.rows.insert(out.rows.end(), r.rows.begin(), r.rows.end());
        }
      }
      // Accepted: from here on the folder may change. What killed runs left goes; records written before marks
      // existed, or whose mark a kill cut short, get theirs.
      folder.remove_stop_marks();
      folder.remove_leftovers();
      for (const int c : afresh) {
        folder.start_afresh(c);
        fallen_back += "mcmclb: chain " + std::to_string(c) + " starts anew, as the file " + std::string(kAfresh) +
                       std::to_string(c) + " in " + one_line(folder.path()) + " asked; its latest record, if any, " +
                       "is kept as chain-" + std::to_string(c) + std::string(kSetAside) + "\n";
      }
      // A chain whose latest record is bad goes on from the one before, which takes its place; the bad one is kept
      // beside it (name.bad) for a look.
      for (const CheckpointFolder::Fallback& f : fallbacks) {
        folder.take_previous(f.chain);
        const ChainRecord& r = records.at(f.chain);
        fallen_back += "mcmclb: " + one_line(folder.path()) + "/chain-" + std::to_string(f.chain) + ": " +
                       one_line(f.why) + "; chain " + std::to_string(f.chain) + " goes on from its previous record (" +
                       (r.finished ? std::string("finished") : "before item " + std::to_string(r.next_item)) +
                       "), and the bad one is kept as chain-" + std::to_string(f.chain) + std::string(kSetAside) + "\n";
      }
      for (const auto& entry : records) {
        try {
          folder.mark_saved(entry.first);
        } catch (const std::runtime_error&) {  // the next run tries again
        }
      }
      // The chains this run finds saved, a witness beside the marks. A meta file that cannot be rewritten keeps
      // its older list, and the marks still serve.
      if (out.resumed || !afresh.empty()) {
        out.meta.held.clear();
        for (const auto& entry : records) out.meta.held.insert(entry.first);
        try {
          folder.write_meta(out.meta);
        } catch (const std::runtime_error&) {
        }
      }
      if (out.resumed) out.line = resumption_line(folder.path(), out.resumed_at, folder.lost_note());
    } catch (const InputError& e) {
      error = e.what();
    } catch (const std::exception& e) {  // a folder that cannot be listed or read: the same line on every rank
      error = "Options::checkpoint: " + folder.path() + ": " + e.what() +
              " (allowed: a folder, made if missing, that every rank can read and write)";
    }
  }
  mpi::bcast_politely(comm, &out.resumed, 1, MPI_CXX_BOOL, 0);
  std::vector<char> text(error.begin(), error.end());
  int64_t length = static_cast<int64_t>(text.size());
  mpi::bcast_politely(comm, &length, 1, MPI_INT64_T, 0);
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) mpi::bcast_politely(comm, text.data(), static_cast<int>(length), MPI_CHAR, 0);
  if (length > 0) throw InputError(std::string(text.begin(), text.end()));
  if (comm.rank() == 0) {
    std::fprintf(stderr, "%s%s", fallen_back.c_str(), out.resumed ? (out.line + "\n").c_str() : "");
    std::fflush(stderr);
  }
  if (!out.resumed) return out;
  // The first run's layout travels as words: groups per chain, then its ranks and groups.
  std::vector<int64_t> words(3 * chains + 2);
  if (comm.rank() == 0) {
    for (std::size_t c = 0; c < chains; ++c) {
      words[c] = out.resumed_at[c];
      words[chains + c] = out.ended_at[c];
      words[2 * chains + c] = out.meta.chain_groups[c];
    }
    words[3 * chains] = out.meta.ranks;
    words[3 * chains + 1] = out.meta.groups;
  }
  mpi::bcast_politely(comm, words.data(), static_cast<int>(words.size()), MPI_INT64_T, 0);
  out.meta.chain_groups.resize(chains);
  for (std::size_t c = 0; c < chains; ++c) {
    out.resumed_at[c] = words[c];
    out.ended_at[c] = words[chains + c];
    out.meta.chain_groups[c] = static_cast<int>(words[2 * chains + c]);
  }
  out.meta.ranks = static_cast<int>(words[3 * chains]);
  out.meta.groups = static_cast<int>(words[3 * chains + 1]);
  return out;
}

namespace {

/// "chain 3 at item 7, chain 8 at item 2" for at most eight chains, then how many more.
std::string some_chains(const std::vector<std::string>& each) {
  constexpr std::size_t kShown = 8;
  std::string out;
  for (std::size_t i = 0; i < each.size() && i < kShown; ++i) out += (i == 0 ? "" : ", ") + each[i];
  if (each.size() > kShown) out += " and " + std::to_string(each.size() - kShown) + " more";
  return out;
}

}  // namespace

std::string resumption_line(const std::string& folder, std::span<const int64_t> resumed_at,
                            const std::string& lost_note) {
  std::vector<std::string> going_on, afresh;
  std::size_t finished = 0;
  for (std::size_t c = 0; c < resumed_at.size(); ++c) {
    if (resumed_at[c] < 0) {
      ++finished;
    } else if (resumed_at[c] > 0) {
      going_on.push_back("chain " + std::to_string(c) + " at item " + std::to_string(resumed_at[c]));
    } else {
      afresh.push_back(std::to_string(c));
    }
  }
  std::string line =
      "mcmclb: resuming from " + one_line(folder) + ": " + std::to_string(finished) + " of " +
      std::to_string(resumed_at.size()) + " chains finished before, not worked again; " +
      std::to_string(going_on.size()) +
      (going_on.size() == 1 ? " goes on from its checkpoint" : " go on from their checkpoint") +
      (going_on.empty() ? std::string() : " (" + some_chains(going_on) + ")") + "; " + std::to_string(afresh.size()) +
      (afresh.size() == 1 ? " starts" : " start") + " afresh, having none" +
      (afresh.empty() ? std::string() : (afresh.size() == 1 ? " (chain " : " (chains ") + some_chains(afresh) + ")");
  if (!lost_note.empty()) line += "; the run before noted: " + lost_note;
  return line;
}

StopOnSignal::StopOnSignal(const CheckpointFolder& folder, const std::string& run_token, MPI_Comm comm, double grace_s)
    : folder_(folder.stop_folder(run_token)), comm_(comm), grace_s_(grace_s) {
  mpi::check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &ranks_), "MPI_Comm_size");
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (const int signo : {SIGTERM, SIGUSR1, SIGINT}) {
    struct sigaction* previous = signo == SIGTERM   ? &previous_term_
                                 : signo == SIGUSR1 ? &previous_usr1_
                                                    : &previous_int_;
    // A second Ctrl-C ends the process as it would without a run: the first asked for a stop that did not come.
    action.sa_flags = signo == SIGINT ? SA_RESTART | SA_RESETHAND : SA_RESTART;
    if (::sigaction(signo, &action, previous) != 0) {
      throw std::runtime_error(std::string("sigaction: ") + std::strerror(errno));
    }
  }
  thread_ = std::thread([this] { watch(); });
}

StopOnSignal::~StopOnSignal() {
  quit_.store(true);
  if (thread_.joinable()) thread_.join();
  (void)::sigaction(SIGTERM, &previous_term_, nullptr);
  (void)::sigaction(SIGUSR1, &previous_usr1_, nullptr);
  (void)::sigaction(SIGINT, &previous_int_, nullptr);
}

bool StopOnSignal::begin_write() noexcept {
  // With closed_ set before the thread reads writing_, and writing_ raised before this reads closed_ (both
  // sequentially consistent), either the write sees the close and does not start, or the thread sees the write.
  writing_.fetch_add(1);
  if (!closed_.load()) return true;
  writing_.fetch_sub(1);
  return false;
}

void StopOnSignal::end_write() noexcept { writing_.fetch_sub(1); }

bool StopOnSignal::requested() noexcept { return g_signal.load() != 0; }

void StopOnSignal::ended() {
  // Every chain this rank's groups ended has its record; a stop asked from now on owes nothing here. Ranks still
  // working may yet stop the job, or every rank ends the run well and the stop comes to nothing.
  leading_.store(false);
  saved_.store(true);
}

void StopOnSignal::watch() {
  using clock = std::chrono::steady_clock;
  const auto tick = std::chrono::milliseconds(10);
  while (!quit_.load() && !requested()) std::this_thread::sleep_for(tick);
  if (!requested()) return;
  const auto deadline =
      clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(grace_s_));
  // Each wait ends early when the run ends well on this rank (quit_): then every rank reached its end.
  const auto wait_while = [&](auto&& condition, clock::time_point until) {
    while (condition() && clock::now() < until && !quit_.load()) std::this_thread::sleep_for(tick);
    return !quit_.load();
  };
  if (!wait_while([&] { return leading_.load() && !saved_.load(); }, deadline)) return;
  // No write starts from now on, and the one in progress ends first: rank 0 may end the job once this rank's mark
  // is in, and a write cut short would leave its temporary file. Past the grace period, the next run removes it.
  closed_.store(true);
  if (!wait_while([&] { return writing_.load() > 0; }, deadline)) return;
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  std::ofstream(folder_ + "/" + std::to_string(rank_)).flush();
  // Every rank's mark, its rank number; then rank 0 ends the job with its line and MPI_Abort. With Hydra, a job
  // whose ranks exit by themselves ends with the status of whichever one the launcher saw last, and ranks it killed
  // report SIGKILL's 9; an abort's code is the job's.
  const auto marks = [&] {
    std::error_code e;
    int n = 0;
    for (auto it = std::filesystem::directory_iterator(folder_, e); !e && it != std::filesystem::directory_iterator();
         it.increment(e)) {
      ++n;
    }
    return n;
  };
  if (!wait_while([&] { return marks() < ranks_; }, deadline)) return;
  if (rank_ == 0) {
    const bool all = marks() >= ranks_;
    const std::string folder = std::filesystem::path(folder_).parent_path().string();
    const std::string line =
        "mcmclb: stopped by signal " + std::to_string(g_signal.load()) + ": " +
        (all ? std::string("every chain's last checkpoint is in ")
             : "the grace period ended before every rank's last checkpoint; the latest of each chain's is in ") +
        folder + "; run the same command again to resume";
    // The marks served their turn: no rank reads them after this count, and the folder keeps only what a run
    // again reads. A rank that marks itself after the grace period leaves its mark for the next run to remove.
    std::error_code removed;
    std::filesystem::remove_all(folder_, removed);
    // What a job script reads to requeue (a launcher's status after an abort is its own: srun's is 137).
    try {
      const std::string text = line + "\n";
      write_file_whole(folder + "/" + std::string(kStoppedName), std::as_bytes(std::span(text)));
    } catch (const std::exception&) {  // the line still says it
    }
    mpi::abort_with_line(comm_, kExitResumable, line);
  }
  // The abort ends this rank too; should rank 0 be gone already, it ends itself.
  if (!wait_while([] { return true; }, std::max(clock::now(), deadline) + std::chrono::seconds(5))) return;
  std::_Exit(kExitResumable);
}

}  // namespace mcmclb::walkers::detail
