#include "native/program_check.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/kernel/operator_registry.h>

#include <cstring>
#include <stdexcept>

#include "native/etvals.h"

#ifndef ET_LIBS_PREFIX  // the label prefix of the library targets, for the message
#define ET_LIBS_PREFIX "@torch_export_venv//executorch:"
#endif

namespace rt = executorch::runtime;

namespace et_runner {
namespace {

// Just enough of the flatbuffers format to walk tables, vectors and strings. The runtime has
// verified the flatbuffer before this runs (InternalConsistency), but every position is still
// checked against the buffer here: this reader must not trust what it did not verify itself.
struct Flat {
  const std::string& b;
  const std::string& pte;
  [[noreturn]] void corrupt(const std::string& what, size_t at) const {
    throw std::runtime_error(pte + ": corrupt program: " + what + " at byte " + std::to_string(at) +
                             " lies outside its " + std::to_string(b.size()) + "-byte flatbuffer");
  }
  void need(size_t at, size_t n, const char* what) const {
    if (at > b.size() || n > b.size() - at) corrupt(what, at);
  }
  template <typename T>
  T get(size_t at) const { need(at, sizeof(T), "a value"); T v; memcpy(&v, b.data() + at, sizeof(T)); return v; }
  uint32_t u32(size_t at) const { return get<uint32_t>(at); }
  template <typename T>
  T scalar(size_t table, int index) const {  // a scalar field, 0 (the schemas' default) when absent
    size_t at = field(table, index, sizeof(T));
    return at ? get<T>(at) : 0;
  }
  size_t deref(size_t at) const {
    size_t target = at + u32(at);
    need(target, 4, "an offset's target");
    return target;
  }
  size_t field(size_t table, int index, size_t bytes = 4) const {  // the field's position, 0 when absent
    int32_t back;
    uint16_t vsize, off;
    need(table, 4, "a table");
    memcpy(&back, b.data() + table, 4);
    int64_t vtable = static_cast<int64_t>(table) - back;
    if (vtable < 0) corrupt("a vtable", table);
    need(vtable, 4, "a vtable");
    memcpy(&vsize, b.data() + vtable, 2);
    need(vtable, vsize, "a vtable");
    if (4 + 2 * index + 2 > vsize) return 0;
    memcpy(&off, b.data() + vtable + 4 + 2 * index, 2);
    if (!off) return 0;
    need(table + off, bytes, "a field");
    return table + off;
  }
  size_t vector(size_t at, size_t element_bytes, uint32_t* length) const {  // the first element's position
    if (!at) return *length = 0, 0;  // an absent field: an empty vector
    size_t v = deref(at);
    *length = u32(v);
    need(v + 4, static_cast<uint64_t>(*length) * element_bytes, "a vector");
    return v + 4;
  }
  std::string str(size_t at) const {
    uint32_t length;
    size_t s = vector(at, 1, &length);
    if (at) need(s, length + 1ull, "a string's end");  // the runtime reads strings up to their NUL
    if (at && b[s + length] != '\0') corrupt("an unterminated string", s);
    return b.substr(s, length);
  }
};

std::string library_for(const std::string& what, const std::set<std::string>& namespaces) {
  auto ns = what.substr(0, what.find("::"));
  std::string lib = ns == "quantized_decomposed" ? "kernels_quantized"
                    : ns == "aten" || ns == "dim_order_ops" ? "kernels_optimized"
                    : what == "XnnpackBackend" ? "backend_xnnpack" : "";
  if (ns == "llama")  // llm_program's llm_ops: the wheel has them only beside libtorch and libpython
    return "ExecuTorch's LLM operators (libcustom_ops_aot_lib.so): run it in //native:et_runner_llm_ops";
  if (lib.empty()) return "the library that registers your " + ns + ":: kernels (the ExecuTorch wheel has none)";
  if (lib.rfind("kernels", 0) == 0 && namespaces.count(ns))
    return "a kernel library that has it: " + lib + " is linked and lacks it (a selective build?)";
  return ET_LIBS_PREFIX + lib + " (libexecutorch_" + lib + ".so)";
}

}  // namespace

// The runtime's buffer for "name.overload" when it looks a kernel up (method.cpp, 1.5.1).
constexpr size_t kMaxOperatorName = 99;

std::map<std::string, MethodNeeds> program_needs(const std::string& pte) {
  std::string head = slurp(pte, 64);
  uint64_t size = SIZE_MAX;  // the extended header "eh00" at 8 says how long the flatbuffer is
  if (head.size() >= 24 && head.compare(8, 4, "eh00") == 0) memcpy(&size, head.data() + 16, 8);
  std::string b = slurp(pte, size);
  Flat f{b, pte};
  auto invalid = [&](const std::string& method, const std::string& what) {
    throw std::runtime_error(pte + ": corrupt program: method \"" + method + "\" " + what);
  };
  std::map<std::string, MethodNeeds> result;
  uint32_t plans_count;
  size_t program = f.deref(0), plans = f.vector(f.field(program, 1), 4, &plans_count);  // Program.execution_plan
  for (uint32_t i = 0; i < plans_count; ++i) {
    size_t plan = f.deref(plans + 4 * i);
    std::string name = f.str(f.field(plan, 0));  // .name
    auto& needs = result[name];
    uint32_t ops_count, chains_count, delegates_count;
    size_t ops = f.vector(f.field(plan, 6), 4, &ops_count);  // .operators
    for (uint32_t k = 0; k < ops_count; ++k) {
      size_t op = f.deref(ops + 4 * k), op_name = f.field(op, 0), overload = f.field(op, 1);
      if (!op_name) invalid(name, "has an operator without a name");
      std::string o = overload ? f.str(overload) : "";
      std::string full = f.str(op_name) + (o.empty() ? "" : "." + o);
      if (full.size() > kMaxOperatorName) invalid(name, "has an operator name longer than the runtime's limit");
      needs.operators.insert(full);
    }
    // Every kernel call must name one of those operators: the runtime resolves an instruction's
    // operator by this index, and a call out of range leaves a null kernel it then calls.
    size_t chains = f.vector(f.field(plan, 5), 4, &chains_count);  // .chains
    for (uint32_t c = 0; c < chains_count; ++c) {
      uint32_t instructions_count;
      size_t instructions = f.vector(f.field(f.deref(chains + 4 * c), 2), 4, &instructions_count);
      for (uint32_t k = 0; k < instructions_count; ++k) {
        size_t instruction = f.deref(instructions + 4 * k), args = f.field(instruction, 1);
        if (f.scalar<uint8_t>(instruction, 0) != 1 || !args) continue;  // 1: KernelCall
        int32_t op_index = f.scalar<int32_t>(f.deref(args), 0);
        if (op_index < 0 || static_cast<uint32_t>(op_index) >= ops_count)
          invalid(name, "calls operator " + std::to_string(op_index) + " of " + std::to_string(ops_count));
      }
    }
    // Constant tensors whose data is in a .ptd (EXTERNAL, no allocation_info): their keys.
    uint32_t values_count;
    size_t values = f.vector(f.field(plan, 2), 4, &values_count);  // .values
    for (uint32_t v = 0; v < values_count; ++v) {
      size_t value = f.deref(values + 4 * v), val = f.field(value, 1);
      if (f.scalar<uint8_t>(value, 0) != 5 || !val) continue;  // 5: Tensor
      size_t tensor = f.deref(val), extra = f.field(tensor, 9);  // Tensor.extra_tensor_info
      if (!extra || f.field(tensor, 6)) continue;                // allocation_info: a planned tensor
      size_t info = f.deref(extra), key = f.field(info, 1);
      if (f.scalar<uint8_t>(info, 2) == 1 && key) needs.external_tensors.insert(f.str(key));  // 1: EXTERNAL
    }
    size_t delegates = f.vector(f.field(plan, 7), 4, &delegates_count);  // .delegates
    for (uint32_t d = 0; d < delegates_count; ++d) {
      size_t id = f.field(f.deref(delegates + 4 * d), 0);
      if (!id) invalid(name, "has a delegate without a backend id");
      needs.backends.insert(f.str(id));
    }
  }
  return result;
}

constexpr uint64_t kPtdHeaderBytes = 48;  // "FH01" at 8, u32 length, then four u64 (flat_tensor_header.h)

// Every offset and size of a .ptd (flat_tensor.fbs) checked: its header's regions against the
// file, each segment against the segment data, each name's segment index and string, and each
// tensor layout's scalar type, sizes and dim order. ExecuTorch 1.5.1 does not verify a .ptd's
// flatbuffer and follows its offsets as they are.
std::map<std::string, PtdTensor> ptd_tensors(const std::string& ptd) {
  std::string b = slurp(ptd);
  auto bad = [&](const std::string& what) { throw std::runtime_error(ptd + ": corrupt .ptd: " + what); };
  auto u64 = [&](size_t at) { uint64_t v; memcpy(&v, b.data() + at, 8); return v; };
  if (b.size() < kPtdHeaderBytes || b.compare(4, 4, "FT01") != 0 || b.compare(8, 4, "FH01") != 0)
    throw std::runtime_error(ptd + ": not a .ptd (no FT01 and FH01 header)");
  uint64_t fb_offset = u64(16), fb_size = u64(24), base = u64(32), data_size = u64(40);
  if (fb_offset > b.size() || fb_size > b.size() - fb_offset) bad("its header puts the flatbuffer past the end of the file");
  if (base > b.size() || data_size > b.size() - base) bad("its header puts the tensor data past the end of the file");
  std::string flat = b.substr(0, fb_offset + fb_size);
  Flat f{flat, ptd};
  size_t root = f.deref(0);
  uint32_t segment_count, name_count;
  size_t segments = f.vector(f.field(root, 1), 4, &segment_count);  // FlatTensor.segments
  if (!f.field(root, 1) || !f.field(root, 2)) bad("it has no segments or no named data");
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // each segment's (offset in the file, size)
  for (uint32_t i = 0; i < segment_count; ++i) {
    size_t segment = f.deref(segments + 4 * i);
    uint64_t offset = f.scalar<uint64_t>(segment, 0), size = f.scalar<uint64_t>(segment, 1);
    if (offset > data_size || size > data_size - offset) bad("segment " + std::to_string(i) + " lies past the end of the tensor data");
    spans.emplace_back(base + offset, size);
  }
  std::map<std::string, PtdTensor> entries;
  size_t names = f.vector(f.field(root, 2), 4, &name_count);  // FlatTensor.named_data
  for (uint32_t i = 0; i < name_count; ++i) {
    size_t entry = f.deref(names + 4 * i), key = f.field(entry, 0), layout = f.field(entry, 2);
    if (!key) bad("named data " + std::to_string(i) + " has no key");
    std::string name = f.str(key);
    uint32_t segment = f.scalar<uint32_t>(entry, 1);
    if (segment >= segment_count)
      bad("\"" + name + "\" names segment " + std::to_string(segment) + " of " + std::to_string(segment_count));
    PtdTensor& found = entries[name];
    found.offset = spans[segment].first, found.size = spans[segment].second, found.has_layout = layout != 0;
    if (!layout) continue;  // XNNPACK's weights have none; a tensor the program reads must (checked later)
    size_t table = f.deref(layout);
    if (!f.field(table, 1) || !f.field(table, 2)) bad("\"" + name + "\" has a layout without sizes or dim_order");
    if (!rt::isValid(static_cast<executorch::aten::ScalarType>(f.scalar<int8_t>(table, 0))))
      bad("\"" + name + "\" has scalar type " + std::to_string(f.scalar<int8_t>(table, 0)));
    uint32_t dims, order;
    size_t sizes = f.vector(f.field(table, 1), 4, &dims);
    size_t dim_order = f.vector(f.field(table, 2), 1, &order);
    if (dims != order) bad("\"" + name + "\" has " + std::to_string(dims) + " sizes and " + std::to_string(order) + " dim_order entries");
    for (uint32_t d = 0; d < dims; ++d) {
      if (f.get<int32_t>(sizes + 4 * d) < 0) bad("\"" + name + "\" has a negative size");
      if (f.get<uint8_t>(dim_order + d) >= dims) bad("\"" + name + "\" has an invalid dim_order");
      found.sizes.push_back(f.get<int32_t>(sizes + 4 * d)), found.dim_order.push_back(f.get<uint8_t>(dim_order + d));
    }
    found.scalar_type = f.scalar<int8_t>(table, 0);
  }
  return entries;
}

std::map<std::string, bool> ptd_entries(const std::string& ptd) {
  std::map<std::string, bool> entries;
  for (const auto& [key, tensor] : ptd_tensors(ptd)) entries[key] = tensor.has_layout;
  return entries;
}

std::string missing(const std::map<std::string, MethodNeeds>& program, const std::set<std::string>& methods) {
  std::set<std::string> kernels, namespaces;
  for (const auto& k : rt::get_registered_kernels()) {
    std::string name = k.name_;
    kernels.insert(name), namespaces.insert(name.substr(0, name.find("::")));
  }
  for (const auto& [method, needs] : program) {
    if (!methods.count(method)) continue;
    for (const auto& op : needs.operators)
      if (!kernels.count(op))
        return "method \"" + method + "\" needs operator " + op + ", which no linked library registers; link " +
               library_for(op, namespaces);
    for (const auto& backend : needs.backends)
      if (!rt::get_backend_class(backend.c_str()))
        return "method \"" + method + "\" is delegated to " + backend + ", which is not registered; link " +
               library_for(backend, namespaces);
  }
  return "";
}

}  // namespace et_runner
