#include "io/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "vkattn/error.hpp"

namespace vkattn::io {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what) {
  auto fail = [&](const std::string& why) -> std::string {
    throw Error(ErrorKind::io, fmt::format("{} {}: file: {}", what, path, why));
  };
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever.
  Fd f{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) return fail(fmt::format("expected a readable file, got none (cannot open: {})", std::strerror(errno)));
  struct stat st {};
  if (fstat(f.fd, &st) != 0) return fail(fmt::format("expected a readable file, got error '{}'", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return fail(fmt::format("expected a regular file, got {}", kind_of(st.st_mode)));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) return fail(fmt::format("expected at most {} bytes, got {}", max_bytes, size));
  std::string bytes(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = read(f.fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(fmt::format("expected {} bytes, got {} (the file shrank or a read failed)", size, done));
    done += static_cast<uint64_t>(n);
  }
  return bytes;
}

}  // namespace vkattn::io
