#pragma once
// TempDir: a fresh empty folder for one test, named after it, removed when the test ends.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

namespace attnlab::test {

class TempDir {
public:
    /// `prefix` tells whose files these are when a crashed run leaves the folder behind.
    explicit TempDir(const std::string& prefix = "attnlab") {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::random_device device;
        m_path = std::filesystem::temp_directory_path() /
                 (prefix + "_" + std::string(info ? info->name() : "test") + "_" +
                  std::to_string(device()));
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    /// The path of `name` inside the folder.
    std::string file(const std::string& name) const { return (m_path / name).string(); }
    /// The names in the folder, sorted (temporary files included).
    std::vector<std::string> listing() const {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(m_path))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    std::filesystem::path m_path;
};

} // namespace attnlab::test
