#include <gtest/gtest.h>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Parameter.hpp"

namespace halo3d::nn {
namespace {

TEST(ParameterStore, TrainableFirstAndReshapedViewsShareStorage) {
  ParameterStore store;
  store.add("features.0.weight", {2, 1, 3, 3, 3});
  store.add("features.1.running_mean", {2}, false);
  store.add("head.1.weight", {4, 3});
  store.add("head.1.bias", {4});
  store.finalize();
  EXPECT_EQ(store.trainableSize(), 54u + 12u + 4u);
  EXPECT_EQ(store.find("features.1.running_mean").offset(), store.trainableSize());
  EXPECT_EQ(store.trainable().size(), 3u);
  auto w = store.find("head.1.weight").valueAs<2>();
  EXPECT_EQ(w.extent(0), 4u);
  EXPECT_EQ(w.data(), store.values().data() + 54);
  EXPECT_EQ(store.find("head.1.weight").grad().data(), store.grads().data() + 54);
  EXPECT_EQ(store.find("features.1.running_mean").grad().data(), nullptr);
}

TEST(ParameterStore, ErrorsNameTheKey) {
  ParameterStore store;
  store.add("a", {3});
  EXPECT_THROW(store.add("a", {3}), InputError);
  EXPECT_THROW(store.add("b", {0, 3}), ShapeError);
  store.finalize();
  try {
    store.find("missing.weight");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.weight"), std::string::npos);
  }
  EXPECT_THROW(store.find("a").valueAs<2>(), ShapeError);
}

}  // namespace
}  // namespace halo3d::nn
