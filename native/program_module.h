// For an ExecuTorch release whose wheel ships the runtime only inside its Python binding (1.3 and
// 1.4, docs/compatibility.md): the part of executorch::extension::Module that et_runner uses,
// built on the runtime's own Program and Method, with the runtime's headers alone. Those wheels
// ship no extension/module, data loader or .ptd map, so the program is mapped here, a .ptd is
// read through program_check's checked reader, and planned memory is allocated as Module's
// share_memory_arenas does: one buffer per index, as large as any method needs, for every method.
#pragma once

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/executor/program.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace et_runner {

class ProgramModule {
 public:
  enum class LoadMode { Mmap };
  // pte and its .ptd files, as et_runner names them; share_arenas as Module's share_memory_arenas.
  ProgramModule(const std::string& pte, const std::vector<std::string>& data, bool share_arenas);
  ~ProgramModule();

  executorch::runtime::Error load(executorch::runtime::Program::Verification verification);
  executorch::runtime::Result<std::unordered_set<std::string>> method_names();
  executorch::runtime::Result<executorch::runtime::MethodMeta> method_meta(const std::string& name);
  executorch::runtime::Error load_method(const std::string& name);
  executorch::runtime::Result<std::vector<executorch::runtime::EValue>> execute(
      const std::string& name, const std::vector<executorch::runtime::EValue>& inputs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace et_runner
