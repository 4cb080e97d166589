// What a program needs from the linked libraries, checked before any method loads.
#pragma once
#include <executorch/extension/module/module.h>

#include <map>
#include <set>
#include <string>

namespace et_runner {

// {method: {"namespace::op.overload"}} from the .pte's flatbuffer (schema/program.fbs):
// ExecuTorch has no API for a program's operator list, and a method's load stops (after
// logging each one) with Error::OperatorMissing but no name in the error itself.
std::map<std::string, std::set<std::string>> program_operators(const std::string& pte);

// "" when every operator and delegate of `methods` is registered; else one sentence naming
// the first missing one and the library to link.
std::string missing(executorch::extension::Module& module, const std::string& pte,
                    const std::set<std::string>& methods);

}  // namespace et_runner
