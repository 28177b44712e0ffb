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
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/ConvPasses.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::Cuda;
using Memory = Exec::memory_space;
using Shape = Conv3dShape;

// clang-format off
const Shape kMoreShapes[] = {
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

enum class Precision { Fp32, Tf32, Bf16, Bf16ChannelsLast };
constexpr Precision kPrecisions[] = {Precision::Fp32, Precision::Tf32, Precision::Bf16,
                                     Precision::Bf16ChannelsLast};
const char* precisionName(Precision p) {
  static const char* const names[] = {"cudnn_fp32", "cudnn_tf32", "cudnn_bf16", "cudnn_bf16_cl"};
  return names[int(p)];
}

void setCounters(benchmark::State& state, const Shape& s) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(s.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------------------------------ halo3d

void benchHalo3d(benchmark::State& state, Shape s, Pass pass) {
  const Conv3dBuffers<Memory> c(s, /*bias=*/false);
  Kokkos::deep_copy(c.x.owned(), 0.5f);
  const Exec exec;
  timeFenced(state, exec, [&] { c.run(exec, pass); });
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
  static const std::pair<cudnnMathType_t, const char*> names[] = {
      {CUDNN_DEFAULT_MATH, "default"},
      {CUDNN_TENSOR_OP_MATH, "tensor_op"},
      {CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, "tensor_op_conv"},
      {CUDNN_FMA_MATH, "fma"}};
  for (const auto& [math, name] : names)
    if (math == m) return name;
  return "?";
}

void fillBf16(const Kokkos::View<__nv_bfloat16*, Memory>& v, std::uint32_t seed) {
  auto* p = v.data();
  Kokkos::parallel_for(
      "fill bf16", Kokkos::RangePolicy<Exec>(0, v.span()),
      KOKKOS_LAMBDA(std::size_t k) { p[k] = __float2bfloat16(hashValue(k, seed)); });
}
void fillValues(const Kokkos::View<float*, Memory>& v, std::uint32_t seed) {
  fillHashed(v, seed);
}
void fillValues(const Kokkos::View<__nv_bfloat16*, Memory>& v, std::uint32_t seed) {
  fillBf16(v, seed);
}

// `v` allocated with n entries and filled; returns its data.
template <class T>
void* allocateFilled(Kokkos::View<T*, Memory>& v, const char* label, std::size_t n,
                     std::uint32_t seed) {
  v = Kokkos::View<T*, Memory>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                               n);
  fillValues(v, seed);
  return v.data();
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

constexpr std::size_t kWorkspaceLimit = std::size_t(2) << 30;

// One benchmark's cuDNN set-up: the descriptors of the shape and precision on Exec's stream, the
// buffers x, y (dy), w (dw) as float or bf16, filled, and the workspace Find may use.
struct CudnnCase {
  Shape shape;
  bool tensor_ops;
  Exec exec;
  Cudnn c;
  Kokkos::View<float*, Memory> xf, yf, wf;
  Kokkos::View<__nv_bfloat16*, Memory> xb, yb, wb;
  void *px = nullptr, *py = nullptr, *pw = nullptr;
  std::size_t limit = 0;
  Kokkos::View<char*, Memory> workspace;

  CudnnCase(const Shape& s, Precision precision)
      : shape(s), tensor_ops(precision != Precision::Fp32) {
    check(cudnnSetStream(c.handle, exec.cuda_stream()), "cudnnSetStream");
    const bool bf16 = precision == Precision::Bf16 || precision == Precision::Bf16ChannelsLast;
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

    const std::size_t nx = std::size_t(s.in_ch) * std::size_t(e) * e * e;
    const std::size_t ny = std::size_t(s.out_ch) * std::size_t(eo) * eo * eo;
    const std::size_t nw = std::size_t(s.out_ch) * std::size_t(s.in_ch) * std::size_t(k) * k * k;
    if (bf16) {
      px = allocateFilled(xb, "x", nx, 1), py = allocateFilled(yb, "y", ny, 2);
      pw = allocateFilled(wb, "w", nw, 3);
    } else {
      px = allocateFilled(xf, "x", nx, 1), py = allocateFilled(yf, "y", ny, 2);
      pw = allocateFilled(wf, "w", nw, 3);
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    limit = std::min(kWorkspaceLimit, free_bytes / 4);
    workspace = Kokkos::View<char*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("cudnn workspace")), limit);
    fence(exec, "buffers filled");
  }
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

// One pass: cuDNN's Find call and its run call (cudnnFindConvolution<what>AlgorithmEx and
// cudnnConvolution<what>) take the operands in the same order, two inputs (a, b) and the output.
// Finds the algorithm (outside the timing), then times it after a warm-up run.
template <class Perf, class Find, class Run, class DescA, class DescB, class DescOut>
void timePass(benchmark::State& state, CudnnCase& k, const std::string& what, Find find, Run run,
              DescA a, void* pa, DescB b, void* pb, DescOut out, void* pout) {
  constexpr int kMaxAlgos = 16;
  int returned = 0;
  std::vector<Perf> perf(kMaxAlgos);
  const std::string find_name = "cudnnFindConvolution" + what + "AlgorithmEx";
  check(find(k.c.handle, a, pa, b, pb, k.c.conv, out, pout, kMaxAlgos, &returned, perf.data(),
             k.workspace.data(), k.limit),
        find_name.c_str());
  const Choice choice = choose(perf, returned, k.tensor_ops);
  if (choice.algo < 0) {
    state.SkipWithError((std::string("cuDNN offers no ") + (k.tensor_ops ? "tensor-core" : "FMA") +
                         " algorithm for this case")
                            .c_str());
    return;
  }
  // The chosen algorithm's math type, whatever Find reported it with.
  check(cudnnSetConvolutionMathType(k.c.conv, choice.math), "math type of the chosen algorithm");
  const float one = 1.0f, zero = 0.0f;
  const auto algo = decltype(Perf::algo)(choice.algo);
  const std::string run_name = "cudnnConvolution" + what;
  const cudaStream_t stream = k.exec.cuda_stream();
  timeManually(
      state, [&](const char* why) { check(cudaStreamSynchronize(stream), why); },
      [&] {
        check(run(k.c.handle, &one, a, pa, b, pb, k.c.conv, algo, k.workspace.data(),
                  choice.workspace, &zero, out, pout),
              run_name.c_str());
      });
  setCounters(state, k.shape);
  state.counters["algo"] = choice.algo;
  state.counters["workspace_MiB"] = double(choice.workspace) / double(1 << 20);
  state.SetLabel(std::string("algo=") + std::to_string(choice.algo) +
                 " math=" + mathName(choice.math));
}

void benchCudnn(benchmark::State& state, Shape s, Pass pass, Precision precision) {
  try {
    CudnnCase k(s, precision);
    const Cudnn& c = k.c;
    switch (pass) {
      case Pass::Forward:
        return timePass<cudnnConvolutionFwdAlgoPerf_t>(
            state, k, "Forward", cudnnFindConvolutionForwardAlgorithmEx, cudnnConvolutionForward,
            c.x, k.px, c.w, k.pw, c.y, k.py);
      case Pass::BackwardData:
        return timePass<cudnnConvolutionBwdDataAlgoPerf_t>(
            state, k, "BackwardData", cudnnFindConvolutionBackwardDataAlgorithmEx,
            cudnnConvolutionBackwardData, c.w, k.pw, c.y, k.py, c.x, k.px);
      case Pass::BackwardFilter:
        return timePass<cudnnConvolutionBwdFilterAlgoPerf_t>(
            state, k, "BackwardFilter", cudnnFindConvolutionBackwardFilterAlgorithmEx,
            cudnnConvolutionBackwardFilter, c.x, k.px, c.y, k.py, c.w, k.pw);
    }
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
  }
}

// Each shape and pass: halo3d, then cuDNN at every precision, registered next to each other.
void registerShape(const Shape& s) {
  for (Pass pass : kPasses) {
    const std::string op = std::string(passName(pass)) + "/" + s.name;
    benchmark::RegisterBenchmark(("halo3d_fp32/" + op).c_str(), benchHalo3d, s, pass)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    for (Precision p : kPrecisions)
      benchmark::RegisterBenchmark((std::string(precisionName(p)) + "/" + op).c_str(), benchCudnn,
                                   s, pass, p)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  }
}

// The shapes of bench_conv3d_onednn first, in its order.
const bool registered = [] {
  for (const Shape& s : kConv3dShapes)
    registerShape(s);
  for (const Shape& s : kMoreShapes)
    registerShape(s);
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
