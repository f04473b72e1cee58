"""One SASL login by a real Python client, for test/kafka/sasl/listener.test.ts: produce a value,
read the topic back from the start, print one JSON line: {"values": [...]} or {"error": "..."}.

usage: clients.py confluent|kafka-python BOOTSTRAP PROTOCOL MECHANISM USER PASSWORD CAFILE TOPIC VALUE
"""
import json
import sys

client, bootstrap, protocol, mechanism, user, password, cafile, topic, value = sys.argv[1:10]


def confluent():
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    conf = {
        "bootstrap.servers": bootstrap,
        "security.protocol": protocol,
        "sasl.mechanisms": mechanism,
        "sasl.username": user,
        "sasl.password": password,
        "socket.timeout.ms": 5000,
    }
    if cafile != "-":
        conf["ssl.ca.location"] = cafile
    errors = []
    conf["error_cb"] = lambda e: errors.append(str(e))
    p = Producer({**conf, "message.timeout.ms": 8000})
    delivered = []
    p.produce(topic, value.encode(), callback=lambda err, msg: delivered.append(err))
    # A refused login is reported at once through error_cb; librdkafka would retry until its
    # timeout.
    for _ in range(100):
        if delivered or any("Authentication" in e for e in errors):
            break
        p.poll(0.1)
    if not delivered or delivered[0] is not None:
        raise RuntimeError("; ".join(errors) or str(delivered))
    c = Consumer({**conf, "group.id": "sasl-test", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    out = []
    for _ in range(50):
        m = c.poll(0.2)
        if m is None:
            if out:
                break
            continue
        if m.error():
            raise KafkaException(m.error())
        out.append(m.value().decode())
    c.close()
    return out


def kafka_python():
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    conf = dict(
        bootstrap_servers=bootstrap,
        security_protocol=protocol,
        sasl_mechanism=mechanism,
        sasl_plain_username=user,
        sasl_plain_password=password,
        request_timeout_ms=8000,
        api_version_auto_timeout_ms=2500,
    )
    if cafile != "-":
        conf["ssl_cafile"] = cafile
    p = KafkaProducer(**conf)
    p.send(topic, value.encode()).get(timeout=10)
    p.close()
    c = KafkaConsumer(**conf, consumer_timeout_ms=2000, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek(tp, 0)
    out = [m.value.decode() for m in c]
    c.close()
    return out


try:
    values = confluent() if client == "confluent" else kafka_python()
    print(json.dumps({"values": values}))
except Exception as e:  # the test reads the error's text
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
