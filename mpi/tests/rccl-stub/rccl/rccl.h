/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* For scripts/build-hip.sh alone, where no RCCL is installed: the declarations of the part of
 * RCCL's API (NCCL's API, HIP streams) that ndzip::mpi's NCCL link calls, as RCCL documents
 * them, so that the HIP half of the link compiles (nccl_link_compiles.cpp). Nothing links
 * against it and nothing runs: a real RCCL (ROCm's rccl/rccl.h) takes its place wherever one is
 * found. */
#ifndef NDZIP_RCCL_STUB_H
#define NDZIP_RCCL_STUB_H

#include <hip/hip_runtime.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncclComm* ncclComm_t;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5
} ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3 } ncclRedOp_t;

const char* ncclGetErrorString(ncclResult_t result);
const char* ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclSend(const void* send_buffer, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, hipStream_t stream);
ncclResult_t ncclRecv(void* receive_buffer, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, hipStream_t stream);
ncclResult_t ncclAllReduce(const void* send_buffer, void* receive_buffer, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           hipStream_t stream);
ncclResult_t ncclBroadcast(const void* send_buffer, void* receive_buffer, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm, hipStream_t stream);
ncclResult_t ncclAllGather(const void* send_buffer, void* receive_buffer, size_t send_count,
                           ncclDataType_t type, ncclComm_t comm, hipStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
