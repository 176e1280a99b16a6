// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::options, the transports, and what a transfer reports (ndzip/mpi.hpp).

#include <cstddef>
#include <cstdint>

namespace ndzip::mpi {

// How the bytes of Views meet MPI (options::transport; communicator::transport() says which a
// communicator takes). The bytes on the wire are the same with every transport, so the two ranks
// may choose differently.
enum class transport_kind {
  // mpi_device where the MPI library says at run time that it takes device pointers (Open MPI
  // built with CUDA or ROCm support: MPIX_Query_cuda_support, MPIX_Query_rocm_support), except
  // for sends with the checksum on (hashed on the host); otherwise staged.
  automatic,
  // The messages are copied through host-pinned memory, for MPIs without GPU support.
  staged,
  // Device buffers go to MPI without asking, for GPU-aware MPI libraries (CUDA-aware,
  // ROCm-aware) with or without that query; an MPI that is not GPU-aware then fails or crashes
  // inside MPI. A rank still copies each message's heads (96 bytes at most) to the host to check
  // them, and with the checksum on, the whole segment, to hash it.
  mpi_device,
  // Host Views, whatever the option says: their memory is handed to MPI as it is. Asked for
  // device Views, it is refused (std::invalid_argument).
  in_place,
};

// "automatic", "staged", "mpi-device", "in-place".
constexpr const char* transport_name(transport_kind kind) {
  switch (kind) {
    case transport_kind::staged:
      return "staged";
    case transport_kind::mpi_device:
      return "mpi-device";
    case transport_kind::in_place:
      return "in-place";
    default:
      return "automatic";
  }
}

// Whether a sender compresses a View or sends it plain: its values as they are, in one message
// per GiB after the 64-byte head, handed to MPI without a copy where the transport gives MPI the
// View's own memory (host Views; mpi_device) and the values stay put until the transfer
// completes (send(), or options::values_stay_until_complete). Either way the receiver checks
// what arrives and fills its View; the two sides need not agree on the choice.
enum class compression_choice {
  // Measured per communicator (copies share it), for each peer, tag and message size (a power
  // of two apart): transfers compress until one has been timed, then go plain until one has
  // (the first transfer after a change of way is not timed: four transfers), and from then on
  // the faster of the two as the sender timed them (from isend() until the completion its
  // wait() or test() found, the median of the last three; the receiver's decoding of the last
  // segment is not seen), switching only for a 5 % gain, trying the other for two transfers
  // after 16, then after 32, ... 256 while it stays slower (the two ranks of an exchange keep
  // the same schedule and try together; where its two ways are within the 5 %, the higher rank
  // takes the way its peer last sent it, since one rank compressing while the other did not
  // was slower than either). Where compression wins (a
  // link slower than the codec, data that shrinks) every transfer but those few compresses;
  // where it loses (NVLink below about 256 MiB, incompressible data) they go plain. Free
  // functions (a temporary communicator) and transfers with the checksum on always compress.
  adaptive,
  // Every transfer compressed (segments that do not shrink still go raw: raw_after_ratio).
  always,
  // Every transfer plain; with the checksum on, every segment raw in its checksummed segment.
  never,
};

// "adaptive", "always", "never".
constexpr const char* compression_name(compression_choice choice) {
  switch (choice) {
    case compression_choice::always:
      return "always";
    case compression_choice::never:
      return "never";
    default:
      return "adaptive";
  }
}

struct options {
  // Values per segment, in bytes (rounded down to whole rows of the slowest dimension; one row
  // and 4096 bytes at least, or all rows where the View is smaller). Smaller segments overlap
  // compression and transfer more finely; each costs a message and a few kernel launches. 0
  // (the default): the transport's choice, 16 MiB through host staging, and a quarter of the
  // View (16 to 64 MiB) in device memory (mpi_device; measured on two H200s over NVLink,
  // docs/MPI.md).
  std::size_t segment_bytes = 0;
  // Sending: an XXH3-64 checksum of every segment, which every receiver checks. Receiving: a
  // message without checksums is refused (ndzip::mpi::mismatch_error, after it is consumed),
  // so that a receiver can demand the check whatever the sender was told. Off by default: MPI's
  // transports check their own frames (InfiniBand and Ethernet CRCs, TCP), and every message
  // is validated on arrival either way (heads, sizes, extents, streams that must decode
  // exactly). Turn it on, on both sides, for an end-to-end check across layers you do not
  // trust; it costs two hashing passes over the compressed bytes (on an H200 node, 2 ranks:
  // 1.58x raw instead of 2.18x for 64 MiB floats, 0.69x instead of 1.02x for incompressible
  // data; docs/PERFORMANCE-HISTORY.md).
  bool checksum = false;
  // How device buffers meet MPI (transport_kind above).
  transport_kind transport = transport_kind::automatic;
  // Segments a sender compresses ahead of the one it hands to MPI: segment k + 1 .. k + depth
  // are being compressed while segment k is on the wire (1 or more; each holds a buffer of its
  // segment's size). The pipeline fills one segment per post: segment 0 is handed to MPI as
  // soon as segment 1 is queued.
  std::size_t pipeline_depth = 3;
  // A sender stops compressing a View once a segment's stream has come out larger than this
  // fraction of its values (the data does not shrink enough to pay for the codec): the segments
  // not yet compressed go raw. 1 or more: never.
  double raw_after_ratio = 0.9;
  // Whether to compress or send the values plain (compression_choice above). A
  // neighbor_exchange decides for each exchange() as a whole, its pieces raw rather than plain
  // (ndzip/mpi/neighbor_exchange.hpp); an nccl_communicator as a communicator does
  // (ndzip/mpi/nccl.hpp).
  compression_choice compression = compression_choice::adaptive;
  // The caller of isend() leaves the values unchanged until the request completes (as
  // MPI_Isend asks of its buffer), so that a plain transfer may hand MPI the View's memory
  // itself. Off by default: isend() then copies plain values first, and the values may change as
  // soon as it returns. send() never copies them (it returns after completion).
  bool values_stay_until_complete = false;
};

// What a transfer put on the wire, or took from it.
struct transfer_stats {
  std::uint64_t raw_bytes = 0;     // the View's values
  std::uint64_t wire_bytes = 0;    // all messages, heads included
  std::uint64_t segments = 0;      // segments of the transfer
  std::uint64_t raw_segments = 0;  // of which sent as raw values (their stream would not shrink)
  bool plain = false;  // sent plain, no segment compressed (compression_choice)
  // Host wall time spent compressing and staging (sender), or checking, copying and decoding
  // (receiver): the rest of a transfer's time is spent on the wire or waiting for it. With a
  // device, the time the host waited for the device's queued work.
  double codec_seconds = 0;
};

}  // namespace ndzip::mpi
