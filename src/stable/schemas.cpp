// The vecadd operators' schemas for processes that run vecadd's kernels without its Python
// face, such as a C++ program loading an AOTInductor package (docs/deploy.md). vecadd's Python
// face defines the same schemas itself, with tags the stable ABI cannot give before torch 2.12,
// so it never loads this library.
#include <torch/csrc/stable/library.h>

#include "vecadd_operators.h"

#define VECADD_STABLE_SCHEMA(schema) m.def(schema);
STABLE_TORCH_LIBRARY(vecadd, m) {
  VECADD_OPERATOR_SCHEMAS(VECADD_STABLE_SCHEMA)
}
