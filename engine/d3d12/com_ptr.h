// ComPtr: an owning reference to a COM object (ID3D12*), released on
// destruction. A minimal portable stand-in for Microsoft::WRL::ComPtr, which
// does not exist under vkd3d. Move-only by design: copies of COM references
// are rare in this code and explicit AddRef makes them visible.
// Thread-compatible (like a unique_ptr).
#ifndef DMLSERVE_ENGINE_D3D12_COM_PTR_H_
#define DMLSERVE_ENGINE_D3D12_COM_PTR_H_

#include <utility>

namespace dmls::d3d12 {

template <typename T>
class ComPtr {
 public:
  ComPtr() = default;
  // Takes over one reference the caller already owns.
  explicit ComPtr(T* p) : p_(p) {}
  ~ComPtr() { Reset(); }
  ComPtr(ComPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  ComPtr& operator=(ComPtr&& o) noexcept {
    if (this != &o) {
      Reset();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  ComPtr(const ComPtr&) = delete;
  ComPtr& operator=(const ComPtr&) = delete;

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

  // Releases the current object and returns the slot for an out-parameter.
  T** Put() {
    Reset();
    return &p_;
  }
  void Reset() {
    if (p_ != nullptr) {
      p_->Release();
      p_ = nullptr;
    }
  }

 private:
  T* p_ = nullptr;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_COM_PTR_H_
