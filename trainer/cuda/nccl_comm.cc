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

Status NcclComm::Alive() const {
  return comm_ != nullptr ? Status::Ok()
                          : Status(MakeError(ErrorKind::kTransport, "NCCL communicator aborted by an earlier failure"));
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

Status NcclComm::AsyncError() {
  TRAINER_TRY(Alive());
  ncclResult_t async = ncclSuccess;
  NCCL_CHECK(comm_, ncclCommGetAsyncError(comm_, &async));
  // ncclInProgress: a nonblocking call still running, not a failure.
  if (async != ncclSuccess && async != ncclInProgress) {
    return NcclFailure(async, comm_, "ncclCommGetAsyncError", __FILE__, __LINE__);
  }
  return Status::Ok();
}

void NcclComm::Abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);  // frees the communicator too
  comm_ = nullptr;
}

Status NcclComm::AllGather(const float* in, float* out, size_t count) {
  TRAINER_TRY(Alive());
  NCCL_CHECK(comm_, ncclAllGather(in, out, count, ncclFloat, comm_, stream_));
  return Status::Ok();
}

Status NcclComm::Broadcast(void* data, size_t bytes, int root) {
  TRAINER_TRY(Alive());
  NCCL_CHECK(comm_, ncclBroadcast(data, data, bytes, ncclChar, root, comm_, stream_));
  return Status::Ok();
}

}  // namespace trainer::cuda
