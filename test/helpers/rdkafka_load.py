#!/usr/bin/python3
# A librdkafka (confluent-kafka) acks=all producer, idempotent unless --no-idempotence, for the
# replication tests and npm run chaos: it sends records with unique keys at a steady rate until
# SIGTERM (or --seconds), and prints one JSON line per delivery report: {"k": key, "p": partition,
# "o": offset, "t": ms} when acknowledged, {"k": key, "e": error} when not, and {"fatal": error}
# for a fatal producer error.
# Run under /usr/bin/python3 (Debian's python3-confluent-kafka).
import argparse
import json
import signal
import sys
import time

from confluent_kafka import Producer


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--prefix", default="rd")
    ap.add_argument("--rate", type=float, default=100.0, help="records per second")
    ap.add_argument("--seconds", type=float, default=300.0, help="hard cap on the run")
    ap.add_argument("--no-idempotence", action="store_true",
                    help="a plain acks=all producer (a retried batch may be written twice)")
    a = ap.parse_args()

    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    signal.signal(signal.SIGINT, lambda *_: stop.__setitem__(0, True))

    def on_error(err):
        if err.fatal():
            emit({"fatal": str(err)})
            stop[0] = True

    p = Producer({
        "bootstrap.servers": a.bootstrap,
        "client.id": "replication-rdkafka",
        "enable.idempotence": not a.no_idempotence,
        "acks": "all",
        "linger.ms": 5,
        "message.timeout.ms": 60000,
        "request.timeout.ms": 5000,
        "retry.backoff.ms": 100,
        "topic.metadata.refresh.interval.ms": 1000,
        "reconnect.backoff.ms": 100,
        "reconnect.backoff.max.ms": 1000,
        "error_cb": on_error,
    })

    def done(err, msg):
        k = msg.key().decode()
        if err is not None:
            emit({"k": k, "e": str(err)})
        else:
            emit({"k": k, "p": msg.partition(), "o": msg.offset(), "t": int(time.time() * 1000)})

    deadline = time.time() + a.seconds
    gap = 1.0 / a.rate
    i = 0
    nxt = time.time()
    while not stop[0] and time.time() < deadline:
        key = f"{a.prefix}-{i}"
        try:
            p.produce(a.topic, key=key, value=key.encode(), on_delivery=done)
            emit({"s": key, "t": int(time.time() * 1000)})
            i += 1
        except BufferError:
            pass
        nxt += gap
        p.poll(max(0.0, nxt - time.time()))
    left = p.flush(30)
    emit({"end": i, "unflushed": left})


if __name__ == "__main__":
    main()
