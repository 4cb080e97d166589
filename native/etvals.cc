#include "native/etvals.h"

#include <climits>
#include <cstdint>
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
  std::streamoff size = in.tellg();
  if (size < 0) throw std::runtime_error("cannot read " + path + " (is it a file?)");
  std::string data(std::min<uint64_t>(limit, size), '\0');
  if (!in.seekg(0).read(&data[0], data.size())) throw std::runtime_error("cannot read " + path);
  return data;
}

namespace {

// Bytes per element of the dtypes a value file may hold (ExecuTorch's ScalarType codes), 0 for
// any other code: the runtime's own elementSize() aborts on an unknown one.
size_t element_bytes(uint8_t dtype) {
  switch (dtype) {
    case 0: case 1: case 11: return 1;  // uint8, int8, bool
    case 2: case 5: case 15: return 2;  // int16, half, bfloat16
    case 3: case 6: return 4;           // int32, float
    case 4: case 7: return 8;           // int64, double
    default: return 0;
  }
}

}  // namespace

// Every count and size is checked against what is left of the file before anything is
// allocated or copied from it: a value file may be truncated, corrupt or crafted.
std::vector<Value> read_values(const std::string& path) {
  std::string d = slurp(path);
  size_t pos = 12;
  auto fail = [&](const std::string& what) { throw std::runtime_error(path + ": " + what); };
  auto take = [&](void* out, size_t n, const char* what) {
    if (n > d.size() - pos) fail(std::string("truncated: ") + what + " is cut off at byte " + std::to_string(d.size()));
    memcpy(out, d.data() + pos, n);
    pos += n;
  };
  if (d.size() < 12 || d.compare(0, 8, "ETVALS1\n") != 0) fail("not an etvals file");
  uint32_t count;
  memcpy(&count, d.data() + 8, 4);
  if (count > (d.size() - 12) / 12)  // a value takes at least 12 bytes: its head and its size
    fail("says it holds " + std::to_string(count) + " values, more than its " + std::to_string(d.size()) +
         " bytes can");
  std::vector<Value> values(count);
  for (uint32_t k = 0; k < count; ++k) {
    Value& v = values[k];
    std::string which = "value " + std::to_string(k);
    uint8_t head[4];
    take(head, 4, which.c_str());
    v.kind = static_cast<char>(head[0]), v.dtype = head[1];
    if (!strchr("TIDBN", v.kind) || v.kind == '\0') fail(which + " has kind " + std::to_string(head[0]) + "; known: T I D B N");
    if (v.kind == 'T' && !element_bytes(v.dtype)) fail(which + " has dtype code " + std::to_string(v.dtype) + ", which the runner does not know");
    if (v.kind != 'T' && head[2]) fail(which + " is a scalar with " + std::to_string(head[2]) + " dims");
    v.dims.resize(head[2]);
    uint64_t numel = 1, extent = 1;  // extent: the product of the sizes but zeros, for the int32 strides
    for (int64_t& dim : v.dims) {
      take(&dim, 8, which.c_str());
      if (dim < 0 || dim > INT32_MAX || (dim && extent > INT32_MAX / static_cast<uint64_t>(dim)))
        fail(which + " has sizes beyond what a tensor can have");
      extent *= dim ? dim : 1, numel *= dim;  // both stay within INT32_MAX
    }
    uint64_t n;
    take(&n, 8, which.c_str());
    uint64_t expected = v.kind == 'T' ? numel * element_bytes(v.dtype) : v.kind == 'N' ? 0 : 8;
    if (n != expected)
      fail(which + " holds " + std::to_string(n) + " bytes; its kind and sizes need " + std::to_string(expected));
    v.bytes.resize(n);
    take(&v.bytes[0], n, which.c_str());
  }
  if (pos != d.size()) fail(std::to_string(d.size() - pos) + " bytes after the last value");
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
