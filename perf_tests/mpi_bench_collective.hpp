// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip-mpi-bench --collective (mpi_bench_collective.cpp): the compressed collectives of
// ndzip::mpi against MPI's own on any number of ranks; and the fields that it and the
// point-to-point mode (mpi_bench.cpp) measure.

#include <ndzip/mpi/options.hpp>
#include <string>
#include <vector>

#include "bench_inputs.hpp"

namespace CLI {
class App;
}

namespace ndzip::perf::mpi_bench {

// A field the run measures: a synthetic one, random bits, or a dataset of the manifest.
enum class field_source { synthetic, random, file };

struct field_spec {
  field_source source;
  inputs::dataset data;  // name, type and extents; for field_source::file, the file
};

struct collective_config {
  // --collective: bcast, gather, scatter, allgather, alltoall or all; empty where not asked for.
  std::vector<std::string> operations;
  int root = 0;  // of bcast, gather and scatter
  // As the point-to-point mode's options say:
  std::vector<double> sizes_mib;  // of one rank's piece
  double max_mib = 0;
  int repetitions = 0;  // 0: by size
  bool csv = false;
  bool nccl = false;         // --transport nccl, which the collectives do not offer
  ndzip::mpi::options opts;  // of the compressed collectives
};

// Adds --collective and --root to `app`, after the options --collective excludes (--checksum,
// --link-gbps, --isend-copies: the collectives have no checksums, the model and the isend
// copies are the point-to-point mode's).
void add_collective_options(CLI::App& app, collective_config& cfg);

// Measures cfg.operations on `fields` (as the point-to-point mode checked them) on every rank of
// MPI_COMM_WORLD, MPI initialised and Kokkos not (initialised here from argc and argv). Returns
// the exit status: 0; 1 where a value did not arrive intact; 2 where the run is refused (NCCL,
// fewer than 2 ranks, a root that is no rank), said on standard error before any transfer.
int run_collectives(const collective_config& cfg, const std::vector<field_spec>& fields, int& argc,
                    char** argv);

}  // namespace ndzip::perf::mpi_bench
