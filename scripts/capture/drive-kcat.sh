#!/usr/bin/env bash
# kcat (librdkafka 2.0.2) flows against the fake broker at $1.
B="$1"; T=6
echo -e "one\ntwo\nthree" | timeout $T kcat -b "$B" -P -t kc-a -K: >/dev/null 2>&1
echo -e "k1:v1\nk2:v2" | timeout $T kcat -b "$B" -P -t kc-a -K: -X enable.idempotence=true >/dev/null 2>&1
echo -e "acks0" | timeout $T kcat -b "$B" -P -t kc-a -X acks=0 >/dev/null 2>&1
timeout $T kcat -b "$B" -C -t kc-a -o beginning -e >/dev/null 2>&1
timeout $T kcat -b "$B" -C -t kc-a -o -1 -e >/dev/null 2>&1
timeout $T kcat -b "$B" -G kc-group kc-a -o beginning -e -X enable.auto.commit=true -X auto.commit.interval.ms=200 >/dev/null 2>&1
timeout $T kcat -b "$B" -L >/dev/null 2>&1
echo -e "sasl" | timeout $T kcat -b "$B" -P -t kc-a -X security.protocol=SASL_PLAINTEXT -X sasl.mechanisms=PLAIN -X sasl.username=alice -X sasl.password=secret >/dev/null 2>&1
exit 0
