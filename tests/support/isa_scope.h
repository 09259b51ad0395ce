#pragma once
// Runs a test's kernels on one target (attnlab/base/isa.h): a parameterised fixture that skips,
// naming why, a target this CPU cannot run, and puts the process's choice back afterwards.

#include <gtest/gtest.h>

#include <string>

#include "attnlab/base/isa.h"

namespace attnlab::test {

/// The active kernel target for the scope's lifetime.
class IsaScope {
public:
    explicit IsaScope(Isa isa) : m_previous(activeIsa()) { setActiveIsa(isa); }
    ~IsaScope() { setActiveIsa(m_previous); }
    IsaScope(const IsaScope&) = delete;
    IsaScope& operator=(const IsaScope&) = delete;

private:
    Isa m_previous;
};

/// TEST_P(OnEachIsa-derived, ...) runs once per target; GetParam() is the one active.
class OnEachIsa : public ::testing::TestWithParam<Isa> {
protected:
    void SetUp() override {
        if (!isaSupported(GetParam()))
            GTEST_SKIP() << "this CPU (or this build) cannot run the " << isaName(GetParam())
                         << " kernels";
        m_previous = activeIsa();
        setActiveIsa(GetParam());
    }
    void TearDown() override { setActiveIsa(m_previous); }

private:
    Isa m_previous = Isa::Generic;
};

/// The target's name as a test-name suffix.
inline std::string isaTestName(const ::testing::TestParamInfo<Isa>& info) {
    return std::string(isaName(info.param));
}

} // namespace attnlab::test
