#include "halo3d/io/ElementType.hpp"

#include "halo3d/core/EnumNames.hpp"

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

std::size_t elementSize(ElementType t) {
  switch (t) {
    case ElementType::Int8:
    case ElementType::UInt8:
      return 1;
    case ElementType::Int16:
    case ElementType::UInt16:
      return 2;
    case ElementType::Int32:
    case ElementType::UInt32:
    case ElementType::Float32:
      return 4;
    case ElementType::Int64:
    case ElementType::UInt64:
    case ElementType::Float64:
      return 8;
  }
  return 0;
}

bool isInteger(ElementType t) {
  return t != ElementType::Float32 && t != ElementType::Float64;
}

namespace {

template <class From, class T>
void convertRun(const void* in, T* out, std::size_t count) {
  const From* src = static_cast<const From*>(in);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = static_cast<T>(src[i]);
}

}  // namespace

template <class T>
void convertElements(ElementType from, const void* in, T* out, std::size_t count) {
  switch (from) {
    case ElementType::Int8:
      return convertRun<std::int8_t>(in, out, count);
    case ElementType::UInt8:
      return convertRun<std::uint8_t>(in, out, count);
    case ElementType::Int16:
      return convertRun<std::int16_t>(in, out, count);
    case ElementType::UInt16:
      return convertRun<std::uint16_t>(in, out, count);
    case ElementType::Int32:
      return convertRun<std::int32_t>(in, out, count);
    case ElementType::UInt32:
      return convertRun<std::uint32_t>(in, out, count);
    case ElementType::Int64:
      return convertRun<std::int64_t>(in, out, count);
    case ElementType::UInt64:
      return convertRun<std::uint64_t>(in, out, count);
    case ElementType::Float32:
      return convertRun<float>(in, out, count);
    case ElementType::Float64:
      return convertRun<double>(in, out, count);
  }
}

template void convertElements<float>(ElementType, const void*, float*, std::size_t);
template void convertElements<double>(ElementType, const void*, double*, std::size_t);
template void convertElements<std::int32_t>(ElementType, const void*, std::int32_t*, std::size_t);
template void convertElements<std::int64_t>(ElementType, const void*, std::int64_t*, std::size_t);

}  // namespace halo3d
