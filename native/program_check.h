// What a program needs from the linked libraries, checked before any method loads.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace et_runner {

// What a method needs from the linked libraries, from the .pte's flatbuffer (schema/program.fbs):
// ExecuTorch has no API for a program's operator list, and a method's load stops (after
// logging each one) with Error::OperatorMissing but no name in the error itself.
struct MethodNeeds {
  std::set<std::string> operators;  // "namespace::op.overload"
  std::set<std::string> backends;   // delegates' backend ids
  std::set<std::string> external_tensors;  // keys of constant tensors whose data is in a .ptd
};

// {method: what it needs}. Throws (one line naming the file) when the walk finds the program
// inconsistent in a way the runtime's verification lets through and then crashes on: a kernel
// call whose operator index is out of range, an operator without a name or with a name longer
// than the runtime's buffer, a delegate without a backend id.
std::map<std::string, MethodNeeds> program_needs(const std::string& pte);

// {key: has a tensor layout} of a .ptd, after checking that its header, flatbuffer, segments,
// names and layouts are consistent with each other and the file; throws (one line naming the
// file) when not. Run before the runtime opens it: the runtime does not verify a .ptd.
std::map<std::string, bool> ptd_entries(const std::string& ptd);

// One tensor (or blob) of a .ptd: where its bytes lie in the file, and its layout if it has one.
struct PtdTensor {
  uint64_t offset = 0, size = 0;
  bool has_layout = false;
  int8_t scalar_type = 0;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
};

// {key: PtdTensor} of a .ptd, checked as ptd_entries checks it: for a runtime whose release ships
// no .ptd reader (program_module.h).
std::map<std::string, PtdTensor> ptd_tensors(const std::string& ptd);

// "" when every operator and delegate of `methods` is registered; else one sentence naming
// the first missing one and the library to link.
std::string missing(const std::map<std::string, MethodNeeds>& program, const std::set<std::string>& methods);

}  // namespace et_runner
