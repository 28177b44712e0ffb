#pragma once
// Reading PyTorch reference arrays (tests/support/ReferenceData.hpp) into the tensors and Views of
// the element-wise, batch-norm, loss and dense tests.

#include <hdf5.h>

#include <string>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "support/ReferenceData.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {

// The `params` JSON attribute of a case group. H5File::attribute converts to an ASCII string type,
// which HDF5 refuses for the file's UTF-8 strings (it yields ""), so this reads with the
// attribute's own character set.
inline nlohmann::json paramsOf(const H5File& file, const std::string& group) {
  const hid_t f = H5Fopen(file.path().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t attr =
      f >= 0 ? H5Aopen_by_name(f, group.c_str(), "params", H5P_DEFAULT, H5P_DEFAULT) : -1;
  const hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
  const hid_t mem = H5Tcopy(H5T_C_S1);
  H5Tset_size(mem, H5T_VARIABLE);
  if (type >= 0) H5Tset_cset(mem, H5Tget_cset(type));
  char* text = nullptr;
  const bool ok = type >= 0 && H5Aread(attr, mem, &text) >= 0 && text;
  const std::string value = ok ? text : "";
  if (text) H5free_memory(text);
  H5Tclose(mem);
  if (type >= 0) H5Tclose(type);
  if (attr >= 0) H5Aclose(attr);
  if (f >= 0) H5Fclose(f);
  require(ok, file.path(), ": cannot read attribute 'params' of '", group, "'");
  return nlohmann::json::parse(value);
}

// A whole-volume host tensor holding a (N, C, D, H, W) array.
template <class T>
HostTensor<T> tensorOf(const std::string& label, const Array& a) {
  EXPECT_EQ(a.shape.size(), 5u) << label;
  HostTensor<T> t(
      label, TensorBlock::whole({a.extent(0), a.extent(1), a.extent(2), a.extent(3), a.extent(4)}));
  const auto o = t.owned();
  std::size_t k = 0;
  for (std::size_t n = 0; n < o.extent(0); ++n)
    for (std::size_t c = 0; c < o.extent(1); ++c)
      for (std::size_t d = 0; d < o.extent(2); ++d)
        for (std::size_t h = 0; h < o.extent(3); ++h)
          for (std::size_t w = 0; w < o.extent(4); ++w)
            o(n, c, d, h, w) = T(a.data[k++]);
  return t;
}

// A device matrix holding a rank-2 array.
template <class T>
kernels::Matrix<T, Exec> matrixOf(const std::string& label, const Array& a) {
  EXPECT_EQ(a.shape.size(), 2u) << label;
  kernels::Matrix<T, Exec> m(label, a.extent(0), a.extent(1));
  auto h = Kokkos::create_mirror_view(m);
  for (std::size_t k = 0; k < a.size(); ++k)
    h.data()[k] = T(a.data[k]);
  Kokkos::deep_copy(m, h);
  return m;
}

}  // namespace halo3d::testing
