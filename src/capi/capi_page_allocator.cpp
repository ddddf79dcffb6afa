// The C API's page allocator: vkattn::PageAllocator behind an opaque handle.
#include <fmt/format.h>

#include "capi/capi_support.hpp"

using vkattn::capi::guarded;
using vkattn::capi::require;

namespace {

// The allocator's [batch, max_pages] table as `count` values.
void require_table_size(const vkattn::PageAllocator& a, size_t count) {
  const size_t want = a.host_table().size();
  if (count != want)
    throw vkattn::Error(vkattn::ErrorKind::invalid_argument,
                        fmt::format("count: expected batch x max_pages = {} values, got {}", want, count));
}

}  // namespace

extern "C" {

vkattn_status vkattn_page_allocator_create(vkattn_context ctx, uint32_t num_pages, uint32_t page_size, uint32_t batch,
                                           uint32_t max_pages, vkattn_page_allocator* out) {
  return guarded([&] {
    require(ctx, "ctx");
    require(out, "out");
    *out = new vkattn_page_allocator_t{vkattn::PageAllocator(*ctx->context, num_pages, page_size, batch, max_pages)};
  });
}

void vkattn_page_allocator_destroy(vkattn_page_allocator pages) { delete pages; }

vkattn_status vkattn_page_allocator_reserve(vkattn_page_allocator pages, uint32_t seq, uint64_t length) {
  return guarded([&] {
    require(pages, "pages");
    pages->allocator.reserve(seq, length);
  });
}

vkattn_status vkattn_page_allocator_release(vkattn_page_allocator pages, uint32_t seq) {
  return guarded([&] {
    require(pages, "pages");
    pages->allocator.release(seq);
  });
}

uint32_t vkattn_page_allocator_free_pages(vkattn_page_allocator pages) {
  return pages ? pages->allocator.free_pages() : 0;
}

vkattn_status vkattn_page_allocator_table(vkattn_page_allocator pages, vkattn_tensor* out) {
  return guarded([&] {
    require(pages, "pages");
    require(out, "out");
    *out = new vkattn_tensor_t{pages->allocator.table()};
  });
}

vkattn_status vkattn_page_allocator_host_table(vkattn_page_allocator pages, uint32_t* table, size_t count) {
  return guarded([&] {
    require(pages, "pages");
    require(table, "table");
    require_table_size(pages->allocator, count);
    std::copy(pages->allocator.host_table().begin(), pages->allocator.host_table().end(), table);
  });
}

vkattn_status vkattn_page_allocator_check(vkattn_page_allocator pages, uint32_t seq, uint64_t first, uint64_t count) {
  return guarded([&] {
    require(pages, "pages");
    pages->allocator.check(seq, first, count);
  });
}

vkattn_status vkattn_page_allocator_check_table(vkattn_page_allocator pages, const uint32_t* table, size_t count) {
  return guarded([&] {
    require(pages, "pages");
    if (count) require(table, "table");
    pages->allocator.check_table(std::vector<uint32_t>(table, table + count));
  });
}

}  // extern "C"
