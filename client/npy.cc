#include "client/npy.h"

#include <cstring>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/read_file.h"

namespace dmls::client {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// Maps the byte-order-free spellings NumPy writes for one-byte types ("|i1")
// and the native-order marker ("=f4", on our little-endian targets) to "<".
std::string NormaliseDescr(absl::string_view d) {
  if (d.size() >= 2 && (d[0] == '|' || d[0] == '=')) {
    return absl::StrCat("<", d.substr(1));
  }
  return std::string(d);
}

// Finds `'key':` in a header dict and returns the text after the colon.
absl::StatusOr<absl::string_view> ValueOf(absl::string_view header,
                                         absl::string_view key) {
  for (const char quote : {'\'', '"'}) {
    const std::string needle = absl::StrCat(std::string(1, quote), key,
                                            std::string(1, quote));
    size_t pos = header.find(needle);
    if (pos == absl::string_view::npos) continue;
    pos = header.find(':', pos + needle.size());
    if (pos == absl::string_view::npos) break;
    return absl::StripLeadingAsciiWhitespace(header.substr(pos + 1));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("npy header has no '", key, "' entry"));
}

absl::StatusOr<std::string> ParseDescr(absl::string_view header) {
  absl::StatusOr<absl::string_view> v = ValueOf(header, "descr");
  if (!v.ok()) return v.status();
  if (v->empty() || ((*v)[0] != '\'' && (*v)[0] != '"')) {
    return absl::InvalidArgumentError("npy descr is not a string (structured "
                                      "arrays are not supported)");
  }
  const size_t end = v->find((*v)[0], 1);
  if (end == absl::string_view::npos) {
    return absl::InvalidArgumentError("npy descr string is not terminated");
  }
  return NormaliseDescr(v->substr(1, end - 1));
}

absl::StatusOr<std::vector<uint64_t>> ParseShape(absl::string_view header) {
  absl::StatusOr<absl::string_view> v = ValueOf(header, "shape");
  if (!v.ok()) return v.status();
  if (v->empty() || (*v)[0] != '(') {
    return absl::InvalidArgumentError("npy shape is not a tuple");
  }
  const size_t end = v->find(')');
  if (end == absl::string_view::npos) {
    return absl::InvalidArgumentError("npy shape tuple is not terminated");
  }
  std::vector<uint64_t> shape;
  for (absl::string_view part :
       absl::StrSplit(v->substr(1, end - 1), ',', absl::SkipWhitespace())) {
    uint64_t n = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("npy shape entry '", part, "' is not a number"));
    }
    shape.push_back(n);
  }
  return shape;
}

}  // namespace

uint64_t NpyArray::ElementCount() const {
  uint64_t n = 1;
  for (uint64_t s : shape) n *= s;
  return n;
}

uint32_t NpyElementSize(absl::string_view descr) {
  static constexpr struct {
    const char* descr;
    uint32_t size;
  } kTypes[] = {{"<f4", 4}, {"<f2", 2}, {"<i1", 1}, {"<u1", 1}, {"<i2", 2},
                {"<u2", 2}, {"<i4", 4}, {"<u4", 4}, {"<i8", 8}, {"<u8", 8}};
  for (const auto& t : kTypes) {
    if (descr == t.descr) return t.size;
  }
  return 0;
}

absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes) {
  if (bytes.size() < kMagicLen + 4 ||
      std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    return absl::InvalidArgumentError("not a .npy file (bad magic)");
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0;
  size_t prefix = 0;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  if (major == 1) {
    header_len = byte(8) | (size_t{byte(9)} << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return absl::InvalidArgumentError("truncated .npy");
    header_len = byte(8) | (size_t{byte(9)} << 8) | (size_t{byte(10)} << 16) |
                 (size_t{byte(11)} << 24);
    prefix = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(".npy format version ", major, " is not supported"));
  }
  if (bytes.size() < prefix + header_len) {
    return absl::InvalidArgumentError("truncated .npy header");
  }
  const absl::string_view header = bytes.substr(prefix, header_len);
  NpyArray array;
  absl::StatusOr<std::string> descr = ParseDescr(header);
  if (!descr.ok()) return descr.status();
  array.descr = *std::move(descr);
  if (array.descr.size() > 0 && array.descr[0] == '>') {
    return absl::InvalidArgumentError(
        absl::StrCat("big-endian npy data (", array.descr,
                     ") is not supported"));
  }
  const uint32_t element_size = NpyElementSize(array.descr);
  if (element_size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("npy dtype ", array.descr, " is not supported"));
  }
  absl::StatusOr<absl::string_view> fortran = ValueOf(header, "fortran_order");
  if (!fortran.ok()) return fortran.status();
  if (absl::StartsWith(*fortran, "True")) {
    return absl::InvalidArgumentError("Fortran-order npy data is not supported");
  }
  absl::StatusOr<std::vector<uint64_t>> shape = ParseShape(header);
  if (!shape.ok()) return shape.status();
  array.shape = *std::move(shape);
  const uint64_t want = array.ElementCount() * element_size;
  const absl::string_view data = bytes.substr(prefix + header_len);
  if (data.size() < want) {
    return absl::InvalidArgumentError(
        absl::StrCat("npy data has ", data.size(), " bytes, shape needs ",
                     want));
  }
  array.data = std::string(data.substr(0, want));
  return array;
}

absl::StatusOr<std::string> SerializeNpy(const NpyArray& array) {
  const uint32_t element_size = NpyElementSize(array.descr);
  if (element_size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("npy dtype ", array.descr, " is not supported"));
  }
  if (array.data.size() != array.ElementCount() * element_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("array data has ", array.data.size(),
                     " bytes, shape needs ",
                     array.ElementCount() * element_size));
  }
  // NumPy spells one-byte types without a byte order.
  std::string descr = array.descr;
  if (element_size == 1) descr[0] = '|';
  std::string shape = absl::StrJoin(array.shape, ", ");
  if (array.shape.size() == 1) shape += ",";
  std::string header =
      absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (",
                   shape, "), }");
  // Pad with spaces and a final newline so the data starts 64-byte aligned.
  size_t prefix = kMagicLen + 2 + 2;
  if (prefix + header.size() + 1 > 65535) prefix = kMagicLen + 2 + 4;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out(kMagic, kMagicLen);
  const size_t len = header.size();
  if (prefix == 10) {
    out.push_back('\x01');
    out.push_back('\x00');
    out.push_back(static_cast<char>(len & 0xff));
    out.push_back(static_cast<char>((len >> 8) & 0xff));
  } else {
    out.push_back('\x02');
    out.push_back('\x00');
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
  out += header;
  out += array.data;
  return out;
}

absl::StatusOr<NpyArray> ReadNpyFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<NpyArray> array = ParseNpy(*bytes);
  if (!array.ok()) {
    return absl::Status(array.status().code(),
                        absl::StrCat(path, ": ", array.status().message()));
  }
  return array;
}

absl::Status WriteNpyFile(const std::string& path, const NpyArray& array) {
  absl::StatusOr<std::string> bytes = SerializeNpy(array);
  if (!bytes.ok()) return bytes.status();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace dmls::client
