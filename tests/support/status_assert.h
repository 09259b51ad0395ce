#pragma once
// A Status (an empty optional on success, else the Error) as a gtest assertion:
// ASSERT_TRUE(succeeded(panel->openLesson(path))) prints the message when it failed.

#include <gtest/gtest.h>

#include "attnlab/base/result.h"

namespace attnlab {

inline ::testing::AssertionResult succeeded(const Status& status) {
    if (!status) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << status->message;
}

} // namespace attnlab
