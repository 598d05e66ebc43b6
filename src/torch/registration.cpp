// The vecadd operators as the dispatcher knows them, through torch's full C++ API: for each
// operator python/vecadd/_operators.py describes, its kernels (the shared rules, src/binding)
// for CPU and CUDA and its C++ Autograd kernel, all instances of the one generic entry below,
// named by the generated vecadd_operators.h. The schemas are defined by vecadd's Python face
// (vecadd/_library.py), one contract for both builds.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <optional>

#include "autograd.h"
#include "native_api.h"
#include "sum_kernels.h"
#include "vecadd_operators.h"

namespace vecadd::torch_binding {
namespace {

using Kernels = binding::SumKernels<NativeApi>;
using Gathered = binding::CallRules<NativeApi>::Gathered;

// The C++ type the dispatcher passes each argument kind as.
template <class Kind>
struct Native;
template <>
struct Native<binding::TensorKind> {
  using Type = const at::Tensor&;
  static int inputs(const at::Tensor& /*tensor*/) { return 1; }
  static void gather(Gathered& call, const at::Tensor& tensor) { call.add(tensor); }
};
template <>
struct Native<binding::TensorListKind> {
  using Type = at::TensorList;
  static int inputs(at::TensorList tensors) { return static_cast<int>(tensors.size()); }
  static void gather(Gathered& call, at::TensorList tensors) {
    for (const at::Tensor& tensor : tensors) {
      call.add(tensor);
    }
  }
};
template <>
struct Native<binding::FloatKind> {
  using Type = double;
  static int inputs(double /*number*/) { return 0; }
  static void gather(Gathered& call, double number) { call.add(number); }
};
template <>
struct Native<binding::ImaginaryKind> {
  using Type = double;
  static int inputs(double /*number*/) { return 0; }
  static void gather(Gathered& call, double number) { call.add_imaginary(number); }
};
template <>
struct Native<binding::ImaginaryListKind> {
  using Type = std::optional<at::ArrayRef<double>>;
  static int inputs(const Type& /*numbers*/) { return 0; }
  static void gather(Gathered& call, const Type& numbers) {
    if (numbers) {
      call.add_imaginary_list(numbers->data(), static_cast<int>(numbers->size()));
    }
  }
};
template <>
struct Native<binding::DTypeKind> {
  using Type = std::optional<at::ScalarType>;
  static int inputs(const Type& /*dtype*/) { return 0; }
  static void gather(Gathered& call, const Type& dtype) { call.ask_dtype(dtype); }
};
template <>
struct Native<binding::FloatListKind> {
  using Type = std::optional<at::ArrayRef<double>>;
  static int inputs(const Type& /*numbers*/) { return 0; }
  static void gather(Gathered& call, const Type& numbers) {
    if (numbers) {
      call.add_list(numbers->data(), static_cast<int>(numbers->size()));
    }
  }
};

// Every overload of one operator whose schema takes Kinds (then out, for .out): `words` is its
// record's, through which the rules derive and check each weight.
template <const binding::OperatorWords& kWords, class... Kinds>
struct Entries {
  using FunctionalSignature = at::Tensor(typename Native<Kinds>::Type...);
  using OutSignature = void(typename Native<Kinds>::Type..., at::Tensor&);

  template <class Run>
  static auto with_call(typename Native<Kinds>::Type... arguments, Run&& run) {
    Gathered gathered(kWords, (Native<Kinds>::inputs(arguments) + ... + 0));
    (Native<Kinds>::gather(gathered, arguments), ...);
    return run(gathered.call());
  }

  static at::Tensor functional(typename Native<Kinds>::Type... arguments) {
    return with_call(arguments..., [](const SumCall& call) { return Kernels::sum(call); });
  }

  static void out(typename Native<Kinds>::Type... arguments, at::Tensor& out) {
    with_call(arguments..., [&](const SumCall& call) {
      Kernels::sum_out(call, out);
      return 0;
    });
  }

  // The Autograd kernels: the overload below Autograd, found once, under the node they record.
  static at::Tensor functional_autograd(typename Native<Kinds>::Type... arguments) {
    static const auto below = c10::Dispatcher::singleton()
                                  .findSchemaOrThrow(kWords.name, "")
                                  .template typed<FunctionalSignature>();
    return with_call(arguments..., [&](const SumCall& call) {
      return sum_autograd(call, [&] { return below.call(arguments...); });
    });
  }

  static void out_autograd(typename Native<Kinds>::Type... arguments, at::Tensor& out) {
    static const auto below = c10::Dispatcher::singleton()
                                  .findSchemaOrThrow(kWords.name, "out")
                                  .template typed<OutSignature>();
    with_call(arguments..., [&](const SumCall& call) {
      sum_out_autograd(call, out, [&] { below.call(arguments..., out); });
      return 0;
    });
  }
};

// The kernel of an overload: the functional entry or the .out one, below Autograd or its
// Autograd kernel.
template <bool kAutograd, bool kOut, const binding::OperatorWords& kWords, class... Kinds>
constexpr auto kernel() {
  using Overloads = Entries<kWords, Kinds...>;
  if constexpr (kAutograd && kOut) {
    return &Overloads::out_autograd;
  } else if constexpr (kAutograd) {
    return &Overloads::functional_autograd;
  } else if constexpr (kOut) {
    return &Overloads::out;
  } else {
    return &Overloads::functional;
  }
}

}  // namespace

#define VECADD_NATIVE_KERNEL(name, words, out, ...) \
  m.impl(name, kernel<false, out, words, __VA_ARGS__>());
#define VECADD_NATIVE_AUTOGRAD(name, words, out, ...) \
  m.impl(name, kernel<true, out, words, __VA_ARGS__>());

// A portable wheel's native binding registers its CUDA kernels from a library of their own
// (VECADD_CUDA_KERNELS_ONLY), loaded only under a CUDA torch, beside the one with the rest.
#if !VECADD_CUDA_KERNELS_ONLY
TORCH_LIBRARY_IMPL(vecadd, CPU, m){VECADD_OPERATOR_KERNELS(VECADD_NATIVE_KERNEL)}

TORCH_LIBRARY_IMPL(vecadd, Autograd, m){VECADD_OPERATOR_AUTOGRAD(VECADD_NATIVE_AUTOGRAD)}
#endif

#if VECADD_WITH_CUDA
TORCH_LIBRARY_IMPL(vecadd, CUDA, m) {
  VECADD_OPERATOR_KERNELS(VECADD_NATIVE_KERNEL)
}
#endif

}  // namespace vecadd::torch_binding
