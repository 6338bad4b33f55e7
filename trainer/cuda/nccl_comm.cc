#include "cuda/nccl_comm.h"

#include "cuda/cuda_check.h"

namespace trainer::cuda {

Result<std::unique_ptr<NcclComm>> NcclComm::Create(Comm& host, cudaStream_t stream) {
  ncclUniqueId id{};
  if (host.rank() == 0) NCCL_CHECK(nullptr, ncclGetUniqueId(&id));
  TRAINER_TRY(host.Broadcast(&id, sizeof(id), 0));
  ncclComm_t comm = nullptr;
  NCCL_CHECK(nullptr, ncclCommInitRank(&comm, host.size(), id, host.rank()));
  return Result<std::unique_ptr<NcclComm>>(
      std::unique_ptr<NcclComm>(new NcclComm(comm, host.rank(), host.size(), stream)));
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

Status NcclComm::AllGather(const float* in, float* out, size_t count) {
  NCCL_CHECK(comm_, ncclAllGather(in, out, count, ncclFloat, comm_, stream_));
  return Status::Ok();
}

Status NcclComm::Broadcast(void* data, size_t bytes, int root) {
  NCCL_CHECK(comm_, ncclBroadcast(data, data, bytes, ncclChar, root, comm_, stream_));
  return Status::Ok();
}

}  // namespace trainer::cuda
