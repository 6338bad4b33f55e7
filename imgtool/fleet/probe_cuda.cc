#include "fleet/probe_cuda.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace imgtool::fleet {

namespace {

// The driver API's types, as cuda.h declares them (CUresult, CUdevice are ints).
using CuInit = int (*)(unsigned);
using CuIntOut = int (*)(int*);  // cuDriverGetVersion, cuDeviceGetCount
using CuDeviceGet = int (*)(int*, int);
using CuDeviceString = int (*)(char*, int, int);  // cuDeviceGetName, cuDeviceGetPCIBusId
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuDeviceTotalMem = int (*)(size_t*, int);
struct CuUuid {
  unsigned char bytes[16];
};
using CuDeviceGetUuid = int (*)(CuUuid*, int);
using CuGetErrorName = int (*)(int, const char**);

constexpr int kAttrMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrCcMajor = 75;              // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;

void* Open(const std::string& name, std::string* error) {
  void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr && error != nullptr) {
    const char* e = ::dlerror();
    *error = e != nullptr ? e : name + ": dlopen failed";
  }
  return h;
}

template <typename Fn>
Fn Symbol(void* h, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(h, name));
}

// "a" when every device says "a", else "a,b" in device order.
std::string Join(const std::vector<std::string>& values) {
  std::string out;
  bool same = true;
  for (size_t i = 0; i < values.size(); ++i) {
    same = same && values[i] == values[0];
    out += (i ? "," : "") + values[i];
  }
  return same && !values.empty() ? values[0] : out;
}

std::string UuidString(const CuUuid& u) {
  char buf[64];
  const unsigned char* b = u.bytes;
  std::snprintf(buf, sizeof(buf), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

// The GPUs through libcuda.so.1: cuda.driver_api and gpu.*.
void ProbeDriverApi(StackReport& r) {
  for (const char* f : {"gpu.model", "gpu.sm_count", "gpu.memory_mib", "gpu.compute_capability"}) {
    r.fields[f] = "absent";
  }
  r.fields["gpu.count"] = "0";
  r.fields["cuda.driver_api"] = "absent";
  std::string error;
  void* h = Open("libcuda.so.1", &error);
  if (h == nullptr) {
    r.node["error.cuda.driver_api"] = error;
    return;
  }
  auto error_name = Symbol<CuGetErrorName>(h, "cuGetErrorName");
  auto failed = [&](const std::string& call, int rc) {
    const char* name = nullptr;
    if (error_name == nullptr || error_name(rc, &name) != 0 || name == nullptr) name = "CUDA error";
    return call + ": " + name + " (" + std::to_string(rc) + ")";
  };
  int version = 0;
  auto get_version = Symbol<CuIntOut>(h, "cuDriverGetVersion");
  int rc = get_version ? get_version(&version) : -1;
  if (rc == 0) {
    r.fields["cuda.driver_api"] = CudaVersionString(version);
  } else {
    r.fields["cuda.driver_api"] = "unknown";
    r.node["error.cuda.driver_api"] = get_version ? failed("cuDriverGetVersion", rc) : "no cuDriverGetVersion";
  }
  auto init = Symbol<CuInit>(h, "cuInit");
  auto count_fn = Symbol<CuIntOut>(h, "cuDeviceGetCount");
  auto get = Symbol<CuDeviceGet>(h, "cuDeviceGet");
  auto name_fn = Symbol<CuDeviceString>(h, "cuDeviceGetName");
  auto pci_fn = Symbol<CuDeviceString>(h, "cuDeviceGetPCIBusId");
  auto attr = Symbol<CuDeviceGetAttribute>(h, "cuDeviceGetAttribute");
  auto mem = Symbol<CuDeviceTotalMem>(h, "cuDeviceTotalMem_v2");
  auto uuid_fn = Symbol<CuDeviceGetUuid>(h, "cuDeviceGetUuid_v2");
  if (uuid_fn == nullptr) uuid_fn = Symbol<CuDeviceGetUuid>(h, "cuDeviceGetUuid");
  if (!init || !count_fn || !get || !name_fn || !pci_fn || !attr || !mem || !uuid_fn) {
    r.node["error.gpu.count"] = "libcuda.so.1 lacks a device query function";
    return;
  }
  int count = 0;
  if ((rc = init(0)) != 0 || (rc = count_fn(&count)) != 0) {
    r.node["error.gpu.count"] = failed("cuInit", rc);  // CUDA_ERROR_NO_DEVICE on a node without GPU
    return;
  }
  std::vector<std::string> model, sm, mib, cc, uuid, pci;
  for (int i = 0; i < count; ++i) {
    int dev = 0;
    char buf[256] = {};
    int v = 0, major = 0, minor = 0;
    size_t bytes = 0;
    CuUuid u{};
    if ((rc = get(&dev, i)) != 0) {
      r.node["error.gpu.count"] = failed("cuDeviceGet(" + std::to_string(i) + ")", rc);
      model.emplace_back("unknown");
      continue;
    }
    model.emplace_back(name_fn(buf, sizeof(buf) - 1, dev) == 0 ? buf : "unknown");
    sm.push_back(attr(&v, kAttrMultiprocessorCount, dev) == 0 ? std::to_string(v) : "unknown");
    bool cc_ok = attr(&major, kAttrCcMajor, dev) == 0 && attr(&minor, kAttrCcMinor, dev) == 0;
    cc.push_back(cc_ok ? std::to_string(major) + "." + std::to_string(minor) : "unknown");
    mib.push_back(mem(&bytes, dev) == 0 ? std::to_string(bytes >> 20) : "unknown");
    uuid.push_back(uuid_fn(&u, dev) == 0 ? UuidString(u) : "unknown");
    char bus[64] = {};
    pci.emplace_back(pci_fn(bus, sizeof(bus) - 1, dev) == 0 ? bus : "unknown");
  }
  r.fields["gpu.count"] = std::to_string(count);
  if (count == 0) return;
  r.fields["gpu.model"] = Join(model);
  r.fields["gpu.sm_count"] = Join(sm);
  r.fields["gpu.memory_mib"] = Join(mib);
  r.fields["gpu.compute_capability"] = Join(cc);
  r.node["gpu.uuid"] = Join(uuid);
  r.node["gpu.pci_bus_id"] = Join(pci);
}

// major.minor.patch from major * scale + minor * 100 + patch.
std::string Dotted(size_t code, size_t scale) {
  return std::to_string(code / scale) + "." + std::to_string(code % scale / 100) + "." + std::to_string(code % 100);
}

}  // namespace

std::string CudaVersionString(int code) { return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10); }

// cuDNN 9 moved from major*1000 to major*10000 (9.19.0 is 91900).
std::string CudnnVersionString(size_t code) { return Dotted(code, code >= 90000 ? 10000 : 1000); }

// NCCL 2.9 moved from major*1000 to major*10000 (2.9.0 is 20900; 2.8.4 was 2804).
std::string NcclVersionString(int code) {
  return Dotted(static_cast<size_t>(std::max(code, 0)), code >= 20900 ? 10000 : 1000);
}

std::string ParseNvidiaDriverVersion(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("NVRM version:", 0) != 0) continue;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos &&
          w.find_first_not_of("0123456789.") == std::string::npos) {
        return w;
      }
    }
  }
  return "";
}

const std::vector<std::string>& SonamesFor(const std::string& field) {
  static const std::map<std::string, std::vector<std::string>> kSonames = {
      {"cuda.runtime", {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11", "libcudart.so"}},
      {"cublas", {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}},
      {"cudnn", {"libcudnn.so.9", "libcudnn.so.8"}},
      {"nccl", {"libnccl.so.2"}},
  };
  static const std::vector<std::string> kNone;
  auto it = kSonames.find(field);
  return it == kSonames.end() ? kNone : it->second;
}

std::string LibraryVersion(const std::string& field, const std::vector<std::string>& names, std::string* error) {
  void* h = nullptr;
  std::string why;
  for (const auto& n : names) {
    if ((h = Open(n, &why)) != nullptr) break;
  }
  if (h == nullptr) {
    *error = why.empty() ? "no soname to try" : why;
    return "absent";
  }
  int rc = -1, v = 0;
  std::string out;
  if (field == "cuda.runtime") {
    if (auto f = Symbol<CuIntOut>(h, "cudaRuntimeGetVersion"); f && (rc = f(&v)) == 0) out = CudaVersionString(v);
  } else if (field == "cublas") {
    using GetProperty = int (*)(int, int*);  // cublasGetProperty(libraryPropertyType, int*)
    int part[3] = {};
    if (auto f = Symbol<GetProperty>(h, "cublasGetProperty")) {
      for (int p = 0; p < 3 && (rc = f(p, &part[p])) == 0; ++p) {  // MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
      }
      if (rc == 0) out = std::to_string(part[0]) + "." + std::to_string(part[1]) + "." + std::to_string(part[2]);
    }
  } else if (field == "cudnn") {
    if (auto f = Symbol<size_t (*)()>(h, "cudnnGetVersion")) {
      rc = 0;
      out = CudnnVersionString(f());
    }
  } else if (field == "nccl") {
    if (auto f = Symbol<CuIntOut>(h, "ncclGetVersion"); f && (rc = f(&v)) == 0) out = NcclVersionString(v);
  }
  if (out.empty()) {
    *error = "version query of " + field + " failed (status " + std::to_string(rc) + ")";
    return "unknown";
  }
  return out;
}

StackReport ProbeCudaStack(const std::string& proc_version_path) {
  StackReport r;
  std::string driver;
  if (std::ifstream proc(proc_version_path); proc.is_open()) {
    std::stringstream text;
    text << proc.rdbuf();
    driver = ParseNvidiaDriverVersion(text.str());
  }
  r.fields["driver.version"] = driver.empty() ? "absent" : driver;
  ProbeDriverApi(r);
  for (const char* field : {"cuda.runtime", "cublas", "cudnn", "nccl"}) {
    std::string error;
    r.fields[field] = LibraryVersion(field, SonamesFor(field), &error);
    if (!error.empty()) r.node[std::string("error.") + field] = error;
  }
  return r;
}

}  // namespace imgtool::fleet
