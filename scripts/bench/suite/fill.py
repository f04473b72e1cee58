"""Fills topics for W6: RECORDS records of SIZE bytes into every partition of every named topic.

usage: fill.py BOOTSTRAP PARTITIONS RECORDS SIZE TOPIC...
Prints one JSON line; exits 1 if any delivery failed. Bounded: one produce per record, one flush.
"""
import json
import sys
import time

from confluent_kafka import Producer


def main() -> int:
    bootstrap, partitions, records, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    topics = sys.argv[5:]
    failed = 0

    def on_delivery(err, _msg):
        nonlocal failed
        if err is not None:
            failed += 1

    p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5})
    value = b"x" * size
    t0 = time.monotonic()
    sent = 0
    for topic in topics:
        for part in range(partitions):
            for _ in range(records):
                for _attempt in range(2400):  # the local queue is full: wait up to 2 minutes
                    try:
                        p.produce(topic, value, partition=part, on_delivery=on_delivery)
                        break
                    except BufferError:
                        p.poll(0.05)
                else:
                    failed += 1
                sent += 1
            p.poll(0)
    left = p.flush(120)
    print(json.dumps({"sent": sent, "failed": failed, "unflushed": left, "s": time.monotonic() - t0}))
    return 0 if failed == 0 and left == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
