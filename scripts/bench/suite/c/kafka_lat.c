// End-to-end latency against a Kafka broker (librdkafka, the library kcat uses):
//   kafka_lat BOOTSTRAP TOPIC RATE SECONDS SIZE ACKS
// A producer (linger.ms=0) sends RATE records/s to partition 0, paced in 1 ms ticks; a consumer on
// its own connection reads the partition from the beginning with default fetch settings
// (fetch.wait.max.ms=500, so a consumer woken only by the fetch timeout shows up as ~500 ms).
// Latency = receive time − the CLOCK_MONOTONIC stamp in the first 8 payload bytes.
// Before the paced run, one warm-up record (stamp -1) goes through and the run starts only once
// the consumer has received it: JetStream's subscribe returns with its consumer ready, while
// librdkafka's consumer spends its first ~500 ms finding the leader and the start offset, which
// would otherwise show up as latency of the first records.
// Prints one JSON line. Every loop is bounded by the record count and a deadline.
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t *lat;
static long total;
static volatile long got = 0;
static volatile int stop_consumer = 0;
static volatile int consumer_ready = 0;
static long delivery_errors = 0;
static const char *bootstrap, *topic;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

static rd_kafka_t *make(rd_kafka_type_t type, const char *acks) {
  char err[512];
  rd_kafka_conf_t *c = rd_kafka_conf_new();
  if (rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof err) != RD_KAFKA_CONF_OK) goto bad;
  if (type == RD_KAFKA_PRODUCER) {
    if (rd_kafka_conf_set(c, "linger.ms", "0", err, sizeof err) != RD_KAFKA_CONF_OK) goto bad;
    if (rd_kafka_conf_set(c, "acks", acks, err, sizeof err) != RD_KAFKA_CONF_OK) goto bad;
    rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
  }
  rd_kafka_t *rk = rd_kafka_new(type, c, err, sizeof err);
  if (!rk) goto bad;
  return rk;
bad:
  fprintf(stderr, "kafka_lat: %s\n", err);
  exit(1);
}

// Producer-side latency (produce call → acknowledgement), to tell a slow producer path from a slow
// consumer path; called on the producer's thread from rd_kafka_poll.
static int64_t *ack_lat;
static long acked = 0;
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk; (void)opaque;
  if (m->err) { delivery_errors++; return; }
  if (m->len >= 8 && acked < total) {
    int64_t sent;
    memcpy(&sent, m->payload, 8);
    if (sent != -1) ack_lat[acked++] = now_ns() - sent;
  }
}

static void *consume(void *arg) {
  (void)arg;
  rd_kafka_t *rk = make(RD_KAFKA_CONSUMER, NULL);
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
  if (rd_kafka_consume_start(t, 0, RD_KAFKA_OFFSET_BEGINNING) != 0) {
    fprintf(stderr, "kafka_lat: consume_start: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
    exit(1);
  }
  while (!stop_consumer && got < total) {
    rd_kafka_message_t *m = rd_kafka_consume(t, 0, 100);
    if (!m) continue;
    int64_t now = now_ns();
    if (!m->err && m->len >= 8) {
      int64_t sent;
      memcpy(&sent, m->payload, 8);
      if (sent == -1) {
        consumer_ready = 1;  // the warm-up record
      } else {
        lat[got] = now - sent;
        got = got + 1;
      }
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consume_stop(t, 0);
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  return NULL;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: kafka_lat BOOTSTRAP TOPIC RATE SECONDS SIZE ACKS\n");
    return 2;
  }
  bootstrap = argv[1];
  topic = argv[2];
  long rate = atol(argv[3]);
  double secs = atof(argv[4]);
  int size = atoi(argv[5]);
  if (rate < 1 || secs <= 0 || secs > 600 || size < 8 || size > 1 << 20) return 2;
  total = (long)(rate * secs);
  lat = calloc(total, sizeof(int64_t));
  ack_lat = calloc(total, sizeof(int64_t));
  rd_kafka_t *p = make(RD_KAFKA_PRODUCER, argv[6]);
  pthread_t th;
  pthread_create(&th, NULL, consume, NULL);
  rd_kafka_topic_t *t = rd_kafka_topic_new(p, topic, NULL);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  int64_t warm = -1;
  memcpy(payload, &warm, 8);
  if (rd_kafka_produce(t, 0, RD_KAFKA_MSG_F_COPY, payload, size, NULL, 0, NULL) != 0) {
    fprintf(stderr, "kafka_lat: warm-up produce failed\n");
    return 1;
  }
  rd_kafka_flush(p, 10000);
  for (int i = 0; i < 1000 && !consumer_ready; i++) {  // at most 10 s
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  if (!consumer_ready) {
    fprintf(stderr, "kafka_lat: the consumer did not receive the warm-up record within 10 s\n");
    return 1;
  }
  int64_t t0 = now_ns() + 10000000LL;
  long sent = 0;
  for (long tick = 0; sent < total; tick++) {
    int64_t due = t0 + tick * 1000000LL;
    struct timespec ts = {due / 1000000000LL, due % 1000000000LL};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    long upto = (long)((double)(tick + 1) * rate / 1000.0);
    if (upto > total) upto = total;
    for (; sent < upto; sent++) {
      int64_t n = now_ns();
      memcpy(payload, &n, 8);
      for (int tries = 0; tries < 1000; tries++) {
        if (rd_kafka_produce(t, 0, RD_KAFKA_MSG_F_COPY, payload, size, NULL, 0, NULL) == 0) break;
        rd_kafka_poll(p, 1);  // queue full: serve callbacks and retry (bounded)
      }
    }
    rd_kafka_poll(p, 0);
  }
  int64_t t_sent = now_ns();
  rd_kafka_flush(p, 60000);
  long unflushed = rd_kafka_outq_len(p);
  for (int i = 0; i < 3000 && got < total; i++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  stop_consumer = 1;
  pthread_join(th, NULL);
  long n = got;
  qsort(lat, n, sizeof(int64_t), cmp64);
  double p50 = n ? lat[(long)(n * 0.50)] / 1e3 : -1;
  double p99 = n ? lat[(long)(n * 0.99)] / 1e3 : -1;
  double p999 = n ? lat[(long)(n * 0.999)] / 1e3 : -1;
  double mx = n ? lat[n - 1] / 1e3 : -1;
  qsort(ack_lat, acked, sizeof(int64_t), cmp64);
  double a50 = acked ? ack_lat[(long)(acked * 0.50)] / 1e3 : -1;
  double a99 = acked ? ack_lat[(long)(acked * 0.99)] / 1e3 : -1;
  printf("{\"n\":%ld,\"received\":%ld,\"send_ms\":%.3f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,\"unflushed\":%ld,\"delivery_errors\":%ld,\"ack_p50_us\":%.1f,\"ack_p99_us\":%.1f}\n",
         total, n, (t_sent - t0) / 1e6, p50, p99, p999, mx, unflushed, (long)delivery_errors, a50, a99);
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(p);
  return n == total && unflushed == 0 && delivery_errors == 0 ? 0 : 1;
}
