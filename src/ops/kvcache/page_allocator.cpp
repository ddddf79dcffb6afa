// Host page allocator for paged KV caches; the table is mirrored on the GPU.
#include <fmt/format.h>

#include <numeric>

#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/kvcache.hpp"

namespace vkattn {

namespace {
constexpr uint32_t kNoPage = 0xffffffffu;  // >= any num_pages: every kernel masks it
}

PageAllocator::PageAllocator(Context& ctx, uint32_t num_pages, uint32_t page_size, uint32_t batch, uint32_t max_pages)
    : ctx_(&ctx), num_pages_(num_pages), page_size_(page_size), batch_(batch), max_pages_(max_pages) {
  if (num_pages == 0 || num_pages == kNoPage || page_size == 0 || batch == 0 || max_pages == 0)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("page allocator: expected num_pages in [1, 2^32 - 2] and page_size, batch, max_pages >= 1, "
                            "got {}, {}, {}, {}",
                            num_pages, page_size, batch, max_pages));
  table_.assign(uint64_t(batch) * max_pages, kNoPage);
  free_.resize(num_pages);
  std::iota(free_.rbegin(), free_.rend(), 0u);  // page 0 is handed out first
  gpu_ = ctx.tensor(DType::u32, {batch, max_pages});
}

void PageAllocator::reserve(uint32_t b, uint64_t length) {
  if (b >= batch_)
    throw Error(ErrorKind::invalid_argument, fmt::format("sequence: expected below batch ({}), got {}", batch_, b));
  const uint64_t need = (length + page_size_ - 1) / page_size_;
  if (need > max_pages_)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("length: expected at most max_pages * page_size ({}), got {} for sequence {}",
                            uint64_t(max_pages_) * page_size_, length, b));
  uint32_t* row = &table_[uint64_t(b) * max_pages_];
  uint64_t missing = 0;
  for (uint64_t i = 0; i < need; ++i) missing += row[i] == kNoPage;
  if (missing > free_.size())
    throw Error(ErrorKind::out_of_memory, fmt::format("pages: expected {} free pages for sequence {}, got {}", missing,
                                                      b, free_.size()));
  for (uint64_t i = 0; i < need; ++i)
    if (row[i] == kNoPage) {
      row[i] = free_.back();
      free_.pop_back();
      dirty_ = true;
    }
}

void PageAllocator::release(uint32_t b) {
  if (b >= batch_)
    throw Error(ErrorKind::invalid_argument, fmt::format("sequence: expected below batch ({}), got {}", batch_, b));
  uint32_t* row = &table_[uint64_t(b) * max_pages_];
  for (uint32_t i = 0; i < max_pages_; ++i)
    if (row[i] != kNoPage) {
      free_.push_back(row[i]);
      row[i] = kNoPage;
      dirty_ = true;
    }
}

const Tensor& PageAllocator::table() {
  if (dirty_) ctx_->upload(gpu_, table_);
  dirty_ = false;
  return gpu_;
}

void PageAllocator::check(uint32_t b, uint64_t first, uint64_t count) const {
  if (b >= batch_)
    throw Error(ErrorKind::invalid_argument, fmt::format("sequence: expected below batch ({}), got {}", batch_, b));
  if (count == 0) return;
  for (uint64_t i = first / page_size_; i <= (first + count - 1) / page_size_; ++i)
    if (i >= max_pages_ || table_[uint64_t(b) * max_pages_ + i] == kNoPage)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("page_table[{}][{}]: expected a page allocated to sequence {} for positions {}..{}, got "
                              "none (freed or never reserved)",
                              b, i, b, i * page_size_, (i + 1) * page_size_ - 1));
}

void PageAllocator::check_table(const std::vector<uint32_t>& table) const {
  if (table.size() != table_.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("page_table: expected batch x max_pages = {} entries, got {}",
                                                         table_.size(), table.size()));
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i] != kNoPage && table[i] != table_[i])
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("page_table[{}][{}]: expected {} (the page the allocator holds there), got {}{}",
                              i / max_pages_, i % max_pages_,
                              table_[i] == kNoPage ? std::string("none") : std::to_string(table_[i]), table[i],
                              table_[i] == kNoPage ? " (a freed page)" : ""));
}

}  // namespace vkattn
