#include "native/program_module.h"

#include <executorch/runtime/core/data_loader.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/core/tensor_layout.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "native/program_check.h"

namespace rt = executorch::runtime;

namespace et_runner {
namespace {

// A file mapped read-only, whole (Module's LoadMode::Mmap).
struct Mapped {
  const uint8_t* data = nullptr;
  size_t size = 0;
  explicit Mapped(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + strerror(errno));
    struct stat info;
    void* mapped = nullptr;
    if (fstat(fd, &info) == 0 && info.st_size > 0) mapped = mmap(nullptr, info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (!mapped || mapped == MAP_FAILED) throw std::runtime_error("cannot map " + path + " (empty or unreadable)");
    data = static_cast<const uint8_t*>(mapped), size = info.st_size;
  }
  ~Mapped() { munmap(const_cast<uint8_t*>(data), size); }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
};

class MappedLoader final : public rt::DataLoader {
 public:
  explicit MappedLoader(const Mapped& file) : file_(file) {}
  rt::Result<rt::FreeableBuffer> load(size_t offset, size_t size, const SegmentInfo&) const override {
    if (offset > file_.size || size > file_.size - offset) return rt::Error::InvalidArgument;
    return rt::FreeableBuffer(file_.data + offset, size, nullptr);
  }
  // A method's mutable buffers (an LLM's KV cache) start from a copy of their initial values.
  rt::Error load_into(size_t offset, size_t size, const SegmentInfo&, void* buffer) const override {
    if (offset > file_.size || size > file_.size - offset) return rt::Error::InvalidArgument;
    memcpy(buffer, file_.data + offset, size);
    return rt::Error::Ok;
  }
  rt::Result<size_t> size() const override { return file_.size; }

 private:
  const Mapped& file_;
};

// The named data of the .ptd files, every offset checked by program_check's reader.
class PtdMap final : public rt::NamedDataMap {
 public:
  void add(const std::string& path) {
    files_.push_back(std::make_unique<Mapped>(path));
    for (auto& [key, tensor] : ptd_tensors(path)) {
      if (!entries_.count(key)) keys_.push_back(key);
      entries_[key] = {files_.back().get(), std::move(tensor)};
    }
  }
  rt::Result<const rt::TensorLayout> get_tensor_layout(std::string_view key) const override {
    auto found = entries_.find(key);
    if (found == entries_.end() || !found->second.tensor.has_layout) return rt::Error::NotFound;
    const PtdTensor& t = found->second.tensor;
    return rt::TensorLayout::create({t.sizes.data(), t.sizes.size()}, {t.dim_order.data(), t.dim_order.size()},
                                    static_cast<executorch::aten::ScalarType>(t.scalar_type));
  }
  rt::Result<rt::FreeableBuffer> get_data(std::string_view key) const override {
    auto found = entries_.find(key);
    if (found == entries_.end()) return rt::Error::NotFound;
    return rt::FreeableBuffer(found->second.file->data + found->second.tensor.offset, found->second.tensor.size, nullptr);
  }
  rt::Error load_data_into(std::string_view key, void* buffer, size_t size) const override {
    auto found = entries_.find(key);
    if (found == entries_.end()) return rt::Error::NotFound;
    if (size > found->second.tensor.size) return rt::Error::InvalidArgument;
    memcpy(buffer, found->second.file->data + found->second.tensor.offset, size);
    return rt::Error::Ok;
  }
  rt::Result<uint32_t> get_num_keys() const override { return static_cast<uint32_t>(keys_.size()); }
  rt::Result<const char*> get_key(uint32_t index) const override {
    if (index >= keys_.size()) return rt::Error::InvalidArgument;
    return keys_[index].c_str();
  }

 private:
  struct Entry {
    const Mapped* file;
    PtdTensor tensor;
  };
  std::vector<std::unique_ptr<Mapped>> files_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::vector<std::string> keys_;
};

// What a method allocates while it loads and runs, from the heap (Module's MallocMemoryAllocator).
class HeapAllocator final : public rt::MemoryAllocator {
 public:
  HeapAllocator() : rt::MemoryAllocator(0, nullptr) {}
  ~HeapAllocator() override { reset(); }
  void* allocate(size_t size, size_t alignment) override {
    void* block = nullptr;
    if (posix_memalign(&block, std::max(alignment, sizeof(void*)), std::max<size_t>(size, 1)) != 0) return nullptr;
    blocks_.push_back(block);
    return block;
  }
  void reset() override {
    for (void* block : blocks_) free(block);
    blocks_.clear();
  }

 private:
  std::vector<void*> blocks_;
};

// One loaded method with the memory it runs in.
struct LoadedMethod {
  HeapAllocator method_allocator, temp_allocator;
  std::vector<rt::Span<uint8_t>> planned_spans;
  std::unique_ptr<rt::HierarchicalAllocator> planned;
  std::unique_ptr<rt::MemoryManager> memory;
  std::unique_ptr<rt::Method> method;
};

uint8_t* zeroed(size_t size) {
  void* block = nullptr;
  if (posix_memalign(&block, 64, std::max<size_t>(size, 1)) != 0) throw std::runtime_error("out of memory");
  memset(block, 0, size);
  return static_cast<uint8_t*>(block);
}

}  // namespace

// Declared in the order they must be destroyed in reverse: methods first, the file last.
struct ProgramModule::State {
  std::string pte;
  std::vector<std::string> data;
  bool share_arenas;
  std::unique_ptr<Mapped> file;
  std::unique_ptr<MappedLoader> loader;
  PtdMap ptds;
  std::unique_ptr<rt::Program> program;
  std::vector<std::unique_ptr<uint8_t, decltype(&free)>> buffers;  // planned memory
  std::vector<std::pair<uint8_t*, size_t>> shared;                 // with share_arenas: per index
  std::map<std::string, std::unique_ptr<LoadedMethod>> methods;
};

ProgramModule::ProgramModule(const std::string& pte, const std::vector<std::string>& data, bool share_arenas)
    : state_(new State{pte, data, share_arenas}) {}

ProgramModule::~ProgramModule() = default;

rt::Error ProgramModule::load(rt::Program::Verification verification) {
  State& s = *state_;
  s.file = std::make_unique<Mapped>(s.pte);
  s.loader = std::make_unique<MappedLoader>(*s.file);
  for (const auto& ptd : s.data) s.ptds.add(ptd);
  auto program = rt::Program::load(s.loader.get(), verification);
  if (!program.ok()) return program.error();
  s.program = std::make_unique<rt::Program>(std::move(program.get()));
  std::vector<size_t> largest;  // each planned buffer index's largest size over the methods
  for (size_t i = 0; i < s.program->num_methods(); ++i) {
    auto meta = s.program->method_meta(*s.program->get_method_name(i));
    if (!meta.ok()) return meta.error();
    largest.resize(std::max(largest.size(), meta->num_memory_planned_buffers()));
    for (size_t b = 0; b < meta->num_memory_planned_buffers(); ++b)
      largest[b] = std::max<size_t>(largest[b], *meta->memory_planned_buffer_size(b));
  }
  for (size_t size : s.share_arenas ? largest : std::vector<size_t>()) {
    s.buffers.emplace_back(zeroed(size), &free);
    s.shared.emplace_back(s.buffers.back().get(), size);
  }
  return rt::Error::Ok;
}

rt::Result<std::unordered_set<std::string>> ProgramModule::method_names() {
  std::unordered_set<std::string> names;
  for (size_t i = 0; i < state_->program->num_methods(); ++i) {
    auto name = state_->program->get_method_name(i);
    if (!name.ok()) return name.error();
    names.insert(*name);
  }
  return names;
}

rt::Result<rt::MethodMeta> ProgramModule::method_meta(const std::string& name) {
  return state_->program->method_meta(name.c_str());
}

rt::Error ProgramModule::load_method(const std::string& name) {
  State& s = *state_;
  if (s.methods.count(name)) return rt::Error::Ok;
  auto meta = s.program->method_meta(name.c_str());
  if (!meta.ok()) return meta.error();
  auto loaded = std::make_unique<LoadedMethod>();
  for (size_t b = 0; b < meta->num_memory_planned_buffers(); ++b) {
    size_t size = *meta->memory_planned_buffer_size(b);
    if (!s.share_arenas) s.buffers.emplace_back(zeroed(size), &free);
    loaded->planned_spans.emplace_back(s.share_arenas ? s.shared[b].first : s.buffers.back().get(),
                                       s.share_arenas ? s.shared[b].second : size);
  }
  loaded->planned = std::make_unique<rt::HierarchicalAllocator>(
      rt::Span<rt::Span<uint8_t>>(loaded->planned_spans.data(), loaded->planned_spans.size()));
  loaded->memory = std::make_unique<rt::MemoryManager>(&loaded->method_allocator, loaded->planned.get(),
                                                       &loaded->temp_allocator);
  auto method = s.program->load_method(name.c_str(), loaded->memory.get(), nullptr, s.data.empty() ? nullptr : &s.ptds);
  if (!method.ok()) return method.error();
  loaded->method = std::make_unique<rt::Method>(std::move(method.get()));
  s.methods[name] = std::move(loaded);
  return rt::Error::Ok;
}

rt::Result<std::vector<rt::EValue>> ProgramModule::execute(const std::string& name, const std::vector<rt::EValue>& inputs) {
  if (auto e = load_method(name); e != rt::Error::Ok) return e;
  LoadedMethod& loaded = *state_->methods[name];
  rt::Method& method = *loaded.method;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (auto e = method.set_input(inputs[i], i); e != rt::Error::Ok) return e;
  auto e = method.execute();
  loaded.temp_allocator.reset();
  if (e != rt::Error::Ok) return e;
  std::vector<rt::EValue> outputs(method.outputs_size());
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = method.get_output(i);
  return outputs;
}

}  // namespace et_runner
