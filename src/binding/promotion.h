// torch's type promotion for vecadd's operators, over the kernel library's dtypes and without
// torch: the dtype a sum of tensors is computed in and returned as (torch.result_type's rules
// for tensors with dimensions and 0-dim ones, applied as a chain of torch.add applies them), the
// casts torch allows into out=, and the categories the weights' rules follow.
#pragma once

#include <optional>

#include "vecadd/vecadd.h"

namespace vecadd::binding {

bool is_complex(DType dtype);
bool is_floating(DType dtype);  // float16, bfloat16, float32, float64
bool is_integral(DType dtype);  // bool and the integers

// torch.promote_types: the smallest dtype both cast to without losing their category.
DType promote_types(DType a, DType b);

// One operand of a promotion: its dtype, and whether it has dimensions (a 0-dim tensor takes part
// only where it is of a higher category than the tensors with dimensions).
struct Promoted {
  DType dtype;
  bool has_dims;
};

// torch.result_type of two operands, and the operand their torch.add would return; nothing
// where that is a complex dtype of bfloat16's range (a bfloat16 tensor with a complex 0-dim
// one), in which torch.add does not compute either.
std::optional<Promoted> result_of(const Promoted& a, const Promoted& b);

// torch.can_cast(from, to): no complex to real, no floating to integer, nothing but bool to bool.
bool can_cast(DType from, DType to);

// The dtype a sum is computed in: the common dtype's compute dtype (float32 for the 16-bit floats,
// complex64 for complex32, itself otherwise), which the weights must fit.
DType compute_dtype(DType dtype);

}  // namespace vecadd::binding
