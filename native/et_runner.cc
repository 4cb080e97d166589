// et_runner: runs a .pte (and its .ptd files) in ExecuTorch's native runtime.
//
//   et_runner PROGRAM.pte [--data W.ptd]... [--call METHOD[=IN.etvals[:OUT.etvals]]]...
//             [--bench [--warmup N] [--iterations M]] [--table] [--json REPORT.json]
//             [--generate PREFILL[,DECODE]=PROMPT.etvals[:TOKENS.etvals] --max-new-tokens N]
//             [--etdump F.etdp [--debug-buffer F.bin --debug-size BYTES]] [--check] [--kernels]
//             [--deadline SECONDS] [--one-thread]
//
// The calls run in order on one loaded program, so methods that share state (a KV cache)
// see each other's writes. A call without inputs gets synthetic ones at the method's
// largest shapes. --bench repeats the whole sequence (warm-up, then timed iterations).
// --generate decodes greedily: PREFILL on the prompt (token by token if it takes one token per
// call), then DECODE (default: the same method) once per new token; with --bench, warm-up +
// iterations generations, medians. Before any method loads, every operator and delegate the
// program names is checked against the linked libraries; a missing one fails in one line.
// stdout's last line is the report as JSON (load time, first call, p50/p90/min per method,
// planned memory per method, peak RSS).
//
// Files are hostile until checked: programs load with the runtime's full verification
// (InternalConsistency), the runner checks every size and offset it reads itself, and it runs
// under a supervisor (supervisor.h) that turns a crash inside the runtime, or a run past its
// --deadline, into one line. Any
// failure is one line on stderr, "et_runner: ...", with the runtime's first error appended; the
// runtime's own log lines are printed after a run that succeeds (as they come with
// ET_RUNNER_VERBOSE, which also shows its Info lines).
//
// Under valgrind's callgrind, the runner marks its phases with callgrind's client requests: a
// dump named "load" when the program and its methods are loaded (process start included), and
// one named "call METHOD" for each call of the first round, counted alone. --one-thread runs
// every kernel on the calling thread (ExecuTorch's NoThreadPoolGuard), so that a count does not
// depend on how a thread pool shared the work (exporter/actions/instructions.py).
#ifndef ET_RUNNER_PROGRAM_API
#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/module/module.h>
#endif
#include <executorch/extension/tensor/tensor.h>
#include <executorch/extension/threadpool/threadpool_guard.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/platform.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "native/etvals.h"
#include "native/program_check.h"
#include "native/supervisor.h"

// Debian's valgrind package ships the client requests (./bazelw installs it); without them the
// marks are no-ops, and the instruction counts fail in one line naming the missing dumps.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)
#endif

using executorch::aten::ScalarType;
#ifdef ET_RUNNER_PROGRAM_API  // a release whose wheel ships no extension/module (program_module.h)
#include "native/program_module.h"
using Module = et_runner::ProgramModule;
#else
using executorch::extension::Module;
#endif
using executorch::runtime::Program;
using executorch::runtime::EValue;
using namespace et_runner;
namespace rt = executorch::runtime;

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

std::vector<std::string> held_log;        // the runtime's log lines, printed after a run that succeeds
std::vector<std::string> runtime_errors;  // its Error and Fatal messages, for the failure's one line

// The runtime's log without its Info lines (the thread pool's CPU probing), unless asked. The
// other lines wait for the end of the run: a failure is one line, which names the first error.
void log_message(et_timestamp_t, et_pal_log_level_t level, const char* file, const char*, size_t line,
                 const char* message, size_t) {
  bool verbose = getenv("ET_RUNNER_VERBOSE");
  if (level == kInfo && !verbose) return;
  const char* base = strrchr(file, '/');
  char text[1200];
  snprintf(text, sizeof text, "%c executorch:%s:%zu] %s", static_cast<char>(level), base ? base + 1 : file, line,
           message);
  if (verbose) fprintf(stderr, "%s\n", text);
  else held_log.push_back(text);
  if (level == kError || level == kFatal) runtime_errors.push_back(message), note_error(message);
}

std::string error_text(rt::Error e) {  // "error 35 (InvalidProgram)"
  std::string name = rt::to_string(e);
  return "error " + std::to_string(static_cast<int>(e)) + " (" + name.substr(name.rfind(':') + 1) + ")";
}

// "m.pte" or "m.pte with its data w.ptd": what a load names when it fails.
std::string program_text(const std::string& pte, const std::vector<std::string>& data) {
  std::string text = pte;
  for (size_t i = 0; i < data.size(); ++i) text += (i ? ", " : " with its data ") + data[i];
  return text;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

struct Call { std::string method, inputs, outputs; };

Call parse_call(const std::string& spec) {  // METHOD[=IN[:OUT]]
  auto eq = spec.find('='), colon = spec.find(':', eq);
  if (eq == std::string::npos) return {spec, "", ""};
  return {spec.substr(0, eq), spec.substr(eq + 1, colon - eq - 1), colon == std::string::npos ? "" : spec.substr(colon + 1)};
}

// Inputs at the method's largest shapes: a fixed pattern for floats, zeros otherwise.
std::vector<Value> synthetic_inputs(Module& module, const std::string& method) {
  auto meta = module.method_meta(method);
  if (!meta.ok()) fail("the program has no method \"" + method + "\"");
  std::vector<Value> values(meta->num_inputs());
  for (size_t i = 0; i < values.size(); ++i) {
    Value& v = values[i];
    auto tag = meta->input_tag(i);
    if (!tag.ok()) fail("method \"" + method + "\" has an unreadable input " + std::to_string(i));
    if (*tag != rt::Tag::Tensor) { v.kind = 'I', v.bytes.assign(8, '\0'); continue; }
    auto tensor_meta = meta->input_tensor_meta(i);
    if (!tensor_meta.ok()) fail("method \"" + method + "\" has an unreadable input " + std::to_string(i));
    auto t = *tensor_meta;
    v.dtype = static_cast<uint8_t>(t.scalar_type()), v.dims.assign(t.sizes().begin(), t.sizes().end());
    v.bytes.assign(t.nbytes(), '\0');
    if (t.scalar_type() == ScalarType::Float)
      for (size_t k = 0; k < t.nbytes() / 4; ++k) reinterpret_cast<float*>(&v.bytes[0])[k] = (k % 17) / 8.0f - 1;
  }
  return values;
}

// where: what the failure names, "m.pte" or "m.pte on in.etvals".
std::vector<EValue> run(Module& module, const std::string& method, const std::vector<EValue>& in, const std::string& where) {
  auto out = module.execute(method, in);
  if (!out.ok()) fail("method \"" + method + "\" of " + where + " failed with " + error_text(out.error()));
  return *out;
}

int64_t argmax_last(const std::vector<EValue>& outputs) {  // logits [1, T, vocab], float
  if (outputs.empty() || !outputs[0].isTensor() || outputs[0].toTensor().scalar_type() != ScalarType::Float ||
      outputs[0].toTensor().dim() < 1 || outputs[0].toTensor().numel() < 1)
    fail("--generate needs a method whose first output is float logits [1, T, vocab]");
  const auto& t = outputs[0].toTensor();
  int64_t vocab = t.size(t.dim() - 1);
  const float* row = t.const_data_ptr<float>() + t.numel() - vocab;
  return std::max_element(row, row + vocab) - row;
}

long peak_rss_kb() {  // VmHWM: getrusage's ru_maxrss survives exec, so it reports a big parent's peak
  std::ifstream proc("/proc/self/status");
  std::string status(std::istreambuf_iterator<char>(proc), {});
  auto at = status.find("VmHWM:");
  return at == std::string::npos ? -1 : std::stol(status.substr(at + 6));
}

// The CPU this process sees, as a JSON object: what XNNPACK picks its kernels by. Under valgrind
// it is the CPU valgrind presents (its CPUID is emulated), not the host's.
std::string cpu_json() {
#if defined(__x86_64__)
  unsigned a, b, c, d, vendor[3];
  __cpuid(0, a, vendor[0], vendor[2], vendor[1]);
  unsigned max_leaf = a;
  __cpuid(1, a, b, c, d);
  unsigned base = (a >> 8) & 0xf, family = base + (base == 0xf ? (a >> 20) & 0xff : 0);
  unsigned model = ((a >> 4) & 0xf) | (base == 6 || base == 0xf ? ((a >> 16) & 0xf) << 4 : 0);
  bool fma = (c >> 12) & 1, avx2 = false, avx512f = false;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1;
  }
  std::ostringstream out;
  out << std::boolalpha << "{\"vendor\":\"" << std::string(reinterpret_cast<char*>(vendor), 12) << "\",\"family\":" << family
      << ",\"model\":" << model << ",\"fma\":" << fma << ",\"avx2\":" << avx2 << ",\"avx512f\":" << avx512f << "}";
  return out.str();
#else
  return "null";
#endif
}

void flush_log() {  // after a run that succeeds, the runtime's lines it held back
  for (const auto& line : held_log) fprintf(stderr, "%s\n", line.c_str());
  held_log.clear();
}

// What --generate needs of a method: [1, T] token ids and [T] (or [1]) positions in, logits out.
bool positions_are_one_start(Module& module, const std::string& method) {
  auto meta = module.method_meta(method);
  if (!meta.ok() || meta->num_inputs() < 2) fail("--generate needs methods with two inputs, tokens and positions; \"" + method + "\" is not one");
  auto positions = meta->input_tensor_meta(1);
  if (!positions.ok() || positions->sizes().size() != 1) fail("--generate: input 1 of \"" + method + "\" is not a 1-D tensor of positions");
  return positions->sizes()[0] == 1;
}

// How many tokens one call of a --generate method takes at most: 1 for a program of static
// shapes (an OpenVINO llm_program), which prefills a prompt token by token, as ExecuTorch's
// TextLLMRunner does when enable_dynamic_shape is false.
int64_t max_tokens_per_call(Module& module, const std::string& method) {
  auto tokens = module.method_meta(method)->input_tensor_meta(0);
  if (!tokens.ok() || tokens->sizes().size() != 2) fail("--generate: input 0 of \"" + method + "\" is not [1, T] token ids");
  return tokens->sizes()[1];
}

// The command line.
struct Options {
  std::string pte, json, etdump_path, debug_path;
  std::vector<std::string> data;
  std::vector<Call> calls;
  Call gen;
  bool bench = false, check = false, table = false, precheck = true, share_arenas = true, list_kernels = false;
  bool one_thread = false;
  int warmup = 3, iterations = 10, max_new = 16, deadline = 0;
  size_t debug_size = 0;
};

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { if (++i >= argc) fail(a + " needs a value"); return argv[i]; };
    if (a == "--data") o.data.push_back(next());
    else if (a == "--call") o.calls.push_back(parse_call(next()));
    else if (a == "--generate") o.gen = parse_call(next());
    else if (a == "--max-new-tokens") o.max_new = std::stoi(next());
    else if (a == "--bench") o.bench = true;
    else if (a == "--warmup") o.warmup = std::stoi(next());
    else if (a == "--iterations") o.iterations = std::stoi(next());
    else if (a == "--table") o.table = true;
    else if (a == "--json") o.json = next();
    else if (a == "--check") o.check = true;
    else if (a == "--kernels") return o.list_kernels = true, o;  // what the linked libraries registered
    else if (a == "--etdump") o.etdump_path = next();
    else if (a == "--debug-buffer") o.debug_path = next();
    else if (a == "--debug-size") o.debug_size = std::stoull(next());
    else if (a == "--no-precheck") o.precheck = false;          // to see the runtime's own error
    else if (a == "--no-shared-arenas") o.share_arenas = false;  // to see why they are needed
    else if (a == "--deadline") o.deadline = std::stoi(next());  // the supervisor's (supervisor.h)
    else if (a == "--one-thread") o.one_thread = true;
    else if (o.pte.empty() && a[0] != '-') o.pte = a;
    else fail("unknown argument " + a + " (usage at the top of native/et_runner.cc)");
  }
  if (o.pte.empty()) fail("usage: et_runner PROGRAM.pte [--data W.ptd] --call METHOD[=IN[:OUT]] ...");
  return o;
}

void print_kernels() {
  for (const auto& k : rt::get_registered_kernels()) printf("%s\n", k.name_);
  for (size_t b = 0; b < rt::get_num_registered_backends(); ++b) printf("backend %s\n", rt::get_backend_name(b).get());
}

// The program, opened (not yet loaded), with its ETDump tracer if one is asked for.
struct Opened {
  std::unique_ptr<Module> module;
#ifdef ET_RUNNER_PROGRAM_API
  void* etdump = nullptr;
#else
  executorch::etdump::ETDumpGen* etdump = nullptr;
#endif
  std::vector<uint8_t> debug_buffer;
};

#ifdef ET_RUNNER_PROGRAM_API
Opened open_program(const Options& o) {
  if (!o.etdump_path.empty()) fail("--etdump needs ExecuTorch's ETDump, which this release's wheel does not ship (1.5 and later do)");
  Opened p;
  p.module = std::make_unique<Module>(o.pte, o.data, o.share_arenas);
  return p;
}
#else
Opened open_program(const Options& o) {
  Opened p;
  std::unique_ptr<executorch::etdump::ETDumpGen> tracer;
  p.debug_buffer.resize(o.debug_size);
  if (!o.etdump_path.empty()) {
    tracer = std::make_unique<executorch::etdump::ETDumpGen>();
    if (o.debug_size) {  // operators' outputs (and delegates' outputs) go to the debug buffer
      (void)tracer->set_debug_buffer({p.debug_buffer.data(), p.debug_buffer.size()});
      tracer->set_event_tracer_debug_level(rt::EventTracerDebugLogLevel::kIntermediateOutputs);
    }
  }
  p.etdump = tracer.get();
  // share_memory_arenas: the methods of one program use one set of planned arenas, so they
  // read and write one copy of the mutable buffers (share_mutable_buffers=True relies on it).
  p.module = std::make_unique<Module>(o.pte, o.data, Module::LoadMode::Mmap, std::move(tracer), nullptr, nullptr,
                                      o.share_arenas);
  return p;
}
#endif

// {key: .ptd} of the tensors the .ptd files name without a layout. The runtime follows a .ptd's
// offsets unchecked, so every .ptd is read here first.
std::map<std::string, std::string> check_ptds(const std::vector<std::string>& data) {
  std::map<std::string, std::string> keys_without_layout;
  for (const auto& ptd : data) {
    note_step("checking " + ptd);
    for (const auto& [key, has_layout] : ptd_entries(ptd))
      if (!has_layout) keys_without_layout[key] = ptd;
  }
  return keys_without_layout;
}

// --generate's methods: "PREFILL[,DECODE]", DECODE defaulting to PREFILL.
std::pair<std::string, std::string> generation_methods(const Call& gen) {
  auto comma = gen.method.find(',');
  std::string prefill = gen.method.substr(0, comma);
  return {prefill, comma == std::string::npos ? prefill : gen.method.substr(comma + 1)};
}

// The methods to load: those the calls and --generate use (every one with --check or no call),
// each checked to exist.
std::set<std::string> methods_to_load(const Options& o, Module& module) {
  std::set<std::string> methods;
  for (const Call& c : o.calls) methods.insert(c.method);
  if (!o.gen.method.empty()) {
    auto [prefill, decode] = generation_methods(o.gen);
    methods.insert(prefill), methods.insert(decode);
  }
  auto method_names = module.method_names();
  if (!method_names.ok()) fail("cannot read the method names of " + o.pte + ": " + error_text(method_names.error()));
  auto names = *method_names;
  if (o.check || methods.empty()) methods = {names.begin(), names.end()};
  for (const auto& m : methods)
    if (!names.count(m)) {
      std::string known;
      for (const auto& n : std::set<std::string>(names.begin(), names.end())) known += (known.empty() ? "" : ", ") + n;
      fail(o.pte + " has no method \"" + m + "\"; its methods: " + known);
    }
  return methods;
}

// Every operator and delegate the methods name must be registered, and every external tensor
// they read must have a layout in its .ptd: checked before any method loads.
void check_operators(const Options& o, const std::set<std::string>& methods,
                     std::map<std::string, std::string>& keys_without_layout) {
  note_step("checking the operators of " + o.pte);
  auto needs = program_needs(o.pte);  // also what the runtime's verification lets through and crashes on
  for (const auto& [method, need] : needs)  // the runtime reads these keys' layouts without a check
    for (const auto& key : need.external_tensors)
      if (methods.count(method) && keys_without_layout.count(key))
        fail(keys_without_layout[key] + ": corrupt .ptd: \"" + key + "\", which method \"" + method + "\" of " + o.pte +
             " reads, has no tensor layout");
  if (auto why = o.precheck ? missing(needs, methods) : ""; !why.empty()) fail(o.pte + ": " + why);
}

// Loads the program and its methods; returns the methods loaded.
std::set<std::string> load(const Options& o, Module& module) {
  auto keys_without_layout = check_ptds(o.data);
  note_step("loading " + program_text(o.pte, o.data));
  if (auto e = module.load(Program::Verification::InternalConsistency); e != rt::Error::Ok)
    fail("cannot load " + program_text(o.pte, o.data) + ": " + error_text(e) + "; is it a .pte? are its --data files given?");
  auto methods = methods_to_load(o, module);
  check_operators(o, methods, keys_without_layout);
  for (const auto& m : methods) {
    note_step("loading method \"" + m + "\" of " + program_text(o.pte, o.data));
    if (auto e = module.load_method(m); e != rt::Error::Ok)
      fail("cannot load method \"" + m + "\" of " + program_text(o.pte, o.data) + ": " + error_text(e) +
           (o.data.empty() ? "; weights in a .ptd need --data" : ""));
  }
  return methods;
}

// The calls' times: {method: [ms]} (timed iterations with --bench), and the first call's.
struct Timings {
  std::map<std::string, std::vector<double>> times;
  double first_ms = -1;
};

Timings run_calls(const Options& o, Module& module) {
  Timings t;
  const auto& calls = o.calls;
  std::vector<std::vector<Value>> held(calls.size());
  std::vector<std::vector<EValue>> inputs(calls.size());
  for (size_t k = 0; k < calls.size(); ++k) {
    note_step("reading the inputs of method \"" + calls[k].method + "\"" + (calls[k].inputs.empty() ? "" : " from " + calls[k].inputs));
    held[k] = calls[k].inputs.empty() ? synthetic_inputs(module, calls[k].method) : read_values(calls[k].inputs);
    inputs[k] = to_evalues(held[k]);
  }
  int rounds = o.bench ? 1 + o.warmup + o.iterations : 1;
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < calls.size(); ++k) {
      std::string on = calls[k].inputs.empty() ? "" : " on " + calls[k].inputs;
      if (r == 0) note_step("running method \"" + calls[k].method + "\" of " + o.pte + on);
      std::string dump = "call " + calls[k].method;  // made before the count, alive until callgrind reads it
      if (r == 0) CALLGRIND_ZERO_STATS;  // a first-round call is counted alone
      double s = now_ms();
      auto out = run(module, calls[k].method, inputs[k], o.pte + on);
      double ms = now_ms() - s;
      if (r == 0) CALLGRIND_DUMP_STATS_AT(dump.c_str());
      if (t.first_ms < 0) t.first_ms = ms;
      if (r == 0 && !calls[k].outputs.empty()) write_values(calls[k].outputs, out);
      if (r > o.warmup || !o.bench) t.times[calls[k].method].push_back(ms);
    }
  }
  return t;
}

// --generate's prompt: int64 token ids, the first value of its .etvals file.
std::vector<int64_t> read_prompt(const Call& gen) {
  note_step("reading the prompt " + gen.inputs);
  auto prompt = read_values(gen.inputs);
  if (prompt.empty() || prompt[0].kind != 'T' || prompt[0].dtype != static_cast<uint8_t>(ScalarType::Long) ||
      prompt[0].bytes.empty())
    fail(gen.inputs + ": --generate needs a prompt of int64 token ids as its first value");
  std::vector<int64_t> tokens(prompt[0].bytes.size() / 8);
  memcpy(tokens.data(), prompt[0].bytes.data(), prompt[0].bytes.size());
  return tokens;
}

// Greedy generation: PREFILL on the prompt, then DECODE once per new token; appends its figures
// to the report and the table.
void generate(const Options& o, Module& module, std::ostringstream& report, std::ostringstream& text) {
  auto tokens = read_prompt(o.gen);
  auto [prefill, decode] = generation_methods(o.gen);
  // The second input: [T] positions (the LLM runner's input_pos), or a [1] start.
  std::map<std::string, bool> start_only;
  for (const auto& m : {prefill, decode}) start_only[m] = positions_are_one_start(module, m);
  note_step("generating with \"" + prefill + "\" and \"" + decode + "\" of " + o.pte);
  auto step = [&](const std::string& method, std::vector<int64_t> ids, int64_t start) {
    std::vector<int64_t> pos(start_only[method] ? 1 : ids.size());
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = start + i;
    auto t = executorch::extension::from_blob(ids.data(), {1, static_cast<int>(ids.size())}, ScalarType::Long);
    auto p = executorch::extension::from_blob(pos.data(), {static_cast<int>(pos.size())}, ScalarType::Long);
    return argmax_last(run(module, method, {*t, *p}, o.pte + " on the prompt " + o.gen.inputs));
  };
  bool one_token_prefill = tokens.size() > 1 && max_tokens_per_call(module, prefill) == 1;
  std::vector<int64_t> generated;
  std::vector<double> prefills, decodes;  // with --bench: warmup + iterations generations
  for (int r = 0; r < (o.bench ? o.warmup + o.iterations : 1); ++r) {
    double s = now_ms();
    if (one_token_prefill) {
      for (size_t i = 0; i < tokens.size(); ++i) generated = {step(prefill, {tokens[i]}, static_cast<int64_t>(i))};
    } else {
      generated = {step(prefill, tokens, 0)};
    }
    double p = now_ms() - s;
    s = now_ms();
    for (int i = 1; i < o.max_new; ++i) generated.push_back(step(decode, {generated.back()}, tokens.size() + i - 1));
    if (!o.bench || r >= o.warmup) prefills.push_back(p), decodes.push_back(now_ms() - s);
  }
  double prefill_ms = percentile(prefills, 0.5), decode_ms = percentile(decodes, 0.5);  // medians
  double prefill_tps = tokens.size() * 1000.0 / prefill_ms;
  double decode_tps = (generated.size() - 1) * 1000.0 / decode_ms;
  auto out = executorch::extension::from_blob(generated.data(), {static_cast<int>(generated.size())}, ScalarType::Long);
  if (!o.gen.outputs.empty()) write_values(o.gen.outputs, {EValue(*out)});
  report << ",\"generate\":{\"prompt_tokens\":" << tokens.size() << ",\"new_tokens\":" << generated.size()
         << ",\"prefill_ms\":" << prefill_ms << ",\"prefill_tokens_per_s\":" << prefill_tps
         << ",\"decode_ms\":" << decode_ms << ",\"decode_tokens_per_s\":" << decode_tps
         << ",\"runs\":" << decodes.size() << "}";
  text << "generate (median of " << decodes.size() << "): " << tokens.size() << " prompt tokens in " << prefill_ms << " ms (" << prefill_tps
       << " tok/s), " << generated.size() - 1 << " decoded in " << decode_ms << " ms (" << decode_tps << " tok/s)\n";
}

// Each method's calls, times and planned memory, into the report and the table.
void method_table(Module& module, const std::set<std::string>& methods, Timings& timings, std::ostringstream& report,
                  std::ostringstream& text) {
  report << ",\"methods\":{";
  char line[200];
  snprintf(line, sizeof line, "%-14s %6s %10s %10s %10s %14s\n", "method", "calls", "p50 ms", "p90 ms", "min ms", "planned bytes");
  text << line;
  const char* sep = "";
  for (const auto& m : methods) {
    auto meta = module.method_meta(m);
    size_t planned = 0;
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) planned += *meta->memory_planned_buffer_size(i);
    const auto& t = timings.times[m];
    report << sep << "\"" << m << "\":{\"planned_bytes\":" << planned << ",\"calls\":" << t.size(), sep = ",";
    if (!t.empty())
      report << ",\"p50_ms\":" << percentile(t, 0.5) << ",\"p90_ms\":" << percentile(t, 0.9) << ",\"min_ms\":" << percentile(t, 0);
    report << "}";
    snprintf(line, sizeof line, "%-14s %6zu %10.3f %10.3f %10.3f %14zu\n", m.c_str(), t.size(), t.empty() ? 0 : percentile(t, 0.5),
             t.empty() ? 0 : percentile(t, 0.9), t.empty() ? 0 : percentile(t, 0), planned);
    text << line;
  }
  report << "}";
}

// The ETDump and its debug buffer, if asked for.
void write_etdump(const Options& o, Opened& p) {
#ifndef ET_RUNNER_PROGRAM_API
  if (!p.etdump) return;
  auto result = p.etdump->get_etdump_data();
  if (!result.buf) fail("the ETDump is empty");
  std::ofstream(o.etdump_path, std::ios::binary).write(static_cast<const char*>(result.buf), result.size);
  free(result.buf);
  if (!o.debug_path.empty())
    std::ofstream(o.debug_path, std::ios::binary).write(reinterpret_cast<char*>(p.debug_buffer.data()), o.debug_size);
#endif
}

int runner_main(int argc, char** argv) try {
  Options o = parse_args(argc, argv);
  if (o.list_kernels) return print_kernels(), 0;
  rt::register_pal(rt::PalImpl::create(log_message, __FILE__));
  // On this thread, which loads the methods (XNNPACK takes its thread pool then) and calls them.
  if (o.one_thread) executorch::extension::threadpool::NoThreadPoolGuard::set_enabled(true);
  double t0 = now_ms();
  Opened p = open_program(o);
  auto methods = load(o, *p.module);
  double load_ms = now_ms() - t0;
  CALLGRIND_DUMP_STATS_AT("load");
  if (o.check) return printf("%s: %zu methods load; every operator and delegate is registered\n", o.pte.c_str(), methods.size()), flush_log(), 0;

  Timings timings = run_calls(o, *p.module);
  std::ostringstream report, text;
  report << "{\"program\":\"" << o.pte << "\",\"load_ms\":" << load_ms << ",\"first_call_ms\":" << timings.first_ms;
  text << "load " << load_ms << " ms, first call " << timings.first_ms << " ms\n";
  if (!o.gen.method.empty()) generate(o, *p.module, report, text);
  method_table(*p.module, methods, timings, report, text);
  long rss = peak_rss_kb();
  report << ",\"peak_rss_kb\":" << rss << ",\"cpu\":" << cpu_json() << "}";
  text << "peak RSS " << rss / 1024.0 << " MiB\n";
  write_etdump(o, p);
  if (!o.json.empty()) std::ofstream(o.json) << report.str() << "\n";
  if (o.table) printf("%s", text.str().c_str());
  printf("%s\n", report.str().c_str());
  flush_log();
  return 0;
} catch (const std::exception& e) {  // one line, with the runtime's first error if it logged one
  std::string line = e.what();
  if (!runtime_errors.empty()) line += " (the runtime: " + runtime_errors.front() + ")";
  fprintf(stderr, "et_runner: %s\n", printable(line).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;  // the supervisor's deadline and the program it names; bad arguments fail in the child
  try {
    o = parse_args(argc, argv);
  } catch (const std::exception&) {
  }
  return et_runner::supervise([&] { return runner_main(argc, argv); }, o.deadline, o.pte);
}
