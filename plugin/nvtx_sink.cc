#include "plugin/nvtx_sink.h"

#include <stdlib.h>

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define KATRACE_HAVE_NVTX 1
#else
#define KATRACE_HAVE_NVTX 0
#endif

namespace katrace {

void NvtxSink::Init(bool wanted) {
#if KATRACE_HAVE_NVTX
  const char* tool = getenv("NVTX_INJECTION64_PATH");
  enabled_ = wanted && tool != nullptr && *tool != '\0';
  if (enabled_) domain_ = nvtxDomainCreateA("katrace");
#else
  (void)wanted;
#endif
}

uint64_t NvtxSink::Start(const char* name) {
#if KATRACE_HAVE_NVTX
  if (!enabled_) return 0;
  nvtxEventAttributes_t attr = {};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = name != nullptr ? name : "nccl";
  return nvtxDomainRangeStartEx(static_cast<nvtxDomainHandle_t>(domain_), &attr);
#else
  (void)name;
  return 0;
#endif
}

void NvtxSink::End(uint64_t range) {
#if KATRACE_HAVE_NVTX
  if (enabled_ && range != 0) nvtxDomainRangeEnd(static_cast<nvtxDomainHandle_t>(domain_), range);
#else
  (void)range;
#endif
}

}  // namespace katrace
