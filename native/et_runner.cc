// et_runner: runs a .pte (and its .ptd files) in ExecuTorch's native runtime.
//
//   et_runner PROGRAM.pte [--data W.ptd]... [--call METHOD[=IN.etvals[:OUT.etvals]]]...
//             [--bench [--warmup N] [--iterations M]] [--table] [--json REPORT.json]
//             [--generate PREFILL[,DECODE]=PROMPT.etvals[:TOKENS.etvals] --max-new-tokens N]
//             [--etdump F.etdp [--debug-buffer F.bin --debug-size BYTES]] [--check] [--kernels]
//
// The calls run in order on one loaded program, so methods that share state (a KV cache)
// see each other's writes. A call without inputs gets synthetic ones at the method's
// largest shapes. --bench repeats the whole sequence (warm-up, then timed iterations).
// --generate decodes greedily: PREFILL on the prompt, then DECODE (default: the same
// method) once per new token; with --bench, warm-up + iterations generations, medians. Before any method loads, every operator and delegate the
// program names is checked against the linked libraries; a missing one fails in one line.
// stdout's last line is the report as JSON (load time, first call, p50/p90/min per method,
// planned memory per method, peak RSS).
#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/platform.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "native/etvals.h"
#include "native/program_check.h"

using executorch::aten::ScalarType;
using executorch::extension::Module;
using executorch::runtime::EValue;
using namespace et_runner;
namespace rt = executorch::runtime;

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

// The runtime's log without its Info lines (the thread pool's CPU probing), unless asked.
void log_message(et_timestamp_t, et_pal_log_level_t level, const char* file, const char*, size_t line,
                 const char* message, size_t) {
  if (level == kInfo && !getenv("ET_RUNNER_VERBOSE")) return;
  const char* base = strrchr(file, '/');
  fprintf(stderr, "%c executorch:%s:%zu] %s\n", static_cast<char>(level), base ? base + 1 : file, line, message);
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
    if (meta->input_tag(i).get() != rt::Tag::Tensor) { v.kind = 'I', v.bytes.assign(8, '\0'); continue; }
    auto t = meta->input_tensor_meta(i).get();
    v.dtype = static_cast<uint8_t>(t.scalar_type()), v.dims.assign(t.sizes().begin(), t.sizes().end());
    v.bytes.assign(t.nbytes(), '\0');
    if (t.scalar_type() == ScalarType::Float)
      for (size_t k = 0; k < t.nbytes() / 4; ++k) reinterpret_cast<float*>(&v.bytes[0])[k] = (k % 17) / 8.0f - 1;
  }
  return values;
}

std::vector<EValue> run(Module& module, const std::string& method, const std::vector<EValue>& in) {
  auto out = module.execute(method, in);
  if (!out.ok()) fail("method \"" + method + "\" failed with error " + std::to_string(static_cast<int>(out.error())));
  return *out;
}

int64_t argmax_last(const EValue& logits) {  // logits [1, T, vocab], float
  const auto& t = logits.toTensor();
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

}  // namespace

int main(int argc, char** argv) try {
  std::string pte, json, etdump_path, debug_path;
  std::vector<std::string> data;
  std::vector<Call> calls;
  Call gen;
  bool bench = false, check = false, table = false, precheck = true, share_arenas = true;
  int warmup = 3, iterations = 10, max_new = 16;
  size_t debug_size = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { if (++i >= argc) fail(a + " needs a value"); return argv[i]; };
    if (a == "--data") data.push_back(next());
    else if (a == "--call") calls.push_back(parse_call(next()));
    else if (a == "--generate") gen = parse_call(next());
    else if (a == "--max-new-tokens") max_new = std::stoi(next());
    else if (a == "--bench") bench = true;
    else if (a == "--warmup") warmup = std::stoi(next());
    else if (a == "--iterations") iterations = std::stoi(next());
    else if (a == "--table") table = true;
    else if (a == "--json") json = next();
    else if (a == "--check") check = true;
    else if (a == "--kernels") {  // what the linked libraries registered, one per line
      for (const auto& k : rt::get_registered_kernels()) printf("%s\n", k.name_);
      for (size_t b = 0; b < rt::get_num_registered_backends(); ++b) printf("backend %s\n", rt::get_backend_name(b).get());
      return 0;
    }
    else if (a == "--etdump") etdump_path = next();
    else if (a == "--debug-buffer") debug_path = next();
    else if (a == "--debug-size") debug_size = std::stoull(next());
    else if (a == "--no-precheck") precheck = false;          // to see the runtime's own error
    else if (a == "--no-shared-arenas") share_arenas = false;  // to see why they are needed
    else if (pte.empty() && a[0] != '-') pte = a;
    else fail("unknown argument " + a + " (usage at the top of native/et_runner.cc)");
  }
  if (pte.empty()) fail("usage: et_runner PROGRAM.pte [--data W.ptd] --call METHOD[=IN[:OUT]] ...");
  rt::register_pal(rt::PalImpl::create(log_message, __FILE__));

  double t0 = now_ms();
  std::unique_ptr<executorch::etdump::ETDumpGen> tracer;
  std::vector<uint8_t> debug_buffer(debug_size);
  if (!etdump_path.empty()) {
    tracer = std::make_unique<executorch::etdump::ETDumpGen>();
    if (debug_size) {  // operators' outputs (and delegates' outputs) go to the debug buffer
      (void)tracer->set_debug_buffer({debug_buffer.data(), debug_buffer.size()});
      tracer->set_event_tracer_debug_level(rt::EventTracerDebugLogLevel::kIntermediateOutputs);
    }
  }
  auto* etdump = tracer.get();
  // share_memory_arenas: the methods of one program use one set of planned arenas, so they
  // read and write one copy of the mutable buffers (share_mutable_buffers=True relies on it).
  Module module(pte, data, Module::LoadMode::Mmap, std::move(tracer), nullptr, nullptr, share_arenas);
  if (module.load() != rt::Error::Ok) fail("cannot load " + pte + " (is it a .pte? are its --data files given?)");
  std::set<std::string> methods;
  for (const Call& c : calls) methods.insert(c.method);
  std::string prefill = gen.method.substr(0, gen.method.find(',')), decode = prefill;
  if (gen.method.find(',') != std::string::npos) decode = gen.method.substr(gen.method.find(',') + 1);
  if (!gen.method.empty()) methods.insert(prefill), methods.insert(decode);
  auto names = *module.method_names();
  if (check || methods.empty()) methods = {names.begin(), names.end()};
  for (const auto& m : methods)
    if (!names.count(m)) {
      std::string known;
      for (const auto& n : std::set<std::string>(names.begin(), names.end())) known += (known.empty() ? "" : ", ") + n;
      fail(pte + " has no method \"" + m + "\"; its methods: " + known);
    }
  if (auto why = precheck ? missing(module, pte, methods) : ""; !why.empty()) fail(pte + ": " + why);
  for (const auto& m : methods)
    if (auto e = module.load_method(m); e != rt::Error::Ok)
      fail("cannot load method \"" + m + "\" of " + pte + ": error " + std::to_string(static_cast<int>(e)) +
           (data.empty() ? " (see the log above; weights in a .ptd need --data)" : " (see the log above)"));
  double load_ms = now_ms() - t0;
  if (check) return printf("%s: %zu methods load; every operator and delegate is registered\n", pte.c_str(), methods.size()), 0;

  std::map<std::string, std::vector<double>> times;
  double first_ms = -1;
  std::vector<std::vector<Value>> held(calls.size());
  std::vector<std::vector<EValue>> inputs(calls.size());
  for (size_t k = 0; k < calls.size(); ++k) {
    held[k] = calls[k].inputs.empty() ? synthetic_inputs(module, calls[k].method) : read_values(calls[k].inputs);
    inputs[k] = to_evalues(held[k]);
  }
  int rounds = bench ? 1 + warmup + iterations : 1;
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < calls.size(); ++k) {
      double s = now_ms();
      auto out = run(module, calls[k].method, inputs[k]);
      double ms = now_ms() - s;
      if (first_ms < 0) first_ms = ms;
      if (r == 0 && !calls[k].outputs.empty()) write_values(calls[k].outputs, out);
      if (r > warmup || !bench) times[calls[k].method].push_back(ms);
    }
  }

  std::ostringstream report, text;
  report << "{\"program\":\"" << pte << "\",\"load_ms\":" << load_ms << ",\"first_call_ms\":" << first_ms;
  text << "load " << load_ms << " ms, first call " << first_ms << " ms\n";
  if (!gen.method.empty()) {
    auto prompt = read_values(gen.inputs);
    std::vector<int64_t> tokens(prompt.at(0).bytes.size() / 8);
    memcpy(tokens.data(), prompt[0].bytes.data(), prompt[0].bytes.size());
    auto step = [&](const std::string& method, std::vector<int64_t> ids, int64_t start) {
      // The second input: [T] positions (the LLM runner's input_pos), or a [1] start.
      bool start_only = module.method_meta(method)->input_tensor_meta(1)->sizes()[0] == 1;
      std::vector<int64_t> pos(start_only ? 1 : ids.size());
      for (size_t i = 0; i < pos.size(); ++i) pos[i] = start + i;
      auto t = executorch::extension::from_blob(ids.data(), {1, static_cast<int>(ids.size())}, ScalarType::Long);
      auto p = executorch::extension::from_blob(pos.data(), {static_cast<int>(pos.size())}, ScalarType::Long);
      return argmax_last(run(module, method, {*t, *p})[0]);
    };
    std::vector<int64_t> generated;
    std::vector<double> prefills, decodes;  // with --bench: warmup + iterations generations
    for (int r = 0; r < (bench ? warmup + iterations : 1); ++r) {
      double s = now_ms();
      generated = {step(prefill, tokens, 0)};
      double p = now_ms() - s;
      s = now_ms();
      for (int i = 1; i < max_new; ++i) generated.push_back(step(decode, {generated.back()}, tokens.size() + i - 1));
      if (!bench || r >= warmup) prefills.push_back(p), decodes.push_back(now_ms() - s);
    }
    double prefill_ms = percentile(prefills, 0.5), decode_ms = percentile(decodes, 0.5);  // medians
    double prefill_tps = tokens.size() * 1000.0 / prefill_ms;
    double decode_tps = (generated.size() - 1) * 1000.0 / decode_ms;
    auto out = executorch::extension::from_blob(generated.data(), {static_cast<int>(generated.size())}, ScalarType::Long);
    if (!gen.outputs.empty()) write_values(gen.outputs, {EValue(*out)});
    report << ",\"generate\":{\"prompt_tokens\":" << tokens.size() << ",\"new_tokens\":" << generated.size()
           << ",\"prefill_ms\":" << prefill_ms << ",\"prefill_tokens_per_s\":" << prefill_tps
           << ",\"decode_ms\":" << decode_ms << ",\"decode_tokens_per_s\":" << decode_tps
           << ",\"runs\":" << decodes.size() << "}";
    text << "generate (median of " << decodes.size() << "): " << tokens.size() << " prompt tokens in " << prefill_ms << " ms (" << prefill_tps
         << " tok/s), " << generated.size() - 1 << " decoded in " << decode_ms << " ms (" << decode_tps << " tok/s)\n";
  }
  report << ",\"methods\":{";
  char line[200];
  snprintf(line, sizeof line, "%-14s %6s %10s %10s %10s %14s\n", "method", "calls", "p50 ms", "p90 ms", "min ms", "planned bytes");
  text << line;
  const char* sep = "";
  for (const auto& m : methods) {
    auto meta = module.method_meta(m);
    size_t planned = 0;
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) planned += *meta->memory_planned_buffer_size(i);
    const auto& t = times[m];
    report << sep << "\"" << m << "\":{\"planned_bytes\":" << planned << ",\"calls\":" << t.size(), sep = ",";
    if (!t.empty())
      report << ",\"p50_ms\":" << percentile(t, 0.5) << ",\"p90_ms\":" << percentile(t, 0.9) << ",\"min_ms\":" << percentile(t, 0);
    report << "}";
    snprintf(line, sizeof line, "%-14s %6zu %10.3f %10.3f %10.3f %14zu\n", m.c_str(), t.size(), t.empty() ? 0 : percentile(t, 0.5),
             t.empty() ? 0 : percentile(t, 0.9), t.empty() ? 0 : percentile(t, 0), planned);
    text << line;
  }
  long rss = peak_rss_kb();
  report << "},\"peak_rss_kb\":" << rss << "}";
  text << "peak RSS " << rss / 1024.0 << " MiB\n";
  if (etdump) {
    auto result = etdump->get_etdump_data();
    if (!result.buf) fail("the ETDump is empty");
    std::ofstream(etdump_path, std::ios::binary).write(static_cast<const char*>(result.buf), result.size);
    free(result.buf);
    if (!debug_path.empty())
      std::ofstream(debug_path, std::ios::binary).write(reinterpret_cast<char*>(debug_buffer.data()), debug_size);
  }
  if (!json.empty()) std::ofstream(json) << report.str() << "\n";
  if (table) printf("%s", text.str().c_str());
  printf("%s\n", report.str().c_str());
  return 0;
} catch (const std::exception& e) {
  fprintf(stderr, "et_runner: %s\n", e.what());
  return 1;
}
