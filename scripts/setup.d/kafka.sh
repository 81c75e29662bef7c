# Apache Kafka (broker + controller in KRaft mode, and its console tools) from Maven Central into
# .deps/kafka/libs, for the tests labelled `kafka` (tests/kafka_harness and the worker's
# integration tests), started by scripts/kafka-broker.sh. Sourced by scripts/setup.sh with
# `set -euo pipefail` and cwd = repo root; idempotent: does nothing when the jars are present.
# Needs: mvn and a Java 17 runtime on PATH (Debian: maven, openjdk-17-jre-headless).
#
# Why 3.9: the last line that still speaks every protocol version librdkafka 2.0.2 (Debian 12)
# uses; Kafka 4.0 dropped old request versions (KIP-896). 3.9 runs KRaft without ZooKeeper.
kafka_version=3.9.1
kafka_dir=.deps/kafka
# Bump the revision when the dependency list changes, so existing installs refresh.
kafka_stamp="$kafka_dir/libs/.complete-$kafka_version-r2"
if [[ ! -f "$kafka_stamp" ]]; then
  for kafka_tool in mvn java; do
    command -v "$kafka_tool" >/dev/null || {
      echo "kafka.sh: '$kafka_tool' is missing (apt-get install maven openjdk-17-jre-headless)" >&2
      return 1
    }
  done
  mkdir -p "$kafka_dir"
  # A throwaway pom: kafka_2.13 is the broker (kafka.Kafka, kafka.tools.StorageTool,
  # kafka.tools.ConsoleProducer) and pulls in kafka-clients, raft, metadata, storage, Scala and
  # Jackson. kafka-tools adds the command-line tools (org.apache.kafka.tools.TopicCommand,
  # ConsumerGroupCommand, …) for inspecting a test broker. The broker logs through slf4j; slf4j-reload4j (with reload4j, the maintained log4j
  # 1.2) is the binding Kafka's own distribution ships.
  cat >"$kafka_dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>restack.setup</groupId><artifactId>kafka-deps</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$kafka_version</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$kafka_version</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
POM
  # Download next to the final folder and swap it in, so an interrupted run never leaves a
  # half-filled libs/ that looks complete.
  rm -rf "$kafka_dir/libs.partial"
  mvn -q -B -Dstyle.color=never -f "$kafka_dir/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory=libs.partial -DincludeScope=runtime
  rm -rf "$kafka_dir/libs"
  mv "$kafka_dir/libs.partial" "$kafka_dir/libs"
  touch "$kafka_stamp"
fi
unset kafka_version kafka_dir kafka_stamp kafka_tool
