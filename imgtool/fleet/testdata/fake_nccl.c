// A stand-in libnccl.so.2 for the fleet tests: ncclGetVersion reports 2.19.3 (21903),
// which no real node of ours has. Nothing else of NCCL is provided.
typedef enum { ncclSuccess = 0 } ncclResult_t;

ncclResult_t ncclGetVersion(int* version) {
  *version = 21903;
  return ncclSuccess;
}
