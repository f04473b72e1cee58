"""confluent-kafka-python 1.7 (librdkafka 2.0.2) flows against the fake broker at argv[1]."""
import sys, time
from confluent_kafka import Producer, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, NewPartitions, ConfigResource

B = sys.argv[1]
def step(name, fn):
    try:
        fn()
    except Exception as e:  # keep going: the goal is to make each request be sent once
        print(f"confluent step {name}: {e!r}", file=sys.stderr)

def admin():
    a = AdminClient({"bootstrap.servers": B})
    for f in a.create_topics([NewTopic("cf-t", 2, 1, config={"retention.ms": "1000"})], request_timeout=5).values():
        f.result(6)
    for f in a.create_partitions([NewPartitions("cf-t", 3)], request_timeout=5).values():
        f.result(6)
    for f in a.describe_configs([ConfigResource("topic", "cf-t")], request_timeout=5).values():
        f.result(6)
    for f in a.alter_configs([ConfigResource("topic", "cf-t", set_config={"retention.ms": "2000"})], request_timeout=5).values():
        f.result(6)
    a.list_topics(timeout=5)
    a.list_groups(timeout=5)
    for f in a.delete_topics(["cf-t"], request_timeout=5).values():
        f.result(6)

def produce():
    p = Producer({"bootstrap.servers": B, "enable.idempotence": True, "linger.ms": 5})
    for i in range(3):
        p.produce("cf-a", key=b"k%d" % i, value=b"v" * 10, headers=[("h", b"x")])
    p.flush(5)

def consume():
    c = Consumer({"bootstrap.servers": B, "group.id": "cf-group", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": 6000})
    c.subscribe(["cf-a"])
    end = time.time() + 4
    got = None
    while time.time() < end:
        m = c.poll(0.3)
        if m is not None and not m.error():
            got = m
            break
    if got is not None:
        c.commit(message=got, asynchronous=False)
    tp = TopicPartition("cf-a", 0)
    c.committed([tp], timeout=3)
    c.get_watermark_offsets(tp, timeout=3)
    c.offsets_for_times([TopicPartition("cf-a", 0, 1)], timeout=3)
    c.close()

step("admin", admin)
step("produce", produce)
step("consume", consume)
