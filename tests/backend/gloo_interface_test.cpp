// GLOO_SOCKET_IFNAME (issue 34, network): the interface a multi-node run's
// Gloo connections use is honoured, and one this machine lacks is refused
// in words instead of Gloo's "[enforce fail at ...device.cc:80]".
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/transport.h"

namespace pipewright::backend {
namespace {

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
  public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = old;
        }
        ::setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (old_) {
            ::setenv(name_, old_->c_str(), 1);
        } else {
            ::unsetenv(name_);
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    const char* name_;
    std::optional<std::string> old_;
};

// A master that is not this machine's loopback: the interface matters.
constexpr const char* kOtherMaster = "192.0.2.77";

TEST(GlooInterface, AnInterfaceThisMachineLacksIsRefusedInWords) {
    const ScopedEnv env("GLOO_SOCKET_IFNAME", "nope0");
    try {
        (void)make_gloo_transport(c10::make_intrusive<c10d::HashStore>(), kOtherMaster, 0, 1,
                                  std::chrono::seconds(5));
        FAIL() << "a transport on an interface that does not exist";
    } catch (const BackendError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("GLOO_SOCKET_IFNAME names the network interface nope0"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("lo"), std::string::npos) << what;  // what it has instead
        EXPECT_EQ(what.find("enforce fail"), std::string::npos) << what;
    }
}

TEST(GlooInterface, TheNamedInterfaceIsUsed) {
    const ScopedEnv env("GLOO_SOCKET_IFNAME", "lo");
    const auto transport = make_gloo_transport(c10::make_intrusive<c10d::HashStore>(), kOtherMaster,
                                               0, 1, std::chrono::seconds(5));
    ASSERT_NE(transport, nullptr);
    EXPECT_EQ(transport->world_size(), 1);
}

}  // namespace
}  // namespace pipewright::backend
