// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Which pieces a rank sends and receives in each collective (ndzip/mpi/bcast.hpp ...
// alltoall.hpp), for every link, and the arguments a rank refuses (reported by every rank's
// call: detail/core/collective_engine.hpp). Not part of the API.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ndzip/mpi/detail/core/collective_layout.hpp"

namespace ndzip::mpi::detail {

// `sends` are indexed by the head slot they go out in (the destination rank for scatter at the
// root and alltoall; one slot otherwise), `recvs` by source rank (one slot, from the root, for
// bcast and scatter); an absent View sends or receives nothing there. `own_send` and
// `own_recv` are the rank's piece to itself, copied.
template <class SendView, class RecvView>
struct collective_arguments {
  collective_kind kind = collective_kind::bcast;
  int root = 0;  // bcast, gather, scatter
  std::vector<std::optional<SendView>> sends;
  std::vector<std::optional<RecvView>> recvs;
  std::optional<SendView> own_send;
  std::optional<RecvView> own_recv;
  std::string error;  // an argument refused on this rank
};

template <class View>
collective_arguments<View, View> bcast_arguments(const View& values, int root, int rank) {
  collective_arguments<View, View> a;
  a.kind = collective_kind::bcast;
  a.root = root;
  if (rank == root)
    a.sends.push_back(values);
  else
    a.recvs.push_back(values);
  return a;
}

// `many` holds one View per rank at the root, none elsewhere: `what` names it in errors.
template <class Many>
std::string root_pieces_error(const std::vector<Many>& many, const char* what, int root, int rank,
                              int size) {
  if (rank != root && !many.empty())
    return std::string(what) + " holds " + std::to_string(many.size()) + " Views on rank " +
           std::to_string(rank) + ", which is not the root: give an empty vector there";
  if (rank == root && many.size() != static_cast<std::size_t>(size))
    return std::string(what) + " holds " + std::to_string(many.size()) +
           " Views at the root, for " + std::to_string(size) + " ranks";
  return {};
}

template <class SendView, class RecvView>
collective_arguments<SendView, RecvView> gather_arguments(const SendView& send,
                                                          const std::vector<RecvView>& recvs,
                                                          int root, int rank, int size) {
  collective_arguments<SendView, RecvView> a;
  a.kind = collective_kind::gather;
  a.root = root;
  a.error = root_pieces_error(recvs, "recvs", root, rank, size);
  if (!a.error.empty()) return a;
  if (rank != root) {
    a.sends.push_back(send);
    return a;
  }
  a.recvs.resize(recvs.size());
  for (std::size_t s = 0; s < recvs.size(); ++s)
    if (static_cast<int>(s) != rank) a.recvs[s] = recvs[s];
  a.own_send = send;
  a.own_recv = recvs[rank];
  return a;
}

template <class SendView, class RecvView>
collective_arguments<SendView, RecvView> scatter_arguments(const std::vector<SendView>& sends,
                                                           const RecvView& recv, int root,
                                                           int rank, int size) {
  collective_arguments<SendView, RecvView> a;
  a.kind = collective_kind::scatter;
  a.root = root;
  a.error = root_pieces_error(sends, "sends", root, rank, size);
  if (!a.error.empty()) return a;
  if (rank != root) {
    a.recvs.push_back(recv);
    return a;
  }
  a.sends.resize(sends.size());
  for (std::size_t d = 0; d < sends.size(); ++d)
    if (static_cast<int>(d) != rank) a.sends[d] = sends[d];
  a.own_send = sends[rank];
  a.own_recv = recv;
  return a;
}

template <class SendView, class RecvView>
collective_arguments<SendView, RecvView> allgather_arguments(const SendView& send,
                                                             const std::vector<RecvView>& recvs,
                                                             int rank, int size) {
  collective_arguments<SendView, RecvView> a;
  a.kind = collective_kind::allgather;
  if (recvs.size() != static_cast<std::size_t>(size)) {
    a.error = "recvs holds " + std::to_string(recvs.size()) + " Views on rank " +
              std::to_string(rank) + ", for " + std::to_string(size) + " ranks";
    return a;
  }
  a.sends.push_back(send);
  a.recvs.resize(recvs.size());
  for (std::size_t s = 0; s < recvs.size(); ++s)
    if (static_cast<int>(s) != rank) a.recvs[s] = recvs[s];
  a.own_send = send;
  a.own_recv = recvs[rank];
  return a;
}

template <class SendView, class RecvView>
collective_arguments<SendView, RecvView> alltoall_arguments(const std::vector<SendView>& sends,
                                                            const std::vector<RecvView>& recvs,
                                                            int rank, int size) {
  collective_arguments<SendView, RecvView> a;
  a.kind = collective_kind::alltoall;
  if (sends.size() != static_cast<std::size_t>(size) ||
      recvs.size() != static_cast<std::size_t>(size)) {
    a.error = "sends and recvs hold " + std::to_string(sends.size()) + " and " +
              std::to_string(recvs.size()) + " Views on rank " + std::to_string(rank) + ", for " +
              std::to_string(size) + " ranks";
    return a;
  }
  a.sends.resize(sends.size());
  a.recvs.resize(recvs.size());
  for (std::size_t r = 0; r < sends.size(); ++r)
    if (static_cast<int>(r) != rank) {
      a.sends[r] = sends[r];
      a.recvs[r] = recvs[r];
    }
  a.own_send = sends[rank];
  a.own_recv = recvs[rank];
  return a;
}

}  // namespace ndzip::mpi::detail
