#!/usr/bin/python3
# confluent-kafka (librdkafka) side of the compatibility suite. One operation per run; output is
# JSON lines the TypeScript tests check. Run under /usr/bin/python3 (Debian's python3-confluent-kafka).
import json
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from compat_common import base_args, emit, record_value


def conf(a, extra=None):
    c = {"bootstrap.servers": a.bootstrap, "client.id": "compat-confluent"}
    c.update(extra or {})
    return c


def produce(a):
    extra = {"acks": "all" if a.acks == "all" else a.acks, "linger.ms": 5,
             "compression.type": a.codec}
    if a.idempotent:
        extra["enable.idempotence"] = True
    p = Producer(conf(a, extra))
    errors = []
    acked = [0]

    def done(err, _msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked[0] += 1

    for i in range(a.count):
        key = f"{a.prefix}-{i}"
        kw = {}
        if a.partition >= 0:
            kw["partition"] = a.partition
        for _ in range(1000):
            try:
                p.produce(a.topic, key=key, value=record_value(a.prefix, i, a.size),
                          headers=[("i", str(i).encode()), ("src", b"confluent")],
                          on_delivery=done, **kw)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    left = p.flush(60)
    emit({"produced": acked[0], "errors": errors[:5], "unflushed": left})


def consume(a):
    """Every record of every partition from the beginning, without a group."""
    c = Consumer(conf(a, {"group.id": "compat-unused", "enable.auto.commit": False,
                          "check.crcs": True, "auto.offset.reset": "earliest"}))
    md = c.list_topics(a.topic, timeout=10)
    parts = sorted(md.topics[a.topic].partitions)
    c.assign([TopicPartition(a.topic, p, -2) for p in parts])  # -2: OFFSET_BEGINNING
    n = 0
    deadline = time.time() + a.timeout
    while n < a.expect and time.time() < deadline:
        for m in c.consume(500, 0.5):
            if m.error():
                emit({"error": str(m.error())})
                continue
            h = {k: v.decode() for k, v in (m.headers() or [])}
            emit({"p": m.partition(), "o": m.offset(), "k": m.key().decode(),
                  "v": m.value().decode(), "h": h})
            n += 1
    c.close()
    emit({"done": n})


def member(a):
    """A group member: processes records, commits each batch synchronously, leaves on SIGTERM."""
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    c = Consumer(conf(a, {"group.id": a.group, "enable.auto.commit": False,
                          "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
                          "heartbeat.interval.ms": 500,
                          "partition.assignment.strategy": "range"}))
    c.subscribe([a.topic])
    processed = 0
    while not stop[0] and (a.max <= 0 or processed < a.max):
        batch = c.consume(min(100, a.max - processed) if a.max > 0 else 100, 0.2)
        last = {}
        for m in batch:
            if m.error():
                continue
            emit({"ev": "rec", "p": m.partition(), "o": m.offset(), "k": m.key().decode(),
                  "t": time.time_ns()})
            last[m.partition()] = m.offset()
            processed += 1
        if last:
            offs = [TopicPartition(a.topic, p, o + 1) for p, o in last.items()]
            try:
                c.commit(offsets=offs, asynchronous=False)
                for tp in offs:
                    emit({"ev": "commit", "p": tp.partition, "o": tp.offset, "t": time.time_ns()})
            except KafkaException as e:
                emit({"ev": "commit-failed", "error": str(e)})
    c.close()
    emit({"ev": "left", "processed": processed})


def admin(a):
    ad = AdminClient(conf(a))
    name = a.topic
    fs = ad.create_topics([NewTopic(name, 3, 1, config={"retention.ms": "3600000"})])
    fs[name].result(10)
    listed = name in ad.list_topics(timeout=10).topics
    parts = len(ad.list_topics(name, timeout=10).topics[name].partitions)
    res = ConfigResource(ConfigResource.Type.TOPIC, name)
    cfg = ad.describe_configs([res])[res].result(10)
    retention = cfg["retention.ms"].value
    ad.delete_topics([name])[name].result(10)
    gone = False
    for _ in range(50):
        if name not in ad.list_topics(timeout=10).topics:
            gone = True
            break
        time.sleep(0.1)
    emit({"created": True, "listed": listed, "partitions": parts, "retention.ms": retention,
          "deleted": gone})


if __name__ == "__main__":
    args = base_args().parse_args()
    {"produce": produce, "consume": consume, "member": member, "admin": admin}[args.op](args)
    sys.stdout.flush()
