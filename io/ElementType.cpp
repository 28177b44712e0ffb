#include "halo3d/io/ElementType.hpp"

#include "halo3d/core/EnumNames.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d {

namespace {
constexpr EnumName<ElementType> kElementTypeNames[] = {
    {ElementType::Int8, "int8"},       {ElementType::UInt8, "uint8"},
    {ElementType::Int16, "int16"},     {ElementType::UInt16, "uint16"},
    {ElementType::Int32, "int32"},     {ElementType::UInt32, "uint32"},
    {ElementType::Int64, "int64"},     {ElementType::UInt64, "uint64"},
    {ElementType::Float32, "float32"}, {ElementType::Float64, "float64"}};
}  // namespace

const char* elementTypeName(ElementType t) {
  return nameOf(kElementTypeNames, t);
}

bool isInteger(ElementType t) {
  return t != ElementType::Float32 && t != ElementType::Float64;
}

namespace {

// f(From{}) for the C++ type From of `t`.
template <class F>
auto withType(ElementType t, F&& f) {
  switch (t) {
    case ElementType::Int8:
      return f(std::int8_t{});
    case ElementType::UInt8:
      return f(std::uint8_t{});
    case ElementType::Int16:
      return f(std::int16_t{});
    case ElementType::UInt16:
      return f(std::uint16_t{});
    case ElementType::Int32:
      return f(std::int32_t{});
    case ElementType::UInt32:
      return f(std::uint32_t{});
    case ElementType::Int64:
      return f(std::int64_t{});
    case ElementType::UInt64:
      return f(std::uint64_t{});
    case ElementType::Float32:
      return f(float{});
    case ElementType::Float64:
      return f(double{});
  }
  // Only a value cast from an unchecked integer gets here; reading it as float64 would hide that.
  throw Error(concat("invalid element type value ", int(t)));
}

}  // namespace

std::size_t elementSize(ElementType t) {
  return withType(t, [](auto v) { return sizeof(v); });
}

template <class T>
void convertElements(ElementType from, const void* in, T* out, std::size_t count) {
  withType(from, [&](auto v) {
    using From = decltype(v);
    const From* src = static_cast<const From*>(in);
    for (std::size_t i = 0; i < count; ++i)
      out[i] = static_cast<T>(src[i]);
  });
}

template void convertElements<float>(ElementType, const void*, float*, std::size_t);
template void convertElements<double>(ElementType, const void*, double*, std::size_t);
template void convertElements<std::int32_t>(ElementType, const void*, std::int32_t*, std::size_t);
template void convertElements<std::int64_t>(ElementType, const void*, std::int64_t*, std::size_t);

}  // namespace halo3d
