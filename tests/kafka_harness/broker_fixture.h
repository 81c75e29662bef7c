// The broker the harness tests share: started once per test process (a JVM start costs 3-10 CPU
// seconds; one broker for the suite keeps it fast on a 2-core machine) and killed at exit.
// Tests stay independent by naming their topics and groups after themselves (unique()).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>

#include "tests/support/kafka_broker.h"

namespace restack::testkafka {

class BrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Shared& shared = sharedBroker();
    ASSERT_TRUE(shared.broker) << shared.start_error;
  }

  KafkaBroker& broker() { return *sharedBroker().broker; }

  // `base` made unique to the running test, e.g. "txn.in" ->
  // "txn.in.TransactionCommitsOutputsAndInputOffsetsTogether" (legal as a topic or group name).
  static std::string unique(const std::string& base) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = base + "." + info->test_suite_name() + "." + info->name();
    for (char& c : name) {
      const bool legal = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      if (!legal) c = '_';
    }
    return name;
  }

 private:
  struct Shared {
    std::unique_ptr<KafkaBroker> broker;
    std::string start_error;
  };
  static Shared& sharedBroker() {
    static Shared shared = [] {
      Shared started;
      auto broker = KafkaBroker::start();
      if (broker) {
        started.broker = std::move(*broker);
      } else {
        started.start_error = broker.error().message();
      }
      return started;
    }();
    return shared;
  }
};

}  // namespace restack::testkafka
