#include "git/zlib_inflate.h"

#include <fmt/core.h>
#include <zlib.h>

#include <climits>

#include "core/error.h"

namespace apexnpu::git {

namespace {

// A z_stream set up for inflating, ended when it goes away.
class Inflater {
 public:
  Inflater(const unsigned char* in, std::size_t available, const std::string& what) : what_(what) {
    if (available > UINT_MAX) available = UINT_MAX;  // a stream never needs more than that here
    stream_.next_in = const_cast<unsigned char*>(in);
    stream_.avail_in = static_cast<uInt>(available);
    if (inflateInit(&stream_) != Z_OK) throw Error(fmt::format("cannot inflate {}", what_));
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates into out[from, out.size()); returns zlib's status.
  int run(std::string& out, std::size_t from) {
    stream_.next_out = reinterpret_cast<unsigned char*>(out.data() + from);
    const std::size_t room = out.size() - from;
    stream_.avail_out = static_cast<uInt>(room > UINT_MAX ? UINT_MAX : room);
    return inflate(&stream_, Z_FINISH);
  }
  std::size_t produced() const { return stream_.total_out; }
  [[noreturn]] void fail(const char* why) const {
    throw Error(fmt::format("cannot inflate {}: {}", what_, why),
                "the repository is damaged; fetch it again");
  }

 private:
  z_stream stream_{};
  const std::string& what_;
};

}  // namespace

std::string inflate_exact(const unsigned char* in, std::size_t available, std::size_t size,
                          const std::string& what) {
  Inflater inflater(in, available, what);
  // The room grows as the data turns out to be there: a damaged header may claim any size. One
  // spare byte shows a stream longer than announced.
  const std::size_t room = size + 1;
  std::string out(std::min(room, std::max<std::size_t>(available * 4, 1 << 16)), '\0');
  for (;;) {
    const int status = inflater.run(out, inflater.produced());
    if (status == Z_STREAM_END) break;
    if (status != Z_OK && status != Z_BUF_ERROR) inflater.fail("corrupt data");
    if (inflater.produced() < out.size()) inflater.fail("truncated");  // the input ran out
    if (out.size() == room) inflater.fail("longer than its header says");
    out.resize(std::min(room, out.size() * 2));
  }
  if (inflater.produced() != size) inflater.fail("not the size its header gives");
  out.resize(size);
  return out;
}

std::string inflate_all(const unsigned char* in, std::size_t available, const std::string& what) {
  Inflater inflater(in, available, what);
  std::string out(available * 4 + 64, '\0');
  for (;;) {
    const std::size_t done = inflater.produced();
    const int status = inflater.run(out, done);
    if (status == Z_STREAM_END) break;
    if (status != Z_OK && status != Z_BUF_ERROR) inflater.fail("corrupt data");
    if (inflater.produced() < out.size()) inflater.fail("truncated");  // input ran out
    out.resize(out.size() * 2);
  }
  out.resize(inflater.produced());
  return out;
}

}  // namespace apexnpu::git
