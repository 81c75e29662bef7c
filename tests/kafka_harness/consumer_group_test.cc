// Consumer groups on the real broker: a second member takes over half of the partitions, each
// record is delivered to exactly the member that owns its partition, and the partitions return
// when a member leaves; with static membership (group.instance.id, what a StatefulSet pod name
// gives) a member that restarts within the session timeout gets its partitions back without
// a rebalance. Both for eager ("range") and incremental ("cooperative-sticky") assignment.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tests/kafka_harness/broker_fixture.h"
#include "tests/support/kafka_records.h"

namespace restack::testkafka {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPartitions = 4;

std::string describe(const std::set<int>& partitions) {
  std::string text = "{";
  for (int p : partitions) text += (text.size() > 1 ? "," : "") + std::to_string(p);
  return text + "}";
}

// One group member: a subscribed consumer whose rebalance callback keeps `assigned` current.
class Member {
 public:
  Member(const std::string& bootstrap, const std::string& topic, const std::string& group, const std::string& strategy,
         const std::string& instance_id = "") {
    KafkaProperties properties = {{"bootstrap.servers", bootstrap},
                                  {"group.id", group},
                                  {"partition.assignment.strategy", strategy},
                                  {"auto.offset.reset", "earliest"},
                                  {"session.timeout.ms", "6000"},
                                  {"heartbeat.interval.ms", "500"}};
    if (!instance_id.empty()) properties["group.instance.id"] = instance_id;
    auto client = makeClient(RD_KAFKA_CONSUMER, properties, [this](rd_kafka_conf_t* conf) {
      rd_kafka_conf_set_rebalance_cb(conf, &Member::onRebalance);
      rd_kafka_conf_set_opaque(conf, this);
    });
    EXPECT_TRUE(client) << client.error().message();
    if (!client) return;
    client_ = std::move(*client);
    TopicPartitionList topics(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(topics.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
    EXPECT_EQ(rd_kafka_subscribe(client_.get(), topics.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // Serves callbacks and collects records for up to `wait`.
  void poll(std::chrono::milliseconds wait) {
    if (!client_) return;
    Message message(rd_kafka_consumer_poll(client_.get(), static_cast<int>(wait.count())));
    if (message && message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      received.push_back({message->partition, std::string(static_cast<const char*>(message->payload), message->len)});
    }
  }

  // Leaves the group (a static member's close does not: it keeps its slot until the session
  // times out, which is the point of static membership).
  void close() { client_.reset(); }

  std::set<int> assigned;
  int assignments = 0;  // rebalance callbacks that added partitions
  std::vector<std::pair<int, std::string>> received;

 private:
  static void onRebalance(rd_kafka_t* client, rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* partitions,
                          void* opaque) {
    auto* self = static_cast<Member*>(opaque);
    const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(client), "COOPERATIVE") == 0;
    if (event == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      if (cooperative) {
        KafkaError(rd_kafka_incremental_assign(client, partitions));
      } else {
        rd_kafka_assign(client, partitions);
      }
      for (int i = 0; i < partitions->cnt; ++i) self->assigned.insert(partitions->elems[i].partition);
      if (partitions->cnt > 0) ++self->assignments;
    } else {
      if (cooperative) {
        KafkaError(rd_kafka_incremental_unassign(client, partitions));
      } else {
        rd_kafka_assign(client, nullptr);
      }
      for (int i = 0; i < partitions->cnt; ++i) self->assigned.erase(partitions->elems[i].partition);
    }
  }

  KafkaClient client_;
};

// Polls every member until `done()` holds; false after `timeout`.
bool pollUntil(const std::vector<Member*>& members, const std::function<bool()>& done,
               std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    for (Member* member : members) member->poll(std::chrono::milliseconds(50));
  }
  return true;
}

bool splitEvenly(const Member& a, const Member& b) {
  std::set<int> all = a.assigned;
  all.insert(b.assigned.begin(), b.assigned.end());
  return a.assigned.size() == kPartitions / 2 && b.assigned.size() == kPartitions / 2 &&
         static_cast<int>(all.size()) == kPartitions;
}

class ConsumerGroupTest : public BrokerTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ConsumerGroupTest, TwoMembersShareThePartitionsAndTheSurvivorTakesThemBack) {
  const std::string strategy = GetParam();
  const std::string topic = unique("group.events");
  const std::string group = unique("restack");
  ASSERT_TRUE(broker().createTopic(topic, kPartitions));

  Member first(broker().bootstrap(), topic, group, strategy);
  ASSERT_TRUE(pollUntil({&first}, [&] { return first.assigned.size() == kPartitions; }))
      << "the only member should own all partitions, has " << describe(first.assigned);

  Member second(broker().bootstrap(), topic, group, strategy);
  ASSERT_TRUE(pollUntil({&first, &second}, [&] { return splitEvenly(first, second); }))
      << "after the second member joined: first " << describe(first.assigned) << ", second "
      << describe(second.assigned);

  // Every record goes to the one member that owns its partition.
  std::vector<KafkaRecord> records;
  for (int i = 0; i < 40; ++i) {
    records.push_back({.key = "app" + std::to_string(i) + ":1.0", .value = std::to_string(i)});
  }
  auto sent = produceAll(broker().bootstrap(), topic, records);
  ASSERT_TRUE(sent) << sent.error().message();
  ASSERT_TRUE(
      pollUntil({&first, &second}, [&] { return first.received.size() + second.received.size() >= records.size(); }))
      << "received " << first.received.size() + second.received.size() << " of 40";
  for (size_t i = 0; i < 5; ++i) {  // a short grace period in which nothing more may arrive
    first.poll(std::chrono::milliseconds(100));
    second.poll(std::chrono::milliseconds(100));
  }
  std::set<std::string> values;
  for (const Member* member : {&first, &second}) {
    for (const auto& [partition, value] : member->received) {
      EXPECT_TRUE(member->assigned.count(partition))
          << "record " << value << " of partition " << partition << " reached a non-owner";
      EXPECT_TRUE(values.insert(value).second) << "record " << value << " delivered twice";
    }
  }
  EXPECT_EQ(values.size(), records.size());
  EXPECT_FALSE(first.received.empty());
  EXPECT_FALSE(second.received.empty());

  second.close();
  ASSERT_TRUE(pollUntil({&first}, [&] { return first.assigned.size() == kPartitions; }))
      << "after the second member left, the first owns " << describe(first.assigned);
}

TEST_P(ConsumerGroupTest, StaticMemberRestartKeepsItsPartitionsWithoutRebalance) {
  const std::string strategy = GetParam();
  const std::string topic = unique("group.events");
  const std::string group = unique("restack");
  ASSERT_TRUE(broker().createTopic(topic, kPartitions));

  Member steady(broker().bootstrap(), topic, group, strategy, "restack-0");
  Member restarting(broker().bootstrap(), topic, group, strategy, "restack-1");
  ASSERT_TRUE(pollUntil({&steady, &restarting}, [&] { return splitEvenly(steady, restarting); }))
      << "steady " << describe(steady.assigned) << ", restarting " << describe(restarting.assigned);
  // Let any follow-up round of the join settle before counting rebalances.
  pollUntil({&steady, &restarting}, [] { return false; }, std::chrono::seconds(2));
  const std::set<int> before = restarting.assigned;
  const int steady_assignments = steady.assignments;

  restarting.close();  // a pod restart: no LeaveGroup for a static member
  Member restarted(broker().bootstrap(), topic, group, strategy, "restack-1");
  ASSERT_TRUE(pollUntil({&steady, &restarted}, [&] { return restarted.assigned == before; }))
      << "the restarted member got " << describe(restarted.assigned) << ", had " << describe(before);
  pollUntil({&steady, &restarted}, [] { return false; }, std::chrono::seconds(2));
  EXPECT_EQ(steady.assignments, steady_assignments) << "the other member was rebalanced";
  EXPECT_EQ(steady.assigned.size(), static_cast<size_t>(kPartitions / 2));
}

INSTANTIATE_TEST_SUITE_P(Strategies, ConsumerGroupTest, ::testing::Values("range", "cooperative-sticky"),
                         [](const auto& info) { return std::string(info.param) == "range" ? "Eager" : "Cooperative"; });

}  // namespace
}  // namespace restack::testkafka
