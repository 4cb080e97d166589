// The app's own kernel for aten::avg_pool3d.out (volume_ops.yaml declares it): ExecuTorch's
// kernel libraries have none, so an app that ships volume_net_pte links this file. It registers
// itself when the library loads, as ExecuTorch's own kernel libraries do, so the app (or the
// native runner in volume_net_pte's numerics test) only has to link it whole (alwayslink).
//
// Float32, contiguous NCDHW, no padding, ceil_mode false: what volume_net exports. Anything
// else fails the call with InvalidArgument, so an unsupported use is an error, not wrong numbers.

#include <cstdint>

#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/kernel_includes.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace {

using executorch::aten::ArrayRef;
using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Kernel;
using executorch::runtime::KernelRuntimeContext;
using executorch::runtime::Span;

// An int[3] argument; a single value means the same for all three dims, an empty one `fallback`.
bool triple(const EValue& value, const int64_t* fallback, int64_t out[3]) {
  ArrayRef<int64_t> list = value.toIntList();
  for (int i = 0; i < 3; ++i) {
    if (list.size() == 0) {
      out[i] = fallback[i];
    } else {
      out[i] = list.size() == 1 ? list[0] : list[i];
    }
  }
  return list.size() == 0 || list.size() == 1 || list.size() == 3;
}

// avg_pool3d.out(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
//                divisor_override, *, out) -> out: nine values, the out tensor at 7 and again as the
//                result at 8.
void avg_pool3d_out(KernelRuntimeContext& context, Span<EValue*> stack) {
  if (stack.size() != 9) {
    context.fail(Error::InvalidArgument);
    return;
  }
  const Tensor& in = stack[0]->toTensor();
  Tensor& out = stack[7]->toTensor();
  const int64_t zeros[3] = {0, 0, 0};
  int64_t kernel[3], stride[3], padding[3];
  bool valid = triple(*stack[1], zeros, kernel) && triple(*stack[2], kernel, stride) &&
               triple(*stack[3], zeros, padding);
  valid = valid && in.dim() == 5 && in.scalar_type() == ScalarType::Float &&
          out.scalar_type() == ScalarType::Float && !stack[4]->toBool() &&
          padding[0] == 0 && padding[1] == 0 && padding[2] == 0;
  for (int i = 0; valid && i < 3; ++i) {
    valid = kernel[i] > 0 && stride[i] > 0 && in.size(2 + i) >= kernel[i];
  }
  if (!valid) {
    context.fail(Error::InvalidArgument);
    return;
  }
  int64_t divisor = kernel[0] * kernel[1] * kernel[2];
  if (!stack[6]->isNone()) {
    divisor = stack[6]->toInt();  // count_include_pad does not matter without padding
  }

  const int64_t planes = in.size(0) * in.size(1);
  const int64_t depth = in.size(2), height = in.size(3), width = in.size(4);
  const int64_t out_d = (depth - kernel[0]) / stride[0] + 1;
  const int64_t out_h = (height - kernel[1]) / stride[1] + 1;
  const int64_t out_w = (width - kernel[2]) / stride[2] + 1;
  const SizesType sizes[5] = {
      static_cast<SizesType>(in.size(0)), static_cast<SizesType>(in.size(1)),
      static_cast<SizesType>(out_d), static_cast<SizesType>(out_h), static_cast<SizesType>(out_w)};
  if (executorch::runtime::resize_tensor(out, ArrayRef<SizesType>(sizes, 5)) != Error::Ok) {
    context.fail(Error::InvalidArgument);
    return;
  }

  const float* source = in.const_data_ptr<float>();
  float* target = out.mutable_data_ptr<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float* plane = source + p * depth * height * width;
    for (int64_t d = 0; d < out_d; ++d) {
      for (int64_t h = 0; h < out_h; ++h) {
        for (int64_t w = 0; w < out_w; ++w) {
          float sum = 0.0f;
          for (int64_t kd = 0; kd < kernel[0]; ++kd) {
            for (int64_t kh = 0; kh < kernel[1]; ++kh) {
              const float* row = plane + ((d * stride[0] + kd) * height + h * stride[1] + kh) * width;
              for (int64_t kw = 0; kw < kernel[2]; ++kw) {
                sum += row[w * stride[2] + kw];
              }
            }
          }
          *target++ = sum / static_cast<float>(divisor);
        }
      }
    }
  }
}

// Registered when the shared object or binary that holds this file starts.
const Error registered = executorch::runtime::register_kernel(
    Kernel("aten::avg_pool3d.out", avg_pool3d_out));

}  // namespace
