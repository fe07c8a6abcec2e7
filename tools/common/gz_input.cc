// GzInput: buffered zlib reads with line and byte accounting.
#include "tools/common/gz_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace katrace::tools {
namespace {
constexpr size_t kBufferBytes = 256 * 1024;
}  // namespace

GzInput::GzInput() : raw_(kBufferBytes), buffer_(kBufferBytes) {}

GzInput::~GzInput() {
  if (stream_ready_) inflateEnd(&stream_);
  if (fd_ >= 0) close(fd_);
}

bool GzInput::Open(const std::string& path, std::string* error) {
  // stat before open: opening a FIFO for reading would wait for a writer.
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
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    *error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  setg(buffer_.data(), buffer_.data(), buffer_.data());
  counted_upto_ = buffer_.data();
  // The format by its magic bytes (RFC 1952: 0x1f 0x8b), as gzip itself tells.
  if (ReadRaw() && stream_.avail_in >= 2 && raw_[0] == 0x1f && raw_[1] == 0x8b) {
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      *error = "cannot open: zlib could not start (out of memory)";
      return false;
    }
    stream_ready_ = true;
    is_gzip_ = true;
  }
  if (!error_.empty()) {
    *error = error_;
    return false;
  }
  return true;
}

ssize_t GzInput::ReadFile(void* into, size_t size) {
  ssize_t n;
  do {
    n = read(fd_, into, size);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    error_ = std::string("read error: ") + std::strerror(errno);
    return 0;
  }
  raw_bytes_read_ += static_cast<uint64_t>(n);
  return n;
}

bool GzInput::ReadRaw() {
  stream_.next_in = raw_.data();
  stream_.avail_in = static_cast<uInt>(ReadFile(raw_.data(), raw_.size()));
  return stream_.avail_in > 0;
}

bool GzInput::FillFromPlain() {
  size_t n = 0;
  if (stream_.avail_in > 0) {  // the bytes read at Open to look for the gzip magic
    n = std::min<size_t>(stream_.avail_in, buffer_.size());
    std::memcpy(buffer_.data(), stream_.next_in, n);
    stream_.next_in += n;
    stream_.avail_in -= static_cast<uInt>(n);
  } else {
    n = static_cast<size_t>(ReadFile(buffer_.data(), buffer_.size()));
  }
  setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
  return n > 0;
}

bool GzInput::FillFromGzip() {
  auto* out = reinterpret_cast<Bytef*>(buffer_.data());
  stream_.next_out = out;
  stream_.avail_out = static_cast<uInt>(buffer_.size());
  while (stream_.next_out == out) {
    if (stream_.avail_in == 0 && !ReadRaw()) {
      if (error_.empty() && inside_member_) {
        error_ = "gzip stream is truncated (unexpected end of file)";
      }
      break;
    }
    if (!inside_member_) member_start_ = file_offset();
    inside_member_ = true;
    const int rc = inflate(&stream_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      // Another member may follow (a concatenation of gzip files is one gzip file).
      inside_member_ = false;
      ++members_ended_;
      inflateReset(&stream_);
      continue;
    }
    // Z_BUF_ERROR: no progress without more input (with input left it would be none at all).
    if (rc == Z_OK || (rc == Z_BUF_ERROR && stream_.avail_in == 0)) continue;
    const uint64_t at = file_offset();
    if (rc == Z_DATA_ERROR && members_ended_ > 0 && stream_.total_out == 0) {
      // gzread ignores such bytes; they may be the rest of a trace that was cut or overwritten.
      trailing_bytes_ = true;
      const uint64_t left = file_size_ > member_start_ ? file_size_ - member_start_ : 0;
      error_ = std::to_string(left) + " bytes after the end of the gzip stream (from byte " +
               std::to_string(member_start_) + ") are not gzip";
    } else {
      error_ = std::string("gzip error at compressed byte ") + std::to_string(at) + ": " +
               (stream_.msg != nullptr ? stream_.msg : "code " + std::to_string(rc));
    }
    break;
  }
  const size_t n = static_cast<size_t>(stream_.next_out - out);
  setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
  if (!error_.empty()) ended_after_this_buffer_ = true;
  return n > 0;
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
  if (fd_ < 0) return 0;
  return raw_bytes_read_ - stream_.avail_in;
}

GzInput::int_type GzInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (fd_ < 0 || at_eof_) return traits_type::eof();
  CountLinesUpTo(egptr());
  bytes_before_buffer_ += static_cast<uint64_t>(egptr() - eback());
  const bool filled = !ended_after_this_buffer_ && (is_gzip_ ? FillFromGzip() : FillFromPlain());
  counted_upto_ = buffer_.data();
  if (!filled) {
    at_eof_ = true;
    setg(buffer_.data(), buffer_.data(), buffer_.data());
    return traits_type::eof();
  }
  if (on_refill_) on_refill_(file_offset(), file_size_);
  return traits_type::to_int_type(*gptr());
}

}  // namespace katrace::tools
