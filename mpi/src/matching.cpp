// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ndzip/mpi/detail/mpi/matching.hpp"

#include "ndzip/mpi/detail/mpi/runtime.hpp"

namespace ndzip::mpi::detail {

namespace {

bool fits(int posted, int arrived, int any) { return posted == any || posted == arrived; }

}  // namespace

receive_queue::ticket receive_queue::post(MPI_Comm comm, int source, int tag,
                                          message_sink* sink) {
  return m_entries.insert(m_entries.end(), entry{comm, source, tag, sink});
}

void receive_queue::withdraw(ticket t) { m_entries.erase(t); }

bool receive_queue::poll(ticket t) {
  bool got = false;
  while (!t->matched || t->owed > 0) {
    MPI_Status status;
    int found = 0;
    check(MPI_Iprobe(t->source, t->tag, t->comm, &found, &status), "MPI_Iprobe");
    if (!found) break;
    // A transfer under way owns the messages of its (source, tag) that follow its first one;
    // any other message goes to the earliest posted receive it fits. One of the two exists:
    // `t` itself fits the message.
    ticket to = m_entries.end();
    for (auto e = m_entries.begin(); e != m_entries.end(); ++e)
      if (e->comm == t->comm && e->matched && e->owed > 0 && e->source == status.MPI_SOURCE &&
          e->tag == status.MPI_TAG) {
        to = e;
        break;
      }
    if (to != m_entries.end() && !to->sink->wants(status)) {
      to->owed = 0;  // its transfer ends before this message, which is looked at again
      continue;
    }
    if (to == m_entries.end())
      for (auto e = m_entries.begin(); e != m_entries.end(); ++e)
        if (e->comm == t->comm && !e->matched &&
            fits(e->source, status.MPI_SOURCE, MPI_ANY_SOURCE) &&
            fits(e->tag, status.MPI_TAG, MPI_ANY_TAG)) {
          to = e;
          break;
        }
    // The message just looked at: by MPI's non-overtaking rule, the first of its source and tag.
    MPI_Message message;
    check(MPI_Improbe(status.MPI_SOURCE, status.MPI_TAG, t->comm, &found, &message, &status),
          "MPI_Improbe");
    if (!found) break;
    if (to->matched) {
      --to->owed;
      to->sink->take_next(message, status);
    } else {
      to->matched = true;
      to->source = status.MPI_SOURCE;
      to->tag = status.MPI_TAG;
      to->owed = to->sink->take_first(message, status);
    }
    got = got || to == t;
  }
  return got;
}

void receive_queue::advance_all() {
  // No receive leaves the queue while advanced (advance() does not complete it).
  for (auto& e : m_entries) e.sink->advance();
}

receive_queue& receives() {
  static receive_queue queue;
  return queue;
}

}  // namespace ndzip::mpi::detail
