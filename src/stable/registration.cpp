// The vecadd operators as the dispatcher knows them, through the LibTorch stable ABI: for each
// operator python/vecadd/_operators.py describes, its kernels (the shared rules, src/binding),
// for CPU or for CUDA, all instances of the one generic boxed entry below, named by the
// generated vecadd_operators.h. The schemas are defined by vecadd's Python face
// (vecadd/_library.py), as are the fake kernels and autograd, which the stable ABI cannot
// register.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <cstddef>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "stable_api.h"
#include "sum_kernels.h"
#include "vecadd_operators.h"

namespace vecadd::stable_binding {
namespace {

using Kernels = binding::SumKernels<StableApi>;
using Gathered = binding::CallRules<StableApi>::Gathered;

// The tensors of a Tensor[] argument, each owning its handle; the list itself is freed here.
// Read raw: torch::stable::Tensor would allocate a shared_ptr per tensor, a measurable share of
// a small call (docs/portable.md).
PerOperand<StableTensor> list_tensors(StableIValue value, int& count) {
  const auto list = torch::stable::detail::to<StableListHandle>(value);
  std::size_t size = 0;
  check_shim(torch_list_size(list, &size), "read a tensor list's length");
  count = static_cast<int>(size);
  PerOperand<StableTensor> tensors(count);
  for (int i = 0; i < count; ++i) {
    StableIValue element = 0;
    check_shim(torch_list_get_item(list, i, &element), "read a tensor list's item");
    const auto handle = torch::stable::detail::to<AtenTensorHandle>(element);
    tensors[i] = StableTensor(handle, HandleOwner(handle));
  }
  check_shim(torch_delete_list(list), "free a tensor list");
  return tensors;
}

// One argument of each kind as read off the stack, owning what the dispatcher handed over.
template <class Kind>
struct Stable;
template <>
struct Stable<binding::TensorKind> {
  StableTensor tensor;
  void read(StableIValue value) {
    const auto handle = torch::stable::detail::to<AtenTensorHandle>(value);
    tensor = StableTensor(handle, HandleOwner(handle));
  }
  int inputs() const { return 1; }
  void gather(Gathered& call) const { call.add(tensor); }
};
template <>
struct Stable<binding::TensorListKind> {
  std::optional<PerOperand<StableTensor>> tensors;
  int count = 0;
  void read(StableIValue value) { tensors.emplace(list_tensors(value, count)); }
  int inputs() const { return count; }
  void gather(Gathered& call) const {
    for (int i = 0; i < count; ++i) {
      call.add((*tensors)[i]);
    }
  }
};
template <>
struct Stable<binding::FloatKind> {
  double number = 0;
  void read(StableIValue value) { number = torch::stable::detail::to<double>(value); }
  int inputs() const { return 0; }
  void gather(Gathered& call) const { call.add(number); }
};
template <>
struct Stable<binding::ImaginaryKind> {
  double number = 0;
  void read(StableIValue value) { number = torch::stable::detail::to<double>(value); }
  int inputs() const { return 0; }
  void gather(Gathered& call) const { call.add_imaginary(number); }
};
template <>
struct Stable<binding::ImaginaryListKind> {
  std::optional<std::vector<double>> numbers;
  void read(StableIValue value) {
    numbers = torch::stable::detail::to<std::optional<std::vector<double>>>(value);
  }
  int inputs() const { return 0; }
  void gather(Gathered& call) const {
    if (numbers) {
      call.add_imaginary_list(numbers->data(), static_cast<int>(numbers->size()));
    }
  }
};
template <>
struct Stable<binding::DTypeKind> {
  std::optional<torch::headeronly::ScalarType> dtype;
  void read(StableIValue value) {
    dtype = torch::stable::detail::to<std::optional<torch::headeronly::ScalarType>>(value);
  }
  int inputs() const { return 0; }
  void gather(Gathered& call) const { call.ask_dtype(dtype); }
};
template <>
struct Stable<binding::FloatListKind> {
  std::optional<std::vector<double>> numbers;
  void read(StableIValue value) {
    numbers = torch::stable::detail::to<std::optional<std::vector<double>>>(value);
  }
  int inputs() const { return 0; }
  void gather(Gathered& call) const {
    if (numbers) {
      call.add_list(numbers->data(), static_cast<int>(numbers->size()));
    }
  }
};

// The boxed kernel of an overload of one operator whose schema takes Kinds, then out for .out
// (its result on the stack otherwise): `words` is its record's, through which the rules derive
// and check each weight.
template <bool kOut, const binding::OperatorWords& kWords, class... Kinds>
void boxed(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  constexpr std::size_t kArguments = sizeof...(Kinds);
  STD_TORCH_CHECK(num_args == kArguments + (kOut ? 1 : 0) && num_outputs == (kOut ? 0 : 1),
                  "vecadd: the kernel of ", kWords.name, " does not match its schema's ", num_args,
                  " arguments and ", num_outputs, " results");
  std::optional<StableTensor> out;
  if constexpr (kOut) {  // owned first: out's handle is released whatever fails below
    const auto handle = torch::stable::detail::to<AtenTensorHandle>(stack[kArguments]);
    out.emplace(handle, HandleOwner(handle));
  }
  std::tuple<Stable<Kinds>...> arguments;
  std::apply(
      [stack](Stable<Kinds>&... each) {
        std::size_t next = 0;
        (each.read(stack[next++]), ...);
      },
      arguments);
  const int inputs =
      std::apply([](const Stable<Kinds>&... each) { return (each.inputs() + ... + 0); }, arguments);
  Gathered gathered(kWords, inputs);
  std::apply([&](const Stable<Kinds>&... each) { (each.gather(gathered), ...); }, arguments);
  if constexpr (kOut) {
    Kernels::sum_out(gathered.call(), *out);
  } else {
    stack[0] = torch::stable::detail::from(Kernels::sum(gathered.call()).release());
  }
}

}  // namespace
}  // namespace vecadd::stable_binding

// The CPU library registers the CPU kernels, each CUDA library (one per CUDA major) the CUDA
// ones: a CPU-only torch never loads a CUDA library.
#define VECADD_STABLE_KERNEL(name, words, out, ...) \
  m.impl(name, &vecadd::stable_binding::boxed<out, words, __VA_ARGS__>);
#if VECADD_WITH_CUDA
STABLE_TORCH_LIBRARY_IMPL(vecadd, CUDA, m){VECADD_OPERATOR_KERNELS(VECADD_STABLE_KERNEL)}
#else
STABLE_TORCH_LIBRARY_IMPL(vecadd, CPU, m) {
  VECADD_OPERATOR_KERNELS(VECADD_STABLE_KERNEL)
}
#endif
