#include "engine/store/tensor_store.h"

#include <set>

#include "engine/core/host_resident.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/ops/rule_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "engine/store/tensor_handle.h"

namespace dmls::store {
namespace {

TensorDesc Floats(uint64_t n) { return MakeTensorDesc(DataType::kFloat32, {1, 1, 1, n}); }

std::string RuleOf(const absl::Status& s) {
  std::vector<ops::Violation> v = ops::ViolationsOf(s);
  return v.empty() ? "" : v.front().rule;
}

class TensorStoreTest : public ::testing::Test {
 protected:
  TensorStoreOptions Options() {
    TensorStoreOptions o;
    o.bytes_per_principal = 1000;
    o.bytes_total = 1500;
    o.default_ttl = absl::ZeroDuration();
    o.sweep_interval = absl::ZeroDuration();
    o.now = [this] { return now_; };
    return o;
  }
  CpuEngine engine_;
  absl::Time now_ = absl::FromUnixSeconds(1000000);
};

TEST_F(TensorStoreTest, HandlesAreUnguessableAndDistinct) {
  std::set<std::string> seen;
  const uint32_t instance = NewInstanceId();
  for (int i = 0; i < 1000; ++i) {
    std::string h = NewTensorHandle(instance);
    ASSERT_EQ(h.size(), 34u);
    ASSERT_EQ(h.substr(0, 2), "t-");
    ASSERT_EQ(h.find_first_not_of("0123456789abcdef", 2), std::string::npos) << h;
    ASSERT_EQ(HandleInstance(h), instance) << h;
    ASSERT_TRUE(seen.insert(h).second);
  }
  std::string typo = *seen.begin();
  typo[10] = typo[10] == 'a' ? 'b' : 'a';
  EXPECT_EQ(HandleInstance(typo), std::nullopt);
  EXPECT_EQ(HandleInstance("t-" + std::string(32, 'f')), std::nullopt);
  EXPECT_EQ(HandleInstance("t-123"), std::nullopt);
}

// A handle of another store (a lost or restarted replica) is HANDLE_LOST;
// a wrong one stays HANDLE_NOT_FOUND.
TEST_F(TensorStoreTest, HandlesOfAnotherInstanceAreLost) {
  TensorStore gone(&engine_, Options());
  TensorStore here(&engine_, Options());
  auto t = gone.Create("alice", Floats(4), absl::ZeroDuration(), false);
  ASSERT_TRUE(t.ok());
  absl::Status lost = here.Find("alice", (*t)->handle).status();
  EXPECT_EQ(lost.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(lost.message()), ::testing::StartsWith("HANDLE_LOST: "));
  absl::Status wrong = here.Find("alice", "t-" + std::string(32, '0')).status();
  EXPECT_THAT(std::string(wrong.message()), ::testing::StartsWith("HANDLE_NOT_FOUND: "));
  // Its own, released: not found, not lost.
  auto u = here.Create("alice", Floats(4), absl::ZeroDuration(), false);
  ASSERT_TRUE(u.ok() && here.Release("alice", (*u)->handle).ok());
  EXPECT_THAT(std::string(here.Find("alice", (*u)->handle).status().message()),
              ::testing::StartsWith("HANDLE_NOT_FOUND: "));
}

TEST_F(TensorStoreTest, OnlyTheOwnerSeesATensor) {
  TensorStore store(&engine_, Options());
  auto t = store.Create("alice", Floats(10), absl::ZeroDuration(), false);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->buffer->size(), 40u);
  EXPECT_TRUE(store.Find("alice", (*t)->handle).ok());
  absl::Status other = store.Find("bob", (*t)->handle).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(RuleOf(other), "HANDLE_NOT_FOUND");
  EXPECT_EQ(store.Release("bob", (*t)->handle).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store.List("bob").empty());
  ASSERT_EQ(store.List("alice").size(), 1u);
  EXPECT_TRUE(store.Release("alice", (*t)->handle).ok());
  EXPECT_EQ(store.Find("alice", (*t)->handle).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.PrincipalBytes("alice"), 0u);
}

TEST_F(TensorStoreTest, QuotasPerPrincipalAndTotal) {
  TensorStore store(&engine_, Options());
  ASSERT_TRUE(store.Create("alice", Floats(200), absl::ZeroDuration(), false).ok());  // 800
  absl::Status over = store.Create("alice", Floats(100), absl::ZeroDuration(), false).status();
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RuleOf(over), "RESIDENT_QUOTA");
  ASSERT_TRUE(store.Create("bob", Floats(150), absl::ZeroDuration(), false).ok());  // 600
  absl::Status total = store.Create("carol", Floats(100), absl::ZeroDuration(), false).status();
  EXPECT_EQ(RuleOf(total), "RESIDENT_QUOTA");
  EXPECT_EQ(store.stats().bytes, 1400u);
  EXPECT_EQ(store.stats().quota_rejections, 2u);
}

TEST_F(TensorStoreTest, PendingTensorsAreInvisibleAndAbandonGivesTheQuotaBack) {
  TensorStore store(&engine_, Options());
  auto t = store.Create("alice", Floats(200), absl::ZeroDuration(), true);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(store.Find("alice", (*t)->handle).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store.List("alice").empty());
  EXPECT_EQ(store.PrincipalBytes("alice"), 800u);
  store.Abandon((*t)->handle);
  EXPECT_EQ(store.PrincipalBytes("alice"), 0u);
  auto u = store.Create("alice", Floats(200), absl::ZeroDuration(), true);
  ASSERT_TRUE(u.ok());
  store.Publish((*u)->handle);
  EXPECT_TRUE(store.Find("alice", (*u)->handle).ok());
}

TEST_F(TensorStoreTest, ReplaceSwapsInTheWrittenVersion) {
  TensorStore store(&engine_, Options());
  auto t = store.Create("alice", Floats(10), absl::Seconds(60), false);
  auto v = store.Create("alice", Floats(10), absl::ZeroDuration(), true);
  ASSERT_TRUE(t.ok() && v.ok());
  EXPECT_EQ(store.PrincipalBytes("alice"), 80u);
  auto replaced = store.Replace((*t)->handle, (*v)->handle);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ((*replaced)->handle, (*t)->handle);
  EXPECT_EQ((*replaced)->expires, (*t)->expires);
  EXPECT_EQ((*replaced)->buffer, (*v)->buffer);
  EXPECT_EQ((*store.Find("alice", (*t)->handle))->buffer, (*v)->buffer);
  EXPECT_NE((*t)->buffer, (*v)->buffer);  // the old one, for who holds it
  EXPECT_EQ(store.PrincipalBytes("alice"), 40u);
  // A target released meanwhile: NOT_FOUND, and the version is gone too.
  auto w = store.Create("alice", Floats(10), absl::ZeroDuration(), true);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(store.Release("alice", (*t)->handle).ok());
  EXPECT_EQ(store.Replace((*t)->handle, (*w)->handle).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store.PrincipalBytes("alice"), 0u);
}

TEST_F(TensorStoreTest, ExpiredTensorsVanishAndAreSwept) {
  TensorStore store(&engine_, Options());
  auto t = store.Create("alice", Floats(10), absl::Seconds(5), false);
  auto forever = store.Create("alice", Floats(10), absl::ZeroDuration(), false);
  ASSERT_TRUE(t.ok() && forever.ok());
  EXPECT_EQ((*forever)->expires, absl::InfiniteFuture());
  now_ += absl::Seconds(4);
  EXPECT_TRUE(store.Find("alice", (*t)->handle).ok());
  now_ += absl::Seconds(2);
  EXPECT_EQ(store.Find("alice", (*t)->handle).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.PrincipalBytes("alice"), 80u);  // still held until swept
  EXPECT_EQ(store.Sweep(), 1u);
  EXPECT_EQ(store.PrincipalBytes("alice"), 40u);
  EXPECT_EQ(store.stats().expired, 1u);
}

TEST_F(TensorStoreTest, DefaultTtlApplies) {
  TensorStoreOptions o = Options();
  o.default_ttl = absl::Seconds(60);
  TensorStore store(&engine_, o);
  auto t = store.Create("alice", Floats(10), absl::ZeroDuration(), false);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->expires, now_ + absl::Seconds(60));
}

TEST_F(TensorStoreTest, BuffersStartZeroed) {
  TensorStore store(&engine_, Options());
  auto t = store.Create("alice", Floats(4), absl::ZeroDuration(), false);
  ASSERT_TRUE(t.ok());
  auto* host = dynamic_cast<HostResidentBuffer*>((*t)->buffer.get());
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(*host->Read(0, 16), std::string(16, '\0'));
  EXPECT_EQ(host->Write(10, "abcdefg").code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace dmls::store
