// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the View checks need to know of a View: its layout, and its name for messages.

#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

namespace ndzip::detail {

template <class View>
constexpr bool is_left_layout_v = std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>;

template <class View>
std::string view_label(const View& v) {
  return v.label().empty() ? std::string("View") : "View \"" + v.label() + "\"";
}

}  // namespace ndzip::detail
