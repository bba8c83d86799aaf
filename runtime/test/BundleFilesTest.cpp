//===- BundleFilesTest.cpp - What readFile agrees to read
//------------------===//
//
// A bundle directory is read as data of bounded trust: only regular files
// inside it, of bounded size, and never a FIFO, device or socket (which
// could block or never end). Each hostile file is checked through readFile
// and through the .meta loader, which must both return promptly.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/KernelBundle.h"

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace dgemm::runtime;
using dgemm::test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

constexpr const char *kEntry = "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2";

class BundleFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(bundle_.ok());
    ASSERT_TRUE(outside_.ok());
  }

  std::string inBundle(const std::string &name) const {
    return bundle_.path() + "/" + name;
  }

  /// fn() on another thread: fails the test if it does not return within
  /// 10 s, and then opens `path`'s write end, which releases a reader
  /// blocked on a FIFO, so that the test ends either way.
  template <typename Fn> Status promptly(const std::string &path, Fn fn) {
    auto result = std::async(std::launch::async, fn);
    if (result.wait_for(std::chrono::seconds(10)) !=
        std::future_status::ready) {
      ADD_FAILURE() << "reading '" << path << "' blocked";
      int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (fd >= 0)
        ::close(fd);
    }
    return result.get();
  }

  Status readPromptly(const std::string &path, std::string &contents) {
    return promptly(path, [&] { return readFile(path, contents); });
  }

  TempDir bundle_, outside_;
};

TEST_F(BundleFilesTest, ReadsARegularFile) {
  std::string path = bundle_.write("k.meta", "entry=k\n");
  std::string contents;
  Status s = readFile(path, contents);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(contents, "entry=k\n");
}

TEST_F(BundleFilesTest, MissingFileIsKernelNotFound) {
  std::string contents = "unchanged";
  Status s = readFile(inBundle("absent.ptx"), contents);
  EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
  EXPECT_THAT(s.message(), HasSubstr("absent.ptx"));
  EXPECT_EQ(contents, "unchanged");
}

TEST_F(BundleFilesTest, SymlinkWithinTheBundleIsFollowed) {
  // A bundle may share one PTX between names.
  bundle_.write("real.ptx", ".version 8.0\n");
  ASSERT_EQ(::symlink("real.ptx", inBundle("alias.ptx").c_str()), 0);
  std::string contents;
  Status s = readFile(inBundle("alias.ptx"), contents);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(contents, ".version 8.0\n");
}

TEST_F(BundleFilesTest, SymlinkToDevZeroIsRefused) {
  // Was read until memory ran out.
  ASSERT_EQ(::symlink("/dev/zero", inBundle("k.ptx").c_str()), 0);
  std::string contents;
  Status s = readPromptly(inBundle("k.ptx"), contents);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("outside the bundle directory"));
  EXPECT_TRUE(contents.empty());
}

TEST_F(BundleFilesTest, SymlinkOutsideIsRefusedWithoutEchoingTheTarget) {
  std::string secret =
      outside_.write("secret.txt", "password=hunter2\nline two\n");
  ASSERT_EQ(::symlink(secret.c_str(),
                      inBundle(std::string(kEntry) + ".meta").c_str()),
            0);
  std::string contents;
  Status s = readFile(inBundle(std::string(kEntry) + ".meta"), contents);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("outside the bundle directory"));
  EXPECT_THAT(s.message(), Not(HasSubstr("hunter2")));
  EXPECT_THAT(s.message(), Not(HasSubstr("secret.txt")));
  // Through the loader too: the parser never sees the target's lines.
  KernelMeta meta;
  Status loaded = loadKernelMeta(bundle_.path(), kEntry, meta);
  EXPECT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.message(), Not(HasSubstr("hunter2")));
  // A relative link that climbs out is the same.
  ASSERT_EQ(
      ::symlink(("../" +
                 outside_.path().substr(outside_.path().find_last_of('/') + 1) +
                 "/secret.txt")
                    .c_str(),
                inBundle("climb.ptx").c_str()),
      0);
  s = readFile(inBundle("climb.ptx"), contents);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), Not(HasSubstr("hunter2")));
}

TEST_F(BundleFilesTest, FifoMetaReturnsPromptly) {
  // Was a read that blocked forever, waiting for a writer.
  std::string path = inBundle(std::string(kEntry) + ".meta");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string contents;
  Status s = readPromptly(path, contents);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file"));
  KernelMeta meta;
  Status loaded = promptly(path, [&] {
    return loadKernelMeta(bundle_.path(), kEntry, meta);
  });
  // There is a file, so the bundle is bad, not missing a kernel (as for a
  // .ptx).
  EXPECT_EQ(loaded.code(), ErrorCode::BadKernelBundle);
}

TEST_F(BundleFilesTest, MissingMetaNamesTheRegeneratingCommand) {
  KernelMeta meta;
  Status s = loadKernelMeta(bundle_.path(), "dgemm_no_such_kernel", meta);
  EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
  EXPECT_THAT(s.message(),
              HasSubstr("dgemm-translate --dgemm-to-ptx "
                        "examples/kernels.mlir --bundle-dir=" +
                        bundle_.path() + " --bundle-all-candidates"));
}

TEST_F(BundleFilesTest, DirectoryAndSocketAreRefused) {
  ASSERT_EQ(::mkdir(inBundle("dir.meta").c_str(), 0700), 0);
  std::string contents;
  Status s = readPromptly(inBundle("dir.meta"), contents);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file"));

  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::string path = inBundle("sock.ptx");
  ASSERT_LT(path.size(), sizeof(address.sun_path));
  path.copy(address.sun_path, path.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)),
            0);
  s = readPromptly(path, contents);
  ::close(fd);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("sock.ptx' is not a regular file"));
}

TEST_F(BundleFilesTest, MetaIsBoundedTo64KiB) {
  std::string contents;
  std::string path = bundle_.write("big.meta", std::string(64 << 10, '#'));
  Status s = readFile(path, contents);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(contents.size(), size_t(64) << 10);
  path = bundle_.write("big.meta", std::string((64 << 10) + 1, '#'));
  s = readFile(path, contents);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("is larger than 65536 bytes"));
  // Any other file of the bundle (an index) has the same bound.
  path = bundle_.write("index", std::string((64 << 10) + 1, '#'));
  EXPECT_EQ(readFile(path, contents).code(), ErrorCode::BadKernelBundle);
}

TEST_F(BundleFilesTest, PtxIsBoundedTo64MiB) {
  // Sparse: the size alone must refuse it, before any read.
  std::string path = bundle_.write("huge.ptx", "");
  ASSERT_EQ(::truncate(path.c_str(), (off_t(64) << 20) + 1), 0);
  std::string contents;
  Status s = readFile(path, contents);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("is larger than 67108864 bytes"));
  EXPECT_TRUE(contents.empty());
  // A .ptx over the .meta bound is fine.
  path = bundle_.write("k.ptx", std::string(100 << 10, ' '));
  ASSERT_TRUE(readFile(path, contents).ok());
  EXPECT_EQ(contents.size(), size_t(100) << 10);
}

} // namespace
