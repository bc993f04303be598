#include "engine/core/payload.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace dmls {
namespace {

TEST(PayloadTest, OwnsAStringWithoutCopyingIt) {
  std::string bytes(100, 'x');
  const char* data = bytes.data();
  Payload p(std::move(bytes));
  EXPECT_EQ(p.size(), 100u);
  ASSERT_TRUE(p.is_contiguous());
  EXPECT_EQ(p.contiguous().data(), data);  // moved in, not copied
  EXPECT_EQ(p.TakeString().data(), data);  // and moved out again
  EXPECT_TRUE(p.empty());
}

TEST(PayloadTest, BorrowedRangesReadInOrder) {
  auto owner = std::make_shared<std::string>("abcdefghij");
  std::string_view all(*owner);
  Payload p = Payload::Borrowed({all.substr(0, 3), all.substr(3, 0), all.substr(3, 7)}, owner);
  EXPECT_EQ(p.size(), 10u);
  EXPECT_FALSE(p.is_contiguous());
  EXPECT_EQ(p.ranges().size(), 2u);  // the empty range is dropped
  std::string out(10, '?');
  p.CopyTo(out.data());
  EXPECT_EQ(out, "abcdefghij");
  EXPECT_TRUE(p == "abcdefghij");
  EXPECT_FALSE(p == "abcdefghiX");
  EXPECT_FALSE(p == "abcdefghi");
  EXPECT_EQ(p.TakeString(), "abcdefghij");
  EXPECT_TRUE(p.empty());
}

TEST(PayloadTest, OneBorrowedRangeIsContiguousAndNotCopied) {
  auto owner = std::make_shared<std::string>("0123456789");
  Payload p = Payload::Borrowed({std::string_view(*owner).substr(2, 5)}, owner);
  ASSERT_TRUE(p.is_contiguous());
  EXPECT_EQ(p.contiguous().data(), owner->data() + 2);
  EXPECT_EQ(p.contiguous(), "23456");
}

TEST(PayloadTest, KeepsItsOwnerAliveUntilTheLastCopyGoes) {
  auto owner = std::make_shared<std::string>("payload bytes");
  std::weak_ptr<std::string> watch = owner;
  Payload p = Payload::Borrowed({std::string_view(*owner)}, owner);
  owner.reset();
  Payload copy = p;
  EXPECT_FALSE(watch.expired());
  p.clear();
  EXPECT_FALSE(watch.expired());
  EXPECT_TRUE(copy == "payload bytes");
  copy = Payload();
  EXPECT_TRUE(watch.expired());
}

TEST(PayloadTest, EmptyPayloads) {
  Payload p;
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(p.is_contiguous());
  EXPECT_TRUE(p == "");
  p.CopyTo(nullptr);  // nothing to write
  Payload b = Payload::Borrowed({}, std::make_shared<int>(0));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_EQ(b.contiguous().size(), 0u);
}

TEST(PayloadTest, MutableStringOwnsACopyOfBorrowedBytes) {
  auto owner = std::make_shared<std::string>("abcdef");
  std::weak_ptr<std::string> watch = owner;
  std::string_view all(*owner);
  Payload p = Payload::Borrowed({all.substr(0, 2), all.substr(2)}, owner);
  owner.reset();
  p.mutable_string()[0] = 'X';
  EXPECT_TRUE(watch.expired());  // the borrowed bytes are let go
  EXPECT_TRUE(p == "Xbcdef");
  std::string scratch;
  EXPECT_EQ(p.Flatten(&scratch), "Xbcdef");
  EXPECT_TRUE(scratch.empty());  // contiguous: no gathering
}

TEST(PayloadTest, FlattenGathersOnlyWhatArrivedInPieces) {
  auto owner = std::make_shared<std::string>("0123456789");
  std::string_view all(*owner);
  Payload p = Payload::Borrowed({all.substr(0, 4), all.substr(4)}, owner);
  std::string scratch;
  EXPECT_EQ(p.Flatten(&scratch), "0123456789");
  EXPECT_EQ(scratch, "0123456789");
  EXPECT_EQ(p.ToString(), "0123456789");
  Payload one = Payload::Borrowed({all.substr(3, 4)}, owner);
  std::string unused;
  EXPECT_EQ(one.Flatten(&unused).data(), owner->data() + 3);
  EXPECT_TRUE(unused.empty());
}

}  // namespace
}  // namespace dmls
