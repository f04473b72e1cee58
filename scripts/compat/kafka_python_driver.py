#!/usr/bin/python3
# kafka-python side of the compatibility suite (Debian's python3-kafka 2.0.2: no idempotent
# producer). Same operations and output as confluent_driver.py. Run under /usr/bin/python3.
import signal
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from compat_common import base_args, emit, record_value


def produce(a):
    p = KafkaProducer(bootstrap_servers=a.bootstrap, client_id="compat-kafka-python",
                      acks="all" if a.acks == "all" else int(a.acks), linger_ms=5,
                      compression_type=None if a.codec == "none" else a.codec,
                      max_in_flight_requests_per_connection=1, retries=5)
    futures = []
    for i in range(a.count):
        futures.append(p.send(a.topic, key=f"{a.prefix}-{i}".encode(),
                              value=record_value(a.prefix, i, a.size),
                              headers=[("i", str(i).encode()), ("src", b"kafka-python")],
                              partition=a.partition if a.partition >= 0 else None))
    p.flush(60)
    errors = []
    acked = 0
    for f in futures:
        try:
            f.get(timeout=30)
            acked += 1
        except KafkaError as e:
            errors.append(str(e))
    p.close()
    emit({"produced": acked, "errors": errors[:5], "unflushed": 0})


def consume(a):
    c = KafkaConsumer(bootstrap_servers=a.bootstrap, client_id="compat-kafka-python",
                      enable_auto_commit=False, check_crcs=True)
    parts = None
    for _ in range(100):
        parts = c.partitions_for_topic(a.topic)
        if parts:
            break
        time.sleep(0.1)
    tps = [TopicPartition(a.topic, p) for p in sorted(parts or [])]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    n = 0
    deadline = time.time() + a.timeout
    while n < a.expect and time.time() < deadline:
        for _tp, msgs in c.poll(timeout_ms=500, max_records=1000).items():
            for m in msgs:
                h = {k: v.decode() for k, v in (m.headers or [])}
                emit({"p": m.partition, "o": m.offset, "k": m.key.decode(),
                      "v": m.value.decode(), "h": h})
                n += 1
    c.close()
    emit({"done": n})


def member(a):
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    c = KafkaConsumer(a.topic, bootstrap_servers=a.bootstrap, client_id="compat-kafka-python",
                      group_id=a.group, enable_auto_commit=False, auto_offset_reset="earliest",
                      session_timeout_ms=6000, heartbeat_interval_ms=500)
    processed = 0
    while not stop[0] and (a.max <= 0 or processed < a.max):
        want = min(100, a.max - processed) if a.max > 0 else 100
        last = {}
        for tp, msgs in c.poll(timeout_ms=200, max_records=want).items():
            for m in msgs:
                emit({"ev": "rec", "p": m.partition, "o": m.offset, "k": m.key.decode(),
                      "t": time.time_ns()})
                last[tp.partition] = m.offset
                processed += 1
        if last:
            offs = {TopicPartition(a.topic, p): OffsetAndMetadata(o + 1, "") for p, o in last.items()}
            try:
                c.commit(offs)
                for tp, om in offs.items():
                    emit({"ev": "commit", "p": tp.partition, "o": om.offset, "t": time.time_ns()})
            except KafkaError as e:
                emit({"ev": "commit-failed", "error": str(e)})
    c.close()
    emit({"ev": "left", "processed": processed})


def admin(a):
    ad = KafkaAdminClient(bootstrap_servers=a.bootstrap, client_id="compat-kafka-python")
    name = a.topic
    ad.create_topics([NewTopic(name, 3, 1, topic_configs={"retention.ms": "3600000"})])
    listed = name in ad.list_topics()
    desc = ad.describe_topics([name])
    parts = len(desc[0]["partitions"])
    cfg = ad.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)])
    entries = cfg[0].resources[0][4]
    retention = next(e[1] for e in entries if e[0] == "retention.ms")
    ad.delete_topics([name])
    gone = False
    for _ in range(50):
        if name not in ad.list_topics():
            gone = True
            break
        time.sleep(0.1)
    ad.close()
    emit({"created": True, "listed": listed, "partitions": parts, "retention.ms": retention,
          "deleted": gone})


if __name__ == "__main__":
    args = base_args().parse_args()
    {"produce": produce, "consume": consume, "member": member, "admin": admin}[args.op](args)
    sys.stdout.flush()
