#pragma once
// The scalar types a sample or checkpoint file may hold, independent of HDF5, and the conversion of
// a run of them to the float or integer type a tensor holds.

#include <cstddef>
#include <cstdint>
#include <string>

namespace halo3d {

enum class ElementType {
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float32,
  Float64
};

// "int16", "float32", ...: the names numpy and the error messages use.
const char* elementTypeName(ElementType t);
std::size_t elementSize(ElementType t);
bool isInteger(ElementType t);

template <class T>
constexpr ElementType elementTypeOf();
template <>
constexpr ElementType elementTypeOf<float>() {
  return ElementType::Float32;
}
template <>
constexpr ElementType elementTypeOf<double>() {
  return ElementType::Float64;
}
template <>
constexpr ElementType elementTypeOf<std::int16_t>() {
  return ElementType::Int16;
}
template <>
constexpr ElementType elementTypeOf<std::int32_t>() {
  return ElementType::Int32;
}
template <>
constexpr ElementType elementTypeOf<std::int64_t>() {
  return ElementType::Int64;
}
template <>
constexpr ElementType elementTypeOf<std::uint8_t>() {
  return ElementType::UInt8;
}

// out[i] = T(in[i]) for i < count, where `in` holds `count` elements of type `from`.
template <class T>
void convertElements(ElementType from, const void* in, T* out, std::size_t count);

extern template void convertElements<float>(ElementType, const void*, float*, std::size_t);
extern template void convertElements<double>(ElementType, const void*, double*, std::size_t);
extern template void convertElements<std::int32_t>(ElementType, const void*, std::int32_t*,
                                                   std::size_t);
extern template void convertElements<std::int64_t>(ElementType, const void*, std::int64_t*,
                                                   std::size_t);

}  // namespace halo3d
