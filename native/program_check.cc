#include "native/program_check.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/kernel/operator_registry.h>

#include <cstring>

#include "native/etvals.h"

#ifndef ET_LIBS_PREFIX  // the label prefix of the library targets, for the message
#define ET_LIBS_PREFIX "@torch_export_venv//executorch:"
#endif

namespace rt = executorch::runtime;

namespace et_runner {
namespace {

struct Flat {  // just enough of the flatbuffers format to walk tables, vectors and strings
  const std::string& b;
  uint32_t u32(size_t at) const { uint32_t v; memcpy(&v, b.data() + at, 4); return v; }
  size_t deref(size_t at) const { return at + u32(at); }
  size_t field(size_t table, int index) const {  // the field's position, 0 when absent
    int32_t back;
    uint16_t vsize, off;
    memcpy(&back, b.data() + table, 4);
    size_t vtable = table - back;
    memcpy(&vsize, b.data() + vtable, 2);
    if (4 + 2 * index >= vsize) return 0;
    memcpy(&off, b.data() + vtable + 4 + 2 * index, 2);
    return off ? table + off : 0;
  }
  std::string str(size_t at) const { size_t s = deref(at); return b.substr(s + 4, u32(s)); }
};

std::string library_for(const std::string& what, const std::set<std::string>& namespaces) {
  auto ns = what.substr(0, what.find("::"));
  std::string lib = ns == "quantized_decomposed" ? "kernels_quantized"
                    : ns == "aten" || ns == "dim_order_ops" ? "kernels_optimized"
                    : what == "XnnpackBackend" ? "backend_xnnpack" : "";
  if (lib.empty()) return "the library that registers your " + ns + ":: kernels (the ExecuTorch wheel has none)";
  if (lib.rfind("kernels", 0) == 0 && namespaces.count(ns))
    return "a kernel library that has it: " + lib + " is linked and lacks it (a selective build?)";
  return ET_LIBS_PREFIX + lib + " (libexecutorch_" + lib + ".so)";
}

}  // namespace

std::map<std::string, std::set<std::string>> program_operators(const std::string& pte) {
  std::string head = slurp(pte, 64);
  uint64_t size = SIZE_MAX;  // the extended header "eh00" at 8 says how long the flatbuffer is
  if (head.size() >= 24 && head.compare(8, 4, "eh00") == 0) memcpy(&size, head.data() + 16, 8);
  std::string b = slurp(pte, size);
  Flat f{b};
  std::map<std::string, std::set<std::string>> result;
  size_t program = f.deref(0), plans = f.deref(f.field(program, 1));  // Program.execution_plan
  for (uint32_t i = 0; i < f.u32(plans); ++i) {
    size_t plan = f.deref(plans + 4 + 4 * i), ops_field = f.field(plan, 6);  // .operators
    auto& ops = result[f.str(f.field(plan, 0))];                               // .name
    if (!ops_field) continue;
    size_t ops_vec = f.deref(ops_field);
    for (uint32_t k = 0; k < f.u32(ops_vec); ++k) {
      size_t op = f.deref(ops_vec + 4 + 4 * k), overload = f.field(op, 1);
      std::string o = overload ? f.str(overload) : "";
      ops.insert(f.str(f.field(op, 0)) + (o.empty() ? "" : "." + o));
    }
  }
  return result;
}

std::string missing(executorch::extension::Module& module, const std::string& pte,
                    const std::set<std::string>& methods) {
  std::set<std::string> kernels, namespaces;
  for (const auto& k : rt::get_registered_kernels()) {
    std::string name = k.name_;
    kernels.insert(name), namespaces.insert(name.substr(0, name.find("::")));
  }
  for (const auto& [method, ops] : program_operators(pte)) {
    if (!methods.count(method)) continue;
    for (const auto& op : ops)
      if (!kernels.count(op))
        return "method \"" + method + "\" needs operator " + op + ", which no linked library registers; link " +
               library_for(op, namespaces);
    auto meta = module.method_meta(method);
    for (size_t i = 0; meta.ok() && i < meta->num_backends(); ++i) {
      std::string backend = meta->get_backend_name(i).get();
      if (!rt::get_backend_class(backend.c_str()))
        return "method \"" + method + "\" is delegated to " + backend + ", which is not registered; link " +
               library_for(backend, namespaces);
    }
  }
  return "";
}

}  // namespace et_runner
