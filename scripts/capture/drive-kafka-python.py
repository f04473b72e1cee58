"""kafka-python 2.0.2 flows against the fake broker at argv[1]."""
import sys
from kafka import KafkaProducer, KafkaConsumer, KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic, NewPartitions, ConfigResource, ConfigResourceType
from kafka.structs import OffsetAndMetadata

B = sys.argv[1]
def step(name, fn):
    try:
        fn()
    except Exception as e:
        print(f"kafka-python step {name}: {e!r}", file=sys.stderr)

def produce():
    p = KafkaProducer(bootstrap_servers=B, request_timeout_ms=4000, api_version_auto_timeout_ms=3000)
    for i in range(3):
        p.send("kp-a", key=b"k", value=b"value-%d" % i)
    p.flush(5)
    p.close(2)

def consume():
    c = KafkaConsumer("kp-a", bootstrap_servers=B, group_id="kp-group", auto_offset_reset="earliest",
                      consumer_timeout_ms=3000, enable_auto_commit=False, api_version_auto_timeout_ms=3000)
    for _ in c:
        break
    c.commit()
    c.committed(TopicPartition("kp-a", 0))
    c.end_offsets([TopicPartition("kp-a", 0)])
    c.close()

def old_commits():
    # api_version pinned below 0.9: no group management, so commit() of an assigned partition is
    # a simple commit, OffsetCommit v0 at (0, 8, 1) and v1 (generation -1, no member) at (0, 8, 2).
    for av in [(0, 8, 1), (0, 8, 2)]:
        c = KafkaConsumer(bootstrap_servers=B, group_id="kp-old", api_version=av,
                          enable_auto_commit=False, session_timeout_ms=10000,
                          max_poll_interval_ms=10000, request_timeout_ms=11000)
        tp = TopicPartition("kp-a", 0)
        c.assign([tp])
        c.commit({tp: OffsetAndMetadata(2, "kp-meta")})
        c.close()

def admin():
    a = KafkaAdminClient(bootstrap_servers=B, request_timeout_ms=4000, api_version_auto_timeout_ms=3000)
    a.create_topics([NewTopic("kp-t", 2, 1)])
    a.create_partitions({"kp-t": NewPartitions(3)})
    a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-t")])
    a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-t", configs={"retention.ms": "1000"})])
    a.list_consumer_groups()
    step("describe groups", lambda: a.describe_consumer_groups(["kp-group"]))
    step("group offsets", lambda: a.list_consumer_group_offsets("kp-group"))
    step("delete groups", lambda: a.delete_consumer_groups(["kp-group"]))
    a.delete_topics(["kp-t"])
    a.close()

def sasl():
    p = KafkaProducer(bootstrap_servers=B, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                      sasl_plain_username="alice", sasl_plain_password="secret", request_timeout_ms=4000,
                      api_version_auto_timeout_ms=3000)
    p.send("kp-a", b"s")
    p.flush(3)
    p.close(2)

step("produce", produce)
step("consume", consume)
step("old commits", old_commits)
step("admin", admin)
step("sasl", sasl)
