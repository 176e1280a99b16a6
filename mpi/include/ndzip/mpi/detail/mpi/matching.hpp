// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How ndzip::mpi receives meet their messages: in the order they were posted, as MPI's own
// receives do (ndzip/mpi.hpp "Matching"). Not part of the API.
//
// A transfer is several MPI messages whose sizes the receiver learns only from the first one,
// so a receive cannot be handed to MPI when it is posted. Instead every receive is entered here,
// in posting order, and messages are taken with MPI_Improbe: a message goes to the earliest
// posted receive whose (comm, source, tag) it fits, and once a receive has taken the first
// message of a transfer, the transfer's further messages from that (source, tag), which MPI's
// non-overtaking rule keeps next in line, go to it as well. Whichever receive is tested or waited
// for takes the messages that have arrived and hands each to the receive it belongs to, so the
// order in which requests are completed does not change which message a View gets. Each
// message is looked at (MPI_Iprobe) before it is matched, so that a transfer whose first message
// left its length in doubt can decline it (message_sink::wants) and leave it to a later receive.

#include <mpi.h>

#include <cstdint>
#include <list>

#include "ndzip/export.hpp"

namespace ndzip::mpi::detail {

// What a posted receive does with the messages handed to it. Called with matching_mutex()
// held, from whichever thread polls; must not throw (a receive keeps what went wrong and
// reports it when it is itself tested or waited for).
class message_sink {
 public:
  // The first message of a transfer (`message` is matched, not yet received): receive it and
  // return how many further messages of the same (source, tag) belong to the transfer.
  virtual std::uint64_t take_first(MPI_Message& message, const MPI_Status& status) noexcept = 0;
  // Whether the next message of the transfer's (source, tag), not yet matched (`status` from
  // MPI_Iprobe), belongs to the transfer, asked before each further message is taken. One it
  // does not want ends the transfer (nothing more is owed to it) and stays with MPI, to be taken
  // as the first message of a later receive's transfer.
  virtual bool wants(const MPI_Status& status) noexcept = 0;
  // The next further message of the transfer.
  virtual void take_next(MPI_Message& message, const MPI_Status& status) noexcept = 0;
  // Takes what has arrived for the receive and handles it as far as that goes without waiting
  // (decoding is queued), leaving its completion to its own wait() or test(): called while
  // another transfer of the process waits (receive_queue::advance_all).
  virtual void advance() noexcept = 0;

 protected:
  ~message_sink() = default;
};

// The receives posted and not yet complete, in posting order. Every call needs
// matching_mutex() held.
class NDZIP_EXPORT receive_queue {
  struct entry {
    MPI_Comm comm;
    int source, tag;          // as posted (may be MPI_ANY_SOURCE, MPI_ANY_TAG)
    message_sink* sink;
    bool matched = false;     // took its first message; source and tag are then the sender's
    std::uint64_t owed = 0;   // further messages of its transfer not yet handed to it
  };

 public:
  using ticket = std::list<entry>::iterator;

  // Enters a receive, after every one entered before it.
  ticket post(MPI_Comm comm, int source, int tag, message_sink* sink);
  // Takes a receive out. Messages of its transfer not yet handed to it stay with MPI, to be
  // taken as a new transfer's first message by a later receive: a receive is withdrawn only
  // before it has matched, or once it has taken every message it is owed.
  void withdraw(ticket t);
  // Whether the receive has matched its transfer, and how many messages it is still owed.
  static bool matched(ticket t) { return t->matched; }
  static std::uint64_t owed(ticket t) { return t->owed; }
  // Takes the messages that have arrived for `t` (the first one of its transfer, then those it
  // is owed) and any that arrived before them for receives posted earlier, handing each to its
  // receive; stops when `t` wants none or none has arrived. Returns whether `t` got any.
  // Throws ndzip::mpi::error where MPI_Iprobe or MPI_Improbe fails.
  bool poll(ticket t);
  // Advances every posted receive (message_sink::advance): a sender waiting for its device calls
  // this, so that in an exchange the peer's messages are matched and decoded meanwhile (a large
  // message waits for its matching receive before it moves) instead of after the send.
  void advance_all();

 private:
  std::list<entry> m_entries;
};

// The queue of this process (one for all communicators: an entry names its own).
NDZIP_EXPORT receive_queue& receives();

}  // namespace ndzip::mpi::detail
