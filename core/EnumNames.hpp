#pragma once
// The names of an enum's values, kept in one table per enum beside the enum, so that printing a
// value and parsing a flag or a file's field cannot disagree:
//
//   inline constexpr EnumName<LrDecay> kLrDecayNames[] = {
//       {LrDecay::None, "none"}, {LrDecay::Step, "step"}, {LrDecay::Poly, "poly"}};
//   nameOf(kLrDecayNames, LrDecay::Step)            // "step"
//   parseName(kLrDecayNames, "cosine", "lr decay")  // InputError: unknown lr decay 'cosine'
//                                                   // (expected none, step or poly)

#include <cstddef>
#include <string>

#include "halo3d/core/Error.hpp"

namespace halo3d {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value`, or "?" for a value the table lacks (a corrupted enum).
template <class E, std::size_t N>
constexpr const char* nameOf(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "?";
}

// "a, b or c": the names of the table, as an error message lists them.
template <class E, std::size_t N>
std::string nameList(const EnumName<E> (&table)[N]) {
  std::string list;
  for (std::size_t i = 0; i < N; ++i)
    list += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(table[i].name);
  return list;
}

// The value called `text`; throws InputError "unknown <what> '<text>' (expected a, b or c)".
template <class E, std::size_t N>
E parseName(const EnumName<E> (&table)[N], const std::string& text, const char* what) {
  for (const EnumName<E>& entry : table)
    if (text == entry.name) return entry.value;
  throw InputError(concat("unknown ", what, " '", text, "' (expected ", nameList(table), ")"));
}

}  // namespace halo3d
