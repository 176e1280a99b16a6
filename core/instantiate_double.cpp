#include "core/instantiate.hpp"

NDZIP_INSTANTIATE(double)
