#include "native/etvals.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

using executorch::aten::ScalarType;
using executorch::runtime::EValue;

namespace et_runner {

std::string slurp(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  in.seekg(0, std::ios::end);
  std::string data(std::min<size_t>(limit, in.tellg()), '\0');
  in.seekg(0).read(&data[0], data.size());
  return data;
}

std::vector<Value> read_values(const std::string& path) {
  std::string d = slurp(path);
  size_t pos = 12;
  auto take = [&](void* out, size_t n) {
    if (pos + n > d.size()) throw std::runtime_error(path + ": truncated");
    memcpy(out, d.data() + pos, n);
    pos += n;
  };
  if (d.size() < 12 || d.compare(0, 8, "ETVALS1\n") != 0) throw std::runtime_error(path + ": not an etvals file");
  uint32_t count;
  memcpy(&count, d.data() + 8, 4);
  std::vector<Value> values(count);
  for (Value& v : values) {
    uint8_t head[4];
    take(head, 4);
    v.kind = static_cast<char>(head[0]), v.dtype = head[1], v.dims.resize(head[2]);
    for (int64_t& dim : v.dims) take(&dim, 8);
    uint64_t n;
    take(&n, 8);
    v.bytes.resize(n);
    take(&v.bytes[0], n);
  }
  return values;
}

std::vector<EValue> to_evalues(std::vector<Value>& values) {
  std::vector<EValue> out;
  for (Value& v : values) {
    int64_t x = 0;
    double f = 0;
    if (v.kind == 'N') { out.emplace_back(); continue; }
    if (v.kind != 'T') memcpy(&x, v.bytes.data(), 8), memcpy(&f, v.bytes.data(), 8);
    if (v.kind == 'I') out.emplace_back(x);
    else if (v.kind == 'B') out.emplace_back(x != 0);
    else if (v.kind == 'D') out.emplace_back(f);
    else {
      std::vector<executorch::aten::SizesType> sizes(v.dims.begin(), v.dims.end());
      v.tensor = executorch::extension::from_blob(&v.bytes[0], sizes, static_cast<ScalarType>(v.dtype));
      out.emplace_back(*v.tensor);
    }
  }
  return out;
}

void write_values(const std::string& path, const std::vector<EValue>& values) {
  std::ostringstream o;
  auto put = [&](const void* p, size_t n) { o.write(static_cast<const char*>(p), n); };
  uint32_t count = values.size();
  o << "ETVALS1\n";
  put(&count, 4);
  for (const EValue& e : values) {
    std::vector<int64_t> dims;
    std::string raw;
    uint8_t head[4] = {'T', 4, 0, 0};
    if (e.isTensor()) {
      const auto& t = e.toTensor();
      head[1] = static_cast<uint8_t>(t.scalar_type());
      dims.assign(t.sizes().begin(), t.sizes().end());
      raw.assign(static_cast<const char*>(t.const_data_ptr()), t.nbytes());
    } else if (e.isIntList()) {  // e.g. a constant method's list: written as an int64 tensor
      auto list = e.toIntList();
      dims = {static_cast<int64_t>(list.size())};
      raw.assign(reinterpret_cast<const char*>(list.data()), list.size() * 8);
    } else {
      int64_t x = 0;
      double f;
      if (e.isNone()) head[0] = 'N';
      else if (e.isInt()) head[0] = 'I', x = e.toInt();
      else if (e.isBool()) head[0] = 'B', head[1] = 11, x = e.toBool();
      else if (e.isDouble()) head[0] = 'D', head[1] = 7, f = e.toDouble(), memcpy(&x, &f, 8);
      else throw std::runtime_error("an output of unsupported kind (EValue tag " + std::to_string(static_cast<int>(e.tag)) + ")");
      if (head[0] != 'N') raw.assign(reinterpret_cast<const char*>(&x), 8);
    }
    head[2] = dims.size();
    uint64_t n = raw.size();
    put(head, 4), put(dims.data(), 8 * dims.size()), put(&n, 8), put(raw.data(), n);
  }
  std::ofstream out(path, std::ios::binary);
  out << o.str();
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace et_runner
