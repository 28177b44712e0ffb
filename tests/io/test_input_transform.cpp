// Input transforms: parsing of the command-line forms, validation against the channel count, and
// values.
#include <gtest/gtest.h>

#include <cmath>

#include "halo3d/core/Error.hpp"
#include "halo3d/io/InputTransform.hpp"

namespace halo3d {
namespace {

TEST(InputTransform, ParsesEveryForm) {
  EXPECT_TRUE(InputTransform::parse("none").isIdentity());
  const auto l = InputTransform::parse("log1p");
  EXPECT_TRUE(l.log1p);
  EXPECT_EQ(l.scaling, InputTransform::Scaling::None);
  const auto c = InputTransform::parse("constant:0.01");
  EXPECT_FALSE(c.log1p);
  EXPECT_EQ(c.scaling, InputTransform::Scaling::Constant);
  EXPECT_FLOAT_EQ(c.factor, 0.01f);
  const auto m = InputTransform::parse("log1p+meanstd:1,2,3,4:0.5,1,1.5,2");
  EXPECT_TRUE(m.log1p);
  EXPECT_EQ(m.mean, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(m.std, (std::vector<float>{0.5f, 1, 1.5f, 2}));
}

TEST(InputTransform, RejectsBadTextNamingIt) {
  for (const std::string bad :
       {"log2", "constant:", "constant:abc", "meanstd:1,2", "log1p+x", "meanstd:1:z"}) {
    try {
      InputTransform::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(InputTransform::parse("meanstd:1,2:1,2").validate(3), InputError);
  EXPECT_THROW(InputTransform::parse("meanstd:0:0").validate(1), InputError);
  EXPECT_THROW(InputTransform::parse("constant:0").validate(1), InputError);
  EXPECT_NO_THROW(InputTransform::parse("meanstd:1:2").validate(4));
}

TEST(InputTransform, AppliesPerChannel) {
  const auto t = InputTransform::parse("log1p+meanstd:1,2:2,4");
  float v[3] = {0.0f, 1.0f, 9.0f};
  t.apply(1, v, 3);
  EXPECT_FLOAT_EQ(v[0], (0.0f - 2) / 4);
  EXPECT_FLOAT_EQ(v[1], (std::log1p(1.0f) - 2) / 4);
  EXPECT_FLOAT_EQ(v[2], (std::log1p(9.0f) - 2) / 4);
  float w[2] = {3.0f, -4.0f};
  InputTransform::parse("constant:0.5").apply(0, w, 2);
  EXPECT_FLOAT_EQ(w[0], 1.5f);
  EXPECT_FLOAT_EQ(w[1], -2.0f);
}

}  // namespace
}  // namespace halo3d
