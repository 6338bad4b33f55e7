// A stand-in libnccl.so.2 for the fleet tests: ncclGetVersion reports 2.19.3 (21903),
// which no real node of ours has, or FAKE_NCCL_VERSION (tests/fleet_cross_arch.sh builds
// arm64 copies). Nothing else of NCCL is provided.
#ifndef FAKE_NCCL_VERSION
#define FAKE_NCCL_VERSION 21903
#endif
typedef enum { ncclSuccess = 0 } ncclResult_t;

ncclResult_t ncclGetVersion(int* version) {
  *version = FAKE_NCCL_VERSION;
  return ncclSuccess;
}
