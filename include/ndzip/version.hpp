#pragma once

namespace ndzip {
inline constexpr const char* version_string = "0.1.0";
}
