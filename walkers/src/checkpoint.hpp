// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints of an application's chains (Options::checkpoint): a folder holding one file per chain (and the one
// before it, a generation back), each written whole by the member 0 of the group working that chain, with no other
// rank taking part. A chain's answer depends on the chain alone, never on its group, so the chains need not be
// saved at one instant: each file is the chain at some item boundary, and a run that resumes continues every chain
// from its own file, under any balancer and at any rank count. Internal to libmcmclb_walkers.
#pragma once

#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mcmclb/kernel.hpp"
#include "mcmclb/mpi.hpp"

namespace mcmclb::walkers::detail {

/// What a checkpoint folder is for: the application and its chains. A run resumes only from a folder made for the
/// same name, chain count, item bounds and parameters (Options::parameters).
struct CheckpointMeta {
  std::string name;
  int chains = 0;
  uint64_t fingerprint = 0;  ///< of the name, the count, every chain's item bound and the parameters
  /// parameters_hash of Options::parameters (0: none given, as in folders older than the key), and the text for
  /// a refusal to quote (one_line, cut short).
  uint64_t parameters = 0;
  std::string parameters_text;
  // The first run's layout: the trace of a resumed run keeps the initial groups its chains started in.
  int ranks = 0, groups = 0;
  std::string balancer;
  std::vector<int> chain_groups;  ///< per chain, the first run's initial group
  /// How the chains' records hold their state: kFormWhole (Chains::save's bytes) or kFormSpread (every member's
  /// SpreadChains::save_piece); empty in a folder made before the form was kept, which is then not checked.
  std::string form;
  /// The chains that had a record as the latest run began (rewritten by each run that resumes): with the marks in
  /// saved/, what a chain's missing records are checked against, so that removing a mark alone does not make a
  /// chain start anew unsaid.
  std::set<int> held;
};
inline constexpr std::string_view kFormWhole = "whole", kFormSpread = "spread";

/// One chain as its last checkpoint left it.
struct ChainRecord {
  int chain = 0;
  bool finished = false;
  /// Running: the next item to work (the state is the chain before it). Finished: the items it worked.
  int64_t next_item = 0;
  /// Running: Chains::save's bytes. Finished: Chains::result's bytes.
  std::vector<std::byte> bytes;
  /// Every item worked so far, with its group size and seconds, where the run records a trace (else empty).
  std::vector<ItemCost> rows;
};

/// fingerprint of a set of chains: name, count and item bounds.
[[nodiscard]] uint64_t chains_fingerprint(const std::string& name, std::span<const int64_t> items);
/// A hash of Options::parameters' bytes: 0 for none, never 0 otherwise.
[[nodiscard]] uint64_t parameters_hash(std::string_view parameters);
/// What a folder's records carry: the chains' fingerprint, and the parameters' hash folded in where there are any
/// (a folder made before Options::parameters existed, or without them, keeps its records' fingerprint).
[[nodiscard]] uint64_t checkpoint_fingerprint(uint64_t chains, uint64_t parameters);
/// What a quoted parameter text looks like in a meta file and a refusal: one printable line, cut short.
[[nodiscard]] std::string parameters_shown(std::string_view parameters);

/// What travels between ranks with a chain's state where a run keeps checkpoints: where the chain ended (done),
/// as a member that joins later cannot tell, and its trace rows so far, which whichever member writes its
/// checkpoint must hold.
struct Travelling {
  std::vector<std::byte> state;
  int64_t ended_at = 0;
  std::vector<ItemCost> rows;
};
[[nodiscard]] std::vector<std::byte> pack_state(std::span<const std::byte> state, int64_t ended_at,
                                                std::span<const ItemCost> rows);
/// pack_state's parts again, the rows' chain set to chain. Throws std::runtime_error on bytes that are not one.
[[nodiscard]] Travelling unpack_state(std::span<const std::byte> packed, int chain);

/// A spread state's checkpoint (SpreadChains), what its record holds in place of a whole state: what every member
/// holds alike (shared), and where its pieces are. Each member k of the N that saved it wrote its own bytes
/// [bounds[k], bounds[k + 1]) of the state to a file of its own (CheckpointFolder::piece_path), checksum[k] its
/// piece_checksum. A file per member, rather than one file written through MPI-IO at each piece's offset: each
/// member replaces its own file whole (a temporary file, fsync, rename) with no group call that a member failing on a
/// full disk would leave the others waiting in, and a reader still reads only the bytes it needs, at their offset.
struct PieceManifest {
  std::vector<std::byte> shared;
  std::vector<int64_t> bounds;
  std::vector<uint64_t> checksums;
};
[[nodiscard]] std::vector<std::byte> pack_manifest(const PieceManifest& manifest);
/// pack_manifest's parts again; throws std::runtime_error on bytes that are not one.
[[nodiscard]] PieceManifest unpack_manifest(std::span<const std::byte> packed);
/// A piece's checksum, continued from h (start: kPieceChecksumStart) over bytes: over parts whose lengths are
/// multiples of 8 but the last, the same as over the whole. Word by word, as pieces can be gigabytes.
inline constexpr uint64_t kPieceChecksumStart = 0x70696563657321ULL;
[[nodiscard]] uint64_t piece_checksum(std::span<const std::byte> bytes, uint64_t h = kPieceChecksumStart);

/// The folder of a run's checkpoints.
class CheckpointFolder {
 public:
  explicit CheckpointFolder(std::string path) : path_(std::move(path)) {}
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// The folder made if missing and checked to be a writable folder; throws InputError naming
  /// Options::checkpoint otherwise.
  void prepare() const;
  /// The folder's meta file, or nullopt where none was written yet; throws InputError for a file that is not one.
  [[nodiscard]] std::optional<CheckpointMeta> read_meta() const;
  void write_meta(const CheckpointMeta& meta) const;
  /// A chain whose latest record is bad (torn, altered, of other chains) or gone, and which goes on from the
  /// record before it (name.prev), with why.
  struct Fallback {
    int chain = 0;
    std::string why;
  };
  /// Every chain's record: its latest, or where that is bad or gone its previous one (listed in fallbacks). Throws
  /// InputError naming the file where neither serves, or for a file of a chain out of range.
  /// A running record of a spread state (meta's form) is bad too where one of its pieces' files is missing, of
  /// another length or checksum: read through, 64 KiB at a time.
  [[nodiscard]] std::map<int, ChainRecord> read_records(const CheckpointMeta& meta, const std::set<int>& skip,
                                                        std::vector<Fallback>& fallbacks) const;
  /// The meta file's list of chains held (CheckpointMeta::held) made what the folder holds now, as a run ends:
  /// best effort, as the marks in saved/ witness the same.
  void note_held() const noexcept;
  /// The chains the user asks to start anew, each with an empty file afresh-N in the folder; throws InputError for
  /// an N that is not one of the folder's chains.
  [[nodiscard]] std::set<int> afresh_requests(int chains) const;
  /// Chain's records gone (its latest set aside as name.bad), its mark and its request afresh-N too, so that a run
  /// starts it anew and the runs after resume it as any other. Throws std::runtime_error when it cannot.
  void start_afresh(int chain) const;
  /// A chain's previous record made its latest again, the bad latest set aside as name.bad. Throws
  /// std::runtime_error when it cannot.
  void take_previous(int chain) const;
  /// One chain's record (as read_records checks it).
  [[nodiscard]] ChainRecord read_record(int chain, uint64_t fingerprint) const;
  /// Written whole or not at all: a temporary file, fsync, then a rename over the last one and an fsync of the
  /// folder, so a kill at any instant leaves the last whole record. The last one stays as name.prev (a hard link),
  /// one generation back, for a run that finds the new one bad. Throws std::runtime_error when it cannot.
  /// Then the chain's mark in saved/ (saved_marks), once per chain and rank.
  void write_record(const ChainRecord& record, uint64_t fingerprint) const;
  /// The file member `member` of `size` writes its piece of a spread state to, at a checkpoint before item `item`:
  /// pieces/CHAIN/ITEM-MEMBER-of-SIZE. A new checkpoint's files never replace those of the chain's two latest
  /// records, which are of earlier items.
  [[nodiscard]] std::string piece_path(int chain, int64_t item, int member, int size) const;
  /// Writes a member's piece whole (write_file_whole); its piece_checksum. Throws std::runtime_error when it cannot.
  [[nodiscard]] uint64_t write_piece(int chain, int64_t item, int member, int size,
                                     std::span<const std::byte> bytes) const;
  /// Bytes [begin, end) of the spread state a running record of chain holds (next_item its item), read from the
  /// pieces' files that hold them, and only those. Throws std::runtime_error when they cannot be read.
  [[nodiscard]] std::vector<std::byte> read_piece_bytes(int chain, int64_t item, const PieceManifest& manifest,
                                                        int64_t begin, int64_t end) const;
  /// Removes a chain's piece files that neither its latest record nor the one before names (best effort), after a
  /// record of a spread state is written.
  void prune_pieces(int chain, uint64_t fingerprint) const noexcept;
  /// The chains whose record this folder once held: each one's first record leaves a mark in the subfolder saved/,
  /// after it is in place. A record missing where its mark is was lost (removed by hand, or another folder's
  /// files copied in): a run must not quietly start that chain afresh.
  [[nodiscard]] std::set<int> saved_marks() const;
  /// The mark of a chain whose record is in place (a record written before marks existed, or whose mark a kill
  /// cut short). Throws std::runtime_error when it cannot.
  void mark_saved(int chain) const;
  /// Removes the temporary files of writes that a kill cut short (write_file_whole's, pieces' too, and prepare's
  /// probe).
  void remove_leftovers() const;
  /// The note a run left where it ended without saving some chains' latest state (empty: none), what a run again
  /// says when it resumes; write_lost_note replaces it (empty text: removes it). Throws std::runtime_error when
  /// it cannot write it.
  [[nodiscard]] std::string lost_note() const;
  void write_lost_note(const std::string& text) const;
  /// Where ranks that stopped on a signal leave their mark (stop_marks), one subfolder per run.
  [[nodiscard]] std::string stop_folder(const std::string& run_token) const;
  /// Removes the marks earlier runs left when they stopped, and the file "stopped" that says one did.
  void remove_stop_marks() const;

 private:
  [[nodiscard]] std::string record_path(int chain) const;
  std::string path_;
  mutable std::set<int> marked_;  // the chains this rank has marked already
};

/// What a checkpoint folder gives a run, the same on every rank but where said.
struct Resumption {
  uint64_t fingerprint = 0;
  /// Per chain: the item the run takes it up at (0: its start), or -1 for a chain that finished before.
  std::vector<int64_t> resumed_at;
  /// Per chain that finished before: the items it worked (elsewhere 0).
  std::vector<int64_t> ended_at;
  /// Whether any chain's checkpoint was found (else the run starts afresh and writes the folder's meta file).
  bool resumed = false;
  /// A resumed run's: the first run's meta (its layout names the trace's initial groups).
  CheckpointMeta meta;
  /// Rank 0 only: what the run takes up, as its one line says it (resumption_line), and the rows and results below.
  std::string line;
  /// Rank 0 only: the trace rows of the items worked before, and the results of the chains that finished before.
  std::vector<ItemCost> rows;
  std::map<int, std::vector<std::byte>> results;
};

/// Collective over comm: the folder prepared and read on rank 0, and what it holds on every rank. Throws InputError
/// on every rank alike, before any work and before anything in the folder changes, for a folder that cannot serve,
/// holds another application's chains, chains of other parameters or of the other form (form: kFormWhole or
/// kFormSpread, this run's), or lacks a record it once held. Once the
/// folder is accepted, rank 0 removes what earlier runs left (stop marks, temporary files of cut writes).
[[nodiscard]] Resumption open_checkpoint(const mpi::Comm& comm, const CheckpointFolder& folder, const std::string& name,
                                         const std::string& parameters, std::span<const int64_t> items,
                                         std::string_view form);
/// The line a resumed run prints on rank 0: how many chains finished before and are passed over, which go on from
/// which item, which start afresh, and the note of the run before that could not save them all (lost_note).
[[nodiscard]] std::string resumption_line(const std::string& folder, std::span<const int64_t> resumed_at,
                                          const std::string& lost_note);

/// Writes bytes to path whole: a temporary file beside it, fsync, rename, fsync of the folder.
void write_file_whole(const std::string& path, std::span<const std::byte> bytes);

/// What a signal (SIGTERM, SIGINT, or SIGUSR1 as Slurm's --signal sends before a job's limit) asks of a run that keeps
/// checkpoints: every group's member 0 writes its chain's checkpoint at its next item, then every rank exits with
/// kExitResumable. Installs the handlers for its lifetime and restores the earlier ones after. A thread waits
/// for the signal, then for this rank's last checkpoint, then for every rank's mark in the folder (or the grace
/// period); then rank 0's thread ends the job (MPI_Abort), as ranks blocked in a group call with a member that
/// stopped never return by themselves.
class StopOnSignal {
 public:
  StopOnSignal(const CheckpointFolder& folder, const std::string& run_token, MPI_Comm comm, double grace_s);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  /// Whether a signal asked the run to stop.
  [[nodiscard]] static bool requested() noexcept;
  /// This rank leads a chain whose last checkpoint it must still write when a stop is asked (member 0 of its
  /// group), or no longer does.
  void leading(bool yes) noexcept { leading_.store(yes); }
  /// This rank wrote what it owed: the thread may mark it stopped.
  void saved() noexcept { saved_.store(true); }
  /// This rank ended its part of the run: it owes no checkpoint any more.
  void ended();
  /// A checkpoint write may start: false once a stop closed this rank's writes. The thread closes them before it
  /// marks the rank stopped, as rank 0 may end the job at any instant after, and waits for the write in progress:
  /// a write cut short would leave its temporary file. A true answer asks for end_write() after the write.
  [[nodiscard]] bool begin_write() noexcept;
  void end_write() noexcept;

 private:
  void watch();
  std::string folder_;
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 0;
  double grace_s_;
  std::atomic<bool> leading_{false}, saved_{false}, quit_{false}, closed_{false};
  std::atomic<int> writing_{0};
  struct sigaction previous_term_ {
  }, previous_usr1_{}, previous_int_{};
  std::thread thread_;
};

}  // namespace mcmclb::walkers::detail
