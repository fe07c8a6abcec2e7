// GzInput: buffered zlib reads with line and byte accounting.
#include "tools/common/gz_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace katrace::tools {
namespace {
constexpr size_t kBufferBytes = 256 * 1024;
}  // namespace

GzInput::GzInput() : buffer_(kBufferBytes) {}

GzInput::~GzInput() {
  if (file_ != nullptr) gzclose(file_);
}

bool GzInput::Open(const std::string& path, std::string* error) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "not a regular file";
    return false;
  }
  file_size_ = static_cast<uint64_t>(st.st_size);
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    *error = std::string("cannot open: ") + std::strerror(errno != 0 ? errno : ENOMEM);
    return false;
  }
  gzbuffer(file_, kBufferBytes);
  setg(buffer_.data(), buffer_.data(), buffer_.data());
  counted_upto_ = buffer_.data();
  return true;
}

void GzInput::OpenBytes(std::string_view bytes) {
  // The streambuf interface takes char*, but nothing writes through a get area.
  char* begin = const_cast<char*>(bytes.data());
  setg(begin, begin, begin + bytes.size());
  counted_upto_ = begin;
  file_size_ = bytes.size();
}

int GzInput::PeekBuffered(size_t ahead) {
  if (traits_type::eq_int_type(sgetc(), traits_type::eof())) return traits_type::eof();
  if (static_cast<size_t>(egptr() - gptr()) <= ahead) return traits_type::eof();
  return traits_type::to_int_type(gptr()[ahead]);
}

void GzInput::CountLinesUpTo(const char* end) {
  for (const char* p = counted_upto_; p < end;) {
    const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (nl == nullptr) break;
    ++newlines_;
    p = static_cast<const char*>(nl) + 1;
  }
  counted_upto_ = std::max(counted_upto_, end);
}

uint64_t GzInput::CurrentLine() {
  CountLinesUpTo(gptr());
  return newlines_ + 1;
}

int GzInput::SkipBlanksAndPeekSlow() {
  for (;;) {
    char* p = gptr();
    char* const end = egptr();
    while (p < end && IsBlank(*p)) ++p;
    setg(eback(), p, end);
    if (p < end) return traits_type::to_int_type(*p);
    if (traits_type::eq_int_type(underflow(), traits_type::eof())) return traits_type::eof();
  }
}

uint64_t GzInput::file_offset() const {
  if (file_ == nullptr) return 0;
  const z_off_t offset = gzoffset(file_);
  return offset < 0 ? 0 : static_cast<uint64_t>(offset);
}

GzInput::int_type GzInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (file_ == nullptr || at_eof_) return traits_type::eof();
  CountLinesUpTo(egptr());
  bytes_before_buffer_ += static_cast<uint64_t>(egptr() - eback());
  const int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (bytes_before_buffer_ == 0) is_gzip_ = gzdirect(file_) == 0;
  if (n <= 0) {
    at_eof_ = true;
    int errnum = Z_OK;
    const char* message = gzerror(file_, &errnum);
    if (n < 0 || errnum != Z_OK) {
      if (errnum == Z_BUF_ERROR) {
        error_ = "gzip stream is truncated (unexpected end of file)";
      } else if (errnum == Z_ERRNO) {
        error_ = std::string("read error: ") + std::strerror(errno);
      } else {
        error_ = std::string("gzip error: ") + (message != nullptr ? message : "unknown");
      }
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data());
    counted_upto_ = buffer_.data();
    return traits_type::eof();
  }
  setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
  counted_upto_ = buffer_.data();
  if (on_refill_) on_refill_(file_offset(), file_size_);
  return traits_type::to_int_type(*gptr());
}

}  // namespace katrace::tools
