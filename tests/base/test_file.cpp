// Whole-file reads and all-or-nothing writes (src/base/file.cpp).
#include "base/file.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "test_main.h"

using namespace tri;

static std::string temp_dir() {
  char dir[] = "/tmp/tri-test-file-XXXXXX";
  if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
  return dir;
}

static int files_in(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

static void test_round_trip_and_replace(void** state) {
  (void)state;
  const std::string dir = temp_dir(), path = dir + "/f";
  std::string bytes(200000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  assert_int_equal(write_file_atomic(path, bytes), 0);
  std::string back = "old contents";
  assert_true(read_file(path, &back));
  assert_true(back == bytes);
  assert_int_equal(write_file_atomic(path, "short"), 0);  // replaced whole
  assert_true(read_file(path, &back));
  assert_string_equal(back.c_str(), "short");
  assert_int_equal(files_in(dir), 1);  // no temporary file left
  unlink(path.c_str());
  rmdir(dir.c_str());
}

static void test_errors(void** state) {
  (void)state;
  const std::string dir = temp_dir();
  std::string out;
  errno = 0;
  assert_false(read_file(dir + "/missing", &out));
  assert_int_equal(errno, ENOENT);
  assert_int_equal(write_file_atomic(dir + "/no/such/dir/f", "x"), ENOENT);
  assert_int_equal(files_in(dir), 0);
  rmdir(dir.c_str());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_and_replace),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
