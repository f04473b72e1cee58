#!/usr/bin/python3
# confluent-kafka half of scripts/bench/kafka.ts: produce or consume N records as fast as the
# client goes, or measure end-to-end latency with linger.ms=0. Prints one JSON line.
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition


def main():
    op, bootstrap, topic, n, size, acks = sys.argv[1:7]
    n, size = int(n), int(size)
    if op == "produce":
        p = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5,
                      "batch.size": 1 << 20, "queue.buffering.max.messages": 1_000_000})
        value = b"x" * size
        t0 = time.perf_counter()
        for _ in range(n):
            while True:
                try:
                    p.produce(topic, value)
                    break
                except BufferError:
                    p.poll(0.01)
        left = p.flush(120)
        dt = time.perf_counter() - t0
        print(json.dumps({"seconds": dt, "unflushed": left}))
    elif op == "consume":
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False,
                      "fetch.max.bytes": 64 << 20})
        c.assign([TopicPartition(topic, 0, -2)])
        got = 0
        t0 = time.perf_counter()
        deadline = time.time() + 120
        while got < n and time.time() < deadline:
            for m in c.consume(10000, 0.5):
                if not m.error():
                    got += 1
        dt = time.perf_counter() - t0
        c.close()
        print(json.dumps({"seconds": dt, "records": got}))
    elif op == "latency":
        # One record at a time, linger.ms=0, each carrying its send time; a consumer on the
        # same host reads them as they land. Paced so the latency is not queueing delay.
        p = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 0})
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-lat",
                      "enable.auto.commit": False, "fetch.wait.max.ms": 100,
                      "fetch.min.bytes": 1})
        c.assign([TopicPartition(topic, 0, -1)])  # from the end
        c.consume(1, 1.0)  # settle the assignment
        pad = b"x" * max(0, size - 20)
        lat = []
        deadline = time.time() + 120
        sent = 0
        while len(lat) < n and time.time() < deadline:
            if sent < n and sent - len(lat) < 10:
                p.produce(topic, str(time.time_ns()).encode().ljust(20) + pad)
                p.poll(0)
                sent += 1
            for m in c.consume(100, 0.001):
                if not m.error():
                    lat.append((time.time_ns() - int(m.value()[:20])) / 1e6)
        p.flush(10)
        c.close()
        lat.sort()
        print(json.dumps({"p50_ms": lat[len(lat) // 2], "p99_ms": lat[int(len(lat) * 0.99)],
                          "samples": len(lat)}))


main()
