// conv3d forward, backward-data and backward-filter on one GPU: halo3d's CUDA kernels and cuDNN's
// in the same process, on the same shapes, so that both are measured in the same run. Built only
// when Kokkos has CUDA and cuDNN is found (cmake/Halo3dCudnn.cmake).
//
// Shapes (N=1, 3^3 kernels, padding 1 unless named; stride 2 where the name says s2):
//   (a)-(e) of bench_conv3d_onednn: C4_K16_D128, C16_K32_D64, C32_K64_D32, C64_K64_D16,
//   C32_K32_D64; CosmoFlow 128^3 on one GPU (cf128_L3..L5; L0-L2 are (a)-(c)); CosmoFlow 512^3, one
//   rank's block of a 2x2x2 spatial split (cf512b_L0..L5: 256^3 down to 4^3); 3D U-Net, base 32,
//   depth 3, 128^3 input (unet_*: encoder, bottleneck, decoder with its concat input, the 1^3
//   output layer); and a tiny `smoke` shape that CTest runs.
//
// Precisions, reported separately:
//   halo3d_fp32   halo3d's kernels (fp32 storage and arithmetic; halo3d has no TF32 or bf16 conv);
//   cudnn_fp32    cuDNN, fp32 data, CUDNN_FMA_MATH: plain fp32 arithmetic, no tensor cores (the
//                 like-for-like comparison);
//   cudnn_tf32    cuDNN, fp32 data, CUDNN_TENSOR_OP_MATH: TF32 tensor cores where cuDNN has them;
//   cudnn_bf16    cuDNN, bf16 data, fp32 accumulation, CUDNN_TENSOR_OP_MATH, NCDHW;
//   cudnn_bf16_cl the same in channels-last (NDHWC) layout, which cuDNN's 3D tensor-core kernels
//                 favour (layout conversion excluded).
// Each cuDNN benchmark takes the fastest algorithm of cudnnFind*AlgorithmEx (workspace up to
// 2 GiB) whose math type matches, and names it in the label (algo, math type, workspace). If cuDNN
// offers no algorithm for a combination, the benchmark is skipped with that reason.
//
// Timing: manual time, wall clock between two fences (Kokkos fence / cudaStreamSynchronize on the
// same stream), as the other conv benchmarks. `GFLOP/s` counts 2 N O I k^3 Do Ho Wo for every pass
// (no bias: CosmoFlow's and the U-Net's convolutions have none). Buffers are allocated and filled
// outside the timed region. scripts/device_check.sh turns the JSON output into a table with the
// ratio halo3d / cuDNN per pass and precision.
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/kernels/Conv3d.hpp"

namespace {

using halo3d::Box;
using halo3d::HaloTensor;
using halo3d::HaloWidths;
using halo3d::index_t;
using halo3d::TensorBlock;
using halo3d::WindowGeometry;
using Exec = Kokkos::Cuda;
using Memory = Exec::memory_space;
using Clock = std::chrono::steady_clock;

struct Shape {
  const char* name;
  index_t in_ch, out_ch, extent;  // input C, output K, input D = H = W
  int kernel = 3, stride = 1, pad = 1;
  index_t outExtent() const { return (extent + 2 * pad - kernel) / stride + 1; }
  double flops() const {
    const double o = double(outExtent());
    return 2.0 * double(out_ch * in_ch) * double(kernel * kernel * kernel) * o * o * o;
  }
};

// clang-format off
const Shape kShapes[] = {
    {"smoke_C2_K4_D8", 2, 4, 8},
    // (a)-(e), the shapes of bench_conv3d_onednn
    {"C4_K16_D128", 4, 16, 128}, {"C16_K32_D64", 16, 32, 64}, {"C32_K64_D32", 32, 64, 32},
    {"C64_K64_D16", 64, 64, 16}, {"C32_K32_D64", 32, 32, 64},
    // CosmoFlow 128^3, one sample on one GPU: conv0-2 are (a)-(c); conv3 has stride 2; conv5 = conv6
    {"cf128_L3_C64_K128_D16_s2", 64, 128, 16, 3, 2, 1}, {"cf128_L4_C128_K256_D4", 128, 256, 4},
    {"cf128_L5_C256_K256_D2", 256, 256, 2},
    // CosmoFlow 512^3, one block of a 2x2x2 spatial split (8 GPUs per sample)
    {"cf512b_L0_C4_K16_D256", 4, 16, 256}, {"cf512b_L1_C16_K32_D128", 16, 32, 128},
    {"cf512b_L2_C32_K64_D64", 32, 64, 64}, {"cf512b_L3_C64_K128_D32_s2", 64, 128, 32, 3, 2, 1},
    {"cf512b_L4_C128_K256_D8", 128, 256, 8}, {"cf512b_L5_C256_K256_D4", 256, 256, 4},
    // 3D U-Net (base 32, depth 3) on 128^3
    {"unet_down0_C1_K32_D128", 1, 32, 128}, {"unet_down0b_C32_K64_D128", 32, 64, 128},
    {"unet_down1b_C64_K128_D64", 64, 128, 64}, {"unet_down2b_C128_K256_D32", 128, 256, 32},
    {"unet_bottom_C256_K512_D16", 256, 512, 16}, {"unet_dec0_C768_K256_D32", 768, 256, 32},
    {"unet_dec2_C192_K64_D128", 192, 64, 128}, {"unet_dec2b_C64_K64_D128", 64, 64, 128},
    {"unet_out_C64_K3_D128_k1", 64, 3, 128, 1, 1, 0},
};
// clang-format on

enum class Pass { Forward, BackwardData, BackwardFilter };
const char* passName(Pass p) {
  return p == Pass::Forward ? "fwd" : (p == Pass::BackwardData ? "bwd_data" : "bwd_filter");
}

enum class Precision { Fp32, Tf32, Bf16, Bf16ChannelsLast };
const char* precisionName(Precision p) {
  switch (p) {
    case Precision::Fp32:
      return "cudnn_fp32";
    case Precision::Tf32:
      return "cudnn_tf32";
    case Precision::Bf16:
      return "cudnn_bf16";
    case Precision::Bf16ChannelsLast:
      return "cudnn_bf16_cl";
  }
  return "?";
}

// Deterministic values in [-1, 1) from the index, written as T (float or bf16 bits).
KOKKOS_INLINE_FUNCTION float hashValue(std::size_t k, std::uint32_t seed) {
  std::uint32_t h = std::uint32_t(k) * 2654435761u ^ seed;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return float(h & 0xffffff) / float(0x800000) - 1.0f;
}

template <class View>
void fill(const View& v, std::uint32_t seed) {
  auto* p = v.data();
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, v.span()),
      KOKKOS_LAMBDA(std::size_t k) { p[k] = hashValue(k, seed); });
}

void fillBf16(const Kokkos::View<__nv_bfloat16*, Memory>& v, std::uint32_t seed) {
  auto* p = v.data();
  Kokkos::parallel_for(
      "fill bf16", Kokkos::RangePolicy<Exec>(0, v.span()),
      KOKKOS_LAMBDA(std::size_t k) { p[k] = __float2bfloat16(hashValue(k, seed)); });
}

void setCounters(benchmark::State& state, const Shape& s) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(s.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------------------------------ halo3d

void benchHalo3d(benchmark::State& state, Shape s, Pass pass) {
  const WindowGeometry g = WindowGeometry::cubic(s.kernel, s.stride, s.pad);
  const index_t e = s.extent, eo = s.outExtent();
  const HaloWidths halo = HaloWidths::uniform(s.pad);
  const HaloTensor<float, Memory> x("x", TensorBlock::whole({1, s.in_ch, e, e, e}, halo));
  const HaloTensor<float, Memory> dx("dx", TensorBlock::whole({1, s.in_ch, e, e, e}, halo));
  const HaloTensor<float, Memory> y("y", TensorBlock::whole({1, s.out_ch, eo, eo, eo}));
  const auto noinit = Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("w"));
  const int k = s.kernel;
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> w(noinit, s.out_ch, s.in_ch, k, k, k),
      dw(noinit, s.out_ch, s.in_ch, k, k, k);
  const Kokkos::View<float*, Kokkos::LayoutRight, Memory> none("no bias", 0);
  fill(w, 1);
  fill(y.view(), 3);  // dy for the backward passes
  Kokkos::deep_copy(x.owned(), 0.5f);
  const Box in_volume = Box::fromExtents({e, e, e}), out_volume = Box::fromExtents({eo, eo, eo});
  const Exec exec;
  auto run = [&] {
    switch (pass) {
      case Pass::Forward:
        halo3d::kernels::conv3dForward(exec, x, w, none, g, y, out_volume);
        break;
      case Pass::BackwardData:
        halo3d::kernels::conv3dBackwardData(exec, y, w, g, dx, in_volume);
        break;
      case Pass::BackwardFilter:
        halo3d::kernels::conv3dBackwardFilter(exec, x, y, g, dw, none, out_volume, false);
        break;
    }
  };
  run();  // warm-up
  for (auto _ : state) {
    halo3d::fence(exec, "before timing");
    const auto t0 = Clock::now();
    run();
    halo3d::fence(exec, "conv3d done");
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  setCounters(state, s);
}

// ------------------------------------------------------------------------------------ cuDNN

void check(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(status));
}
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

const char* mathName(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH:
      return "default";
    case CUDNN_TENSOR_OP_MATH:
      return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return "tensor_op_conv";
    case CUDNN_FMA_MATH:
      return "fma";
  }
  return "?";
}

// The cuDNN objects of one benchmark, destroyed in reverse order.
struct Cudnn {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Cudnn() {
    check(cudnnCreate(&handle), "cudnnCreate");
    check(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
  }
  ~Cudnn() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
    if (handle) cudnnDestroy(handle);
  }
  Cudnn(const Cudnn&) = delete;
  Cudnn& operator=(const Cudnn&) = delete;
};

// The algorithm a Find call chose: the fastest successful one with the wanted math type.
struct Choice {
  int algo = -1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  std::size_t workspace = 0;
  float find_ms = 0;
};

template <class Perf>
Choice choose(const std::vector<Perf>& perf, int returned, bool tensor_ops) {
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[std::size_t(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    // fp32: plain FMA only. TF32 and bf16: tensor-core algorithms only, so the figure is what the
    // name says; Find lists the others too.
    const bool is_tensor_op = p.mathType != CUDNN_FMA_MATH && p.mathType != CUDNN_DEFAULT_MATH;
    if (is_tensor_op != tensor_ops) continue;
    return Choice{int(p.algo), p.mathType, p.memory, p.time};
  }
  return Choice{};
}

constexpr std::size_t kWorkspaceLimit = std::size_t(2) << 30;

void benchCudnn(benchmark::State& state, Shape s, Pass pass, Precision precision) {
  try {
    const Exec exec;
    Cudnn c;
    check(cudnnSetStream(c.handle, exec.cuda_stream()), "cudnnSetStream");
    const bool bf16 = precision == Precision::Bf16 || precision == Precision::Bf16ChannelsLast;
    const bool tensor_ops = precision != Precision::Fp32;
    const cudnnDataType_t data = bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    const cudnnTensorFormat_t format =
        precision == Precision::Bf16ChannelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const int e = int(s.extent), eo = int(s.outExtent()), k = s.kernel;
    const int xdims[5] = {1, int(s.in_ch), e, e, e}, ydims[5] = {1, int(s.out_ch), eo, eo, eo};
    const int wdims[5] = {int(s.out_ch), int(s.in_ch), k, k, k};
    check(cudnnSetTensorNdDescriptorEx(c.x, format, data, 5, xdims), "x descriptor");
    check(cudnnSetTensorNdDescriptorEx(c.y, format, data, 5, ydims), "y descriptor");
    check(cudnnSetFilterNdDescriptor(c.w, data, format, 5, wdims), "w descriptor");
    const int pad[3] = {s.pad, s.pad, s.pad}, stride[3] = {s.stride, s.stride, s.stride};
    const int dil[3] = {1, 1, 1};
    check(cudnnSetConvolutionNdDescriptor(c.conv, 3, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT),
          "convolution descriptor");
    check(cudnnSetConvolutionMathType(c.conv, tensor_ops ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
          "math type");

    // Buffers: x, y (dy), w (dw), each as float or bf16.
    const std::size_t nx = std::size_t(s.in_ch) * std::size_t(e) * e * e;
    const std::size_t ny = std::size_t(s.out_ch) * std::size_t(eo) * eo * eo;
    const std::size_t nw = std::size_t(s.out_ch) * std::size_t(s.in_ch) * std::size_t(k) * k * k;
    const auto noinit = [](const char* label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    };
    Kokkos::View<float*, Memory> xf, yf, wf;
    Kokkos::View<__nv_bfloat16*, Memory> xb, yb, wb;
    void *px, *py, *pw;
    if (bf16) {
      xb = decltype(xb)(noinit("x"), nx);
      yb = decltype(yb)(noinit("y"), ny);
      wb = decltype(wb)(noinit("w"), nw);
      fillBf16(xb, 1);
      fillBf16(yb, 2);
      fillBf16(wb, 3);
      px = xb.data(), py = yb.data(), pw = wb.data();
    } else {
      xf = decltype(xf)(noinit("x"), nx);
      yf = decltype(yf)(noinit("y"), ny);
      wf = decltype(wf)(noinit("w"), nw);
      fill(xf, 1);
      fill(yf, 2);
      fill(wf, 3);
      px = xf.data(), py = yf.data(), pw = wf.data();
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const std::size_t limit = std::min(kWorkspaceLimit, free_bytes / 4);
    Kokkos::View<char*, Memory> workspace(noinit("cudnn workspace"), limit);
    halo3d::fence(exec, "buffers filled");

    // Find the algorithm (outside the timing), then run it once as a warm-up.
    constexpr int kMaxAlgos = 16;
    int returned = 0;
    Choice choice;
    switch (pass) {
      case Pass::Forward: {
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(kMaxAlgos);
        check(cudnnFindConvolutionForwardAlgorithmEx(c.handle, c.x, px, c.w, pw, c.conv, c.y, py,
                                                     kMaxAlgos, &returned, perf.data(),
                                                     workspace.data(), limit),
              "cudnnFindConvolutionForwardAlgorithmEx");
        choice = choose(perf, returned, tensor_ops);
        break;
      }
      case Pass::BackwardData: {
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(kMaxAlgos);
        check(cudnnFindConvolutionBackwardDataAlgorithmEx(c.handle, c.w, pw, c.y, py, c.conv, c.x,
                                                          px, kMaxAlgos, &returned, perf.data(),
                                                          workspace.data(), limit),
              "cudnnFindConvolutionBackwardDataAlgorithmEx");
        choice = choose(perf, returned, tensor_ops);
        break;
      }
      case Pass::BackwardFilter: {
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(kMaxAlgos);
        check(cudnnFindConvolutionBackwardFilterAlgorithmEx(c.handle, c.x, px, c.y, py, c.conv, c.w,
                                                            pw, kMaxAlgos, &returned, perf.data(),
                                                            workspace.data(), limit),
              "cudnnFindConvolutionBackwardFilterAlgorithmEx");
        choice = choose(perf, returned, tensor_ops);
        break;
      }
    }
    if (choice.algo < 0) {
      state.SkipWithError((std::string("cuDNN offers no ") + (tensor_ops ? "tensor-core" : "FMA") +
                           " algorithm for this case")
                              .c_str());
      return;
    }
    // The chosen algorithm's math type, whatever Find reported it with.
    check(cudnnSetConvolutionMathType(c.conv, choice.math), "math type of the chosen algorithm");
    const float one = 1.0f, zero = 0.0f;
    auto run = [&] {
      switch (pass) {
        case Pass::Forward:
          check(cudnnConvolutionForward(c.handle, &one, c.x, px, c.w, pw, c.conv,
                                        cudnnConvolutionFwdAlgo_t(choice.algo), workspace.data(),
                                        choice.workspace, &zero, c.y, py),
                "cudnnConvolutionForward");
          break;
        case Pass::BackwardData:
          check(cudnnConvolutionBackwardData(c.handle, &one, c.w, pw, c.y, py, c.conv,
                                             cudnnConvolutionBwdDataAlgo_t(choice.algo),
                                             workspace.data(), choice.workspace, &zero, c.x, px),
                "cudnnConvolutionBackwardData");
          break;
        case Pass::BackwardFilter:
          check(cudnnConvolutionBackwardFilter(c.handle, &one, c.x, px, c.y, py, c.conv,
                                               cudnnConvolutionBwdFilterAlgo_t(choice.algo),
                                               workspace.data(), choice.workspace, &zero, c.w, pw),
                "cudnnConvolutionBackwardFilter");
          break;
      }
    };
    run();
    check(cudaStreamSynchronize(exec.cuda_stream()), "warm-up");
    for (auto _ : state) {
      check(cudaStreamSynchronize(exec.cuda_stream()), "before timing");
      const auto t0 = Clock::now();
      run();
      check(cudaStreamSynchronize(exec.cuda_stream()), "after the convolution");
      state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    setCounters(state, s);
    state.counters["algo"] = choice.algo;
    state.counters["workspace_MiB"] = double(choice.workspace) / double(1 << 20);
    state.SetLabel(std::string("algo=") + std::to_string(choice.algo) +
                   " math=" + mathName(choice.math));
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
  }
}

// Each shape and pass: halo3d, then cuDNN at every precision, registered next to each other.
const bool registered = [] {
  for (const Shape& s : kShapes)
    for (Pass pass : {Pass::Forward, Pass::BackwardData, Pass::BackwardFilter}) {
      const std::string op = std::string(passName(pass)) + "/" + s.name;
      benchmark::RegisterBenchmark(("halo3d_fp32/" + op).c_str(), benchHalo3d, s, pass)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
      for (Precision p :
           {Precision::Fp32, Precision::Tf32, Precision::Bf16, Precision::Bf16ChannelsLast})
        benchmark::RegisterBenchmark((std::string(precisionName(p)) + "/" + op).c_str(), benchCudnn,
                                     s, pass, p)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
    }
  return true;
}();

}  // namespace
