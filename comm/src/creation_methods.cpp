// SPDX-License-Identifier: BSD-3-Clause
// The one table of creation methods (methods/methods.def) and the factories over it: make_comm_creator() for
// the methods whose result is an MPI communicator, make_group_comm_creator() for every method.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/text.hpp"
#include "methods/method.hpp"

namespace mcmclb {

#define MCMCLB_METHOD(name) CreationMethod name##_method();
#include "methods/methods.def"
#undef MCMCLB_METHOD

namespace {

/// Built once, on first use, and never changed: no mutable global state (SMPI may run ranks as threads).
struct Table {
  std::vector<CreationMethod> methods;
  std::vector<MethodInfo> infos;
  std::vector<std::string_view> all_names;
  std::vector<std::string_view> mpi_names;  // those make_comm_creator() knows

  Table() {
#define MCMCLB_METHOD(name) methods.push_back(name##_method());
#include "methods/methods.def"
#undef MCMCLB_METHOD
    for (auto& m : methods) {
      if ((m.make_comm == nullptr) == (m.make_group_comm == nullptr)) {
        throw std::logic_error("creation method " + std::string(m.info.name) +
                               ": give exactly one of make_comm and make_group_comm");
      }
      m.info.mpi_communicator = m.make_comm != nullptr;
      infos.push_back(m.info);
      all_names.push_back(m.info.name);
      if (m.make_comm != nullptr) mpi_names.push_back(m.info.name);
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

/// The entry named name among those known (every method, or only the MPI-communicator ones); an unknown name is
/// an mpi::UsageError listing the known ones.
const CreationMethod& find(std::string_view name, bool mpi_only) {
  const Table& t = table();
  const auto it = std::find_if(t.methods.begin(), t.methods.end(), [&](const CreationMethod& m) {
    return m.info.name == name && (!mpi_only || m.make_comm != nullptr);
  });
  if (it == t.methods.end()) {
    throw mpi::UsageError("unknown communicator creation method '" + std::string(name) +
                              "' (known: " + join(mpi_only ? t.mpi_names : t.all_names) + ")",
                          MPI_ERR_ARG);
  }
  if (!it->info.supported) {
    throw mpi::UsageError(
        "method " + std::string(name) + " is not supported by this build: " + unsupported_reason(it->info),
        MPI_ERR_UNSUPPORTED_OPERATION);
  }
  return *it;
}

/// "Open MPI v4.1.4 (MPI 3.1)": the library's name and version, without the build details some libraries add after
/// a comma ("package: Debian OpenMPI, ident: ..."), and the MPI version it implements.
std::string library_and_mpi_version() {
  std::string library = mpi::library_version();
  if (const auto comma = library.find(','); comma != std::string::npos) library.resize(comma);
  int version = 0;
  int subversion = 0;
  mpi::check(MPI_Get_version(&version, &subversion), "MPI_Get_version");
  return library + " (MPI " + std::to_string(version) + "." + std::to_string(subversion) + ")";
}

}  // namespace

std::span<const MethodInfo> creation_methods() { return table().infos; }

std::string unsupported_reason(const MethodInfo& method) {
  if (method.supported) return "";
  return "needs " + std::string(method.needs) + ", which " + library_and_mpi_version() + " lacks";
}

std::span<const std::string_view> comm_creator_names() { return table().mpi_names; }

std::vector<std::string_view> group_comm_method_names() { return table().all_names; }

std::unique_ptr<CommCreator> make_comm_creator(std::string_view name, const mpi::Comm& parent) {
  const CreationMethod& m = find(name, true);
  return m.make_comm(m.info, parent);
}

std::unique_ptr<GroupCommCreator> make_group_comm_creator(std::string_view method, const mpi::Comm& parent) {
  const CreationMethod& m = find(method, false);
  if (m.make_comm != nullptr) return wrap_mpi_creator(m.make_comm(m.info, parent));
  return m.make_group_comm(m.info, parent);
}

}  // namespace mcmclb
