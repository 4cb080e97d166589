// etvals: the runner's value files, a list of tensors and scalars that Python writes and reads
// with `struct` (exporter/checks/etvals.py has the layout and the Python side).
#pragma once
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/core/evalue.h>

#include <string>
#include <vector>

namespace et_runner {

struct Value {
  char kind = 'T';     // T tensor, I int, D double, B bool, N None
  uint8_t dtype = 6;   // ExecuTorch ScalarType code
  std::vector<int64_t> dims;
  std::string bytes;   // row-major data; 8 bytes for I/D/B
  executorch::extension::TensorPtr tensor;  // a view of bytes, made by to_evalues
};

std::vector<Value> read_values(const std::string& path);
// EValues viewing `values` (which must outlive them).
std::vector<executorch::runtime::EValue> to_evalues(std::vector<Value>& values);
void write_values(const std::string& path, const std::vector<executorch::runtime::EValue>& values);
std::string slurp(const std::string& path, size_t limit = SIZE_MAX);

}  // namespace et_runner
