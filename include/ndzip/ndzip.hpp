// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip-kokkos: lossless compression of dense float/double grids in the ndzip stream format.

#include "ndzip/array_shape.hpp"
#include "ndzip/backends.hpp"
#include "ndzip/batch_compressor.hpp"
#include "ndzip/chunked_frame.hpp"
#include "ndzip/chunked_frame_stream.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/dynamic.hpp"
#include "ndzip/error.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/format.hpp"
#include "ndzip/frame.hpp"
#include "ndzip/frame_format.hpp"
#include "ndzip/frame_region.hpp"
#include "ndzip/high_ratio.hpp"
#include "ndzip/stream_size.hpp"
#include "ndzip/version.hpp"
#include "ndzip/view_api.hpp"
#include "ndzip/view_checks.hpp"
