// A std::streambuf over a trace file, plain or gzip (one or more gzip members, told by their magic
// bytes), that knows how far it has read, which line it is on and whether the file ended cleanly.
// It inflates with zlib's stream interface rather than gzread, which stops silently at bytes after
// the last member: such bytes are reported here, as is a stream cut short. The JSON
// reader pulls bytes through it one buffer at a time, so memory does not grow with the file.
// It can also read bytes held in memory, so that the JSON texts a protobuf trace embeds go
// through the same bounded parser as a JSON file.
// Thread safety: none.
#ifndef KATRACE_TOOLS_COMMON_GZ_INPUT_H_
#define KATRACE_TOOLS_COMMON_GZ_INPUT_H_

#include <zlib.h>

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace katrace::tools {

// What sgetc and sbumpc return at the end of the input.
inline constexpr int kEof = std::char_traits<char>::eof();

class GzInput : public std::streambuf {
 public:
  GzInput();
  ~GzInput() override;
  GzInput(const GzInput&) = delete;
  GzInput& operator=(const GzInput&) = delete;

  // Fails with a readable reason for a missing, unreadable or non-regular file.
  bool Open(const std::string& path, std::string* error);
  // Reads |bytes| instead of a file; they must outlive the reads.
  void OpenBytes(std::string_view bytes);

  // The byte |ahead| places after the next unread one, without consuming anything, or EOF when
  // it is not in the buffer yet: the first buffer of a file holds its first bytes, which is
  // where the trace reader tells JSON from protobuf.
  int PeekBuffered(size_t ahead);

  // Consumes JSON blanks (space, tab, CR, LF) straight from the buffer and returns the next
  // byte unconsumed, or EOF: a file of gigabytes of blanks then costs what inflating it costs.
  // Inline for the common case of a token right there (katrace writes no blanks in an event).
  int SkipBlanksAndPeek() {
    if (gptr() < egptr() && !IsBlank(*gptr())) return traits_type::to_int_type(*gptr());
    return SkipBlanksAndPeekSlow();
  }

  // The bytes in the buffer not consumed yet (maybe none), for a parser that scans a token in
  // place instead of a byte at a time; Consume(n) takes the first n of them.
  const char* buffered() const { return gptr(); }
  size_t buffered_size() const { return static_cast<size_t>(egptr() - gptr()); }
  void Consume(size_t n) { setg(eback(), gptr() + n, egptr()); }

  // 1-based line of the next unread byte. Amortised O(1): each byte is counted once.
  uint64_t CurrentLine();
  // Uncompressed bytes handed to the reader so far (inline: the trace reader checks its caps
  // with it at every token).
  uint64_t bytes_read() const {
    return bytes_before_buffer_ + static_cast<uint64_t>(gptr() - eback());
  }
  // Position in the file on disk (compressed bytes for gzip), for progress.
  uint64_t file_offset() const;
  uint64_t file_size() const { return file_size_; }
  bool is_gzip() const { return is_gzip_; }
  // Empty unless the file ended badly: truncated gzip stream, bad CRC, bytes after the last gzip
  // member, read error.
  const std::string& error() const { return error_; }
  // The error is bytes after the last gzip member (the members before it ended cleanly).
  bool trailing_bytes() const { return trailing_bytes_; }

  // Called after each buffer refill with (file_offset, file_size).
  void set_on_refill(std::function<void(uint64_t, uint64_t)> on_refill) {
    on_refill_ = std::move(on_refill);
  }

 protected:
  int_type underflow() override;

 private:
  static bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  int SkipBlanksAndPeekSlow();
  void CountLinesUpTo(const char* end);

  // Inflates into the get area; false at the end of the data (error_ says whether it was clean).
  bool FillFromGzip();
  bool FillFromPlain();
  // Reads the next raw bytes of the file into raw_; false at the end of the file or on an error.
  bool ReadRaw();
  // read(2) retried on EINTR; 0 at the end of the file or on an error (error_ says which).
  ssize_t ReadFile(void* into, size_t size);

  int fd_ = -1;
  z_stream stream_{};
  bool stream_ready_ = false;
  bool inside_member_ = false;
  uint64_t members_ended_ = 0;
  uint64_t member_start_ = 0;  // compressed offset where the current member began
  bool ended_after_this_buffer_ = false;
  bool trailing_bytes_ = false;
  std::vector<unsigned char> raw_;
  uint64_t raw_bytes_read_ = 0;
  std::vector<char> buffer_;
  uint64_t file_size_ = 0;
  uint64_t bytes_before_buffer_ = 0;
  uint64_t newlines_ = 0;
  const char* counted_upto_ = nullptr;
  bool is_gzip_ = false;
  bool at_eof_ = false;
  std::string error_;
  std::function<void(uint64_t, uint64_t)> on_refill_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_GZ_INPUT_H_
