#include "engine/plan/plan_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace dmls::gpu {
namespace {

// Elements spanned by `dims` from their first element: sum (size-1)*stride + 1.
uint64_t Span(const std::vector<Dim>& dims, size_t from, size_t tensor) {
  uint64_t last = 0;
  for (size_t k = from; k < dims.size(); ++k) last += (dims[k].size - 1) * dims[k].strides[tensor];
  return last + 1;
}

WordRange Range(uint64_t start, uint64_t span, uint32_t bits) {
  const uint64_t per_word = 32 / bits;
  WordRange r;
  r.first_word = start / per_word;
  const uint64_t last_word = (start + span - 1) / per_word;
  r.words = static_cast<uint32_t>(std::min<uint64_t>(last_word - r.first_word + 1, UINT32_MAX));
  r.bias = static_cast<uint32_t>(start - r.first_word * per_word);
  return r;
}

struct Splitter {
  const std::vector<Dim>& dims;
  uint32_t bits;
  uint64_t max_words;
  uint32_t max_chunks;
  size_t tensors;
  std::vector<Chunk> out;
  bool too_many = false;

  bool Fits(const std::vector<uint64_t>& start, const std::vector<Dim>& sub) const {
    for (size_t t = 0; t < tensors; ++t) {
      const uint64_t span = Span(sub, 0, t);
      const uint64_t per_word = 32 / bits;
      const uint64_t words = (start[t] + span - 1) / per_word - start[t] / per_word + 1;
      if (words > max_words) return false;
    }
    return true;
  }

  void Emit(const std::vector<uint64_t>& start, std::vector<Dim> sub) {
    if (out.size() >= max_chunks) {
      too_many = true;
      return;
    }
    Chunk c;
    for (size_t t = 0; t < tensors; ++t) c.views.push_back(Range(start[t], Span(sub, 0, t), bits));
    c.dims = std::move(sub);
    out.push_back(std::move(c));
  }

  void Split(const std::vector<uint64_t>& start, size_t d) {
    if (too_many) return;
    std::vector<Dim> sub(dims.begin() + d, dims.end());
    if (Fits(start, sub)) return Emit(start, std::move(sub));
    // Does one index of dimension d fit? Then take runs of indices.
    std::vector<Dim> one = sub;
    one[0].size = 1;
    if (Fits(start, one)) {
      const uint64_t size = sub[0].size;
      uint64_t i = 0;
      while (i < size && !too_many) {
        // Grow the run by doubling, then shrink to the largest that fits.
        uint64_t len = 1;
        auto fits_len = [&](uint64_t l) {
          std::vector<Dim> run = sub;
          run[0].size = l;
          std::vector<uint64_t> s = start;
          for (size_t t = 0; t < tensors; ++t) s[t] += i * sub[0].strides[t];
          return Fits(s, run);
        };
        while (i + len * 2 <= size && fits_len(len * 2)) len *= 2;
        uint64_t step = len / 2;
        while (step > 0) {
          if (i + len + step <= size && fits_len(len + step)) len += step;
          step /= 2;
        }
        std::vector<Dim> run = sub;
        run[0].size = len;
        std::vector<uint64_t> s = start;
        for (size_t t = 0; t < tensors; ++t) s[t] += i * sub[0].strides[t];
        Emit(s, std::move(run));
        i += len;
      }
      return;
    }
    // Otherwise fix index i of dimension d and recurse (d is never the last
    // dimension here: a single element always fits).
    for (uint64_t i = 0; i < sub[0].size && !too_many; ++i) {
      std::vector<uint64_t> s = start;
      for (size_t t = 0; t < tensors; ++t) s[t] += i * sub[0].strides[t];
      Split(s, d + 1);
    }
  }
};

}  // namespace

std::vector<Dim> CoalesceDims(const std::vector<uint64_t>& sizes,
                              const std::vector<std::vector<uint64_t>>& strides) {
  std::vector<Dim> dims;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == 1) continue;
    Dim d;
    d.size = sizes[k];
    for (const auto& s : strides) d.strides.push_back(s[k]);
    dims.push_back(std::move(d));
  }
  // Merge from the inside out: dims[k] into dims[k+1].
  std::vector<Dim> merged;
  for (size_t k = dims.size(); k-- > 0;) {
    if (!merged.empty()) {
      Dim& inner = merged.back();
      bool contiguous = true;
      for (size_t t = 0; t < strides.size(); ++t) {
        contiguous &= dims[k].strides[t] == inner.strides[t] * inner.size;
      }
      if (contiguous) {
        inner.size *= dims[k].size;
        continue;
      }
    }
    merged.push_back(dims[k]);
  }
  std::reverse(merged.begin(), merged.end());
  if (merged.empty()) {
    Dim d;
    d.strides.assign(strides.size(), 0);
    merged.push_back(d);
  }
  return merged;
}

absl::StatusOr<std::vector<Chunk>> SplitForViews(const std::vector<Dim>& dims, uint32_t bits,
                                                 uint64_t max_words, uint32_t max_chunks) {
  Splitter s{dims, bits, max_words, max_chunks, dims.empty() ? 0 : dims[0].strides.size(), {}};
  s.Split(std::vector<uint64_t>(s.tensors, 0), 0);
  if (s.too_many) {
    return absl::UnimplementedError(
        absl::StrCat("tensor layout needs more than ", max_chunks, " dispatches"));
  }
  return std::move(s.out);
}

absl::StatusOr<std::array<uint32_t, 3>> GridFor(uint64_t groups, uint32_t max_groups) {
  if (groups == 0) groups = 1;
  const uint64_t y = (groups + max_groups - 1) / max_groups;
  if (y > max_groups) return absl::UnimplementedError("dispatch too large");
  const uint64_t x = (groups + y - 1) / y;
  return std::array<uint32_t, 3>{static_cast<uint32_t>(x), static_cast<uint32_t>(y), 1};
}

}  // namespace dmls::gpu
