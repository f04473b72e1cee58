// Replicated section, Kafka side (librdkafka, the library kcat uses):
//   repl_kafka lat   BOOTSTRAP TOPIC PARTITION ACKS WARMUP N SIZE
//     WARMUP records with up to 16 in flight (so the broker's hot paths are compiled), then N
//     records one at a time: produce, wait for the acknowledgement, next. Latency = produce call →
//     delivery report, on CLOCK_MONOTONIC.
//   repl_kafka pace  BOOTSTRAP TOPIC RATE SECONDS SIZE
//     acks=all records to partition 0 at RATE/s (1 ms ticks, linger.ms=0) for SECONDS; prints the
//     produce → acknowledgement latency of every record (p50/p99) once all are acknowledged.
//   repl_kafka watch BOOTSTRAP TOPIC PARTITIONS SIZE GAP_MS MAX_SECONDS
//     One acks=all record in flight per partition, the next sent when the previous is
//     acknowledged, until `quit` on stdin or MAX_SECONDS. Commands on stdin, one per line:
//       kill PID PARTITION BROKER  SIGKILL PID now, and report the first acknowledgement on
//                                  PARTITION from a broker other than BROKER (the failover as the
//                                  client sees it; same clock as the kill)
//       mark                       start a new window of gap statistics
//       gaps                       print, per partition, acks, the longest time without an ack and
//                                  the sum of those longer than GAP_MS, since the last mark
//       quit
// Each report is one JSON line on stdout. Every loop is bounded by a count and a deadline.
#include <librdkafka/rdkafka.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what, const char *err) {
  fprintf(stderr, "repl_kafka: %s: %s\n", what, err);
  exit(1);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

static rd_kafka_t *make_producer(const char *bootstrap, const char *acks, const char *timeout_ms) {
  char err[512];
  rd_kafka_conf_t *c = rd_kafka_conf_new();
  const char *kv[][2] = {
      {"bootstrap.servers", bootstrap},
      {"acks", acks},
      {"linger.ms", "0"},
      {"message.timeout.ms", timeout_ms},
  };
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
    if (rd_kafka_conf_set(c, kv[i][0], kv[i][1], err, sizeof err) != RD_KAFKA_CONF_OK) {
      die(kv[i][0], err);
    }
  }
  // REPL_KAFKA_DEBUG=broker,metadata,msg... for librdkafka's own log on stderr (diagnosis only).
  const char *dbg = getenv("REPL_KAFKA_DEBUG");
  if (dbg && *dbg && rd_kafka_conf_set(c, "debug", dbg, err, sizeof err) != RD_KAFKA_CONF_OK) {
    die("debug", err);
  }
  rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
  if (!rk) die("rd_kafka_new", err);
  return rk;
}

// ---- delivery bookkeeping (callbacks run on this thread, inside rd_kafka_poll) -------------

#define MAX_PARTS 64
static long inflight = 0;
static long delivered = 0;
static long errors = 0;
static int64_t last_ack_ns = 0;
static rd_kafka_resp_err_t last_err = RD_KAFKA_RESP_ERR_NO_ERROR;

// watch mode
static int watch = 0;
static int nparts = 0;
static int busy[MAX_PARTS];
static long acks[MAX_PARTS];
static int64_t last_ack[MAX_PARTS];   // last acknowledgement on the partition (ns), 0: none yet
static int64_t max_gap[MAX_PARTS];
static int64_t sum_gap[MAX_PARTS];
static long long_gaps[MAX_PARTS];
static int64_t window_start = 0;
static int64_t gap_ns = 0;
static int gap_log = 0;
static int armed_part = -1;
static int armed_broker = -1;
static int64_t armed_at = 0;

// pace mode: the send time of every record rides in its opaque; latencies land here.
static int64_t *pace_lat = NULL;
static long pace_n = 0, pace_cap = 0;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk; (void)opaque;
  int64_t t = now_ns();
  inflight--;
  if (m->err) {
    errors++;
    last_err = m->err;
  } else {
    delivered++;
    last_ack_ns = t;
    if (pace_lat && pace_n < pace_cap) pace_lat[pace_n++] = t - (int64_t)(intptr_t)m->_private;
  }
  if (!watch) return;
  int p = m->partition;
  if (p < 0 || p >= nparts) return;
  busy[p] = 0;
  if (m->err) return;
  acks[p]++;
  int64_t from = last_ack[p] > window_start ? last_ack[p] : window_start;
  int64_t gap = t - from;
  if (gap > max_gap[p]) max_gap[p] = gap;
  if (gap > gap_ns) {
    sum_gap[p] += gap;
    long_gaps[p]++;
    if (gap_log) {  // REPL_KAFKA_GAPLOG=1: each long gap with wall-clock ends (diagnosis only)
      struct timespec rt;
      clock_gettime(CLOCK_REALTIME, &rt);
      double end = rt.tv_sec + rt.tv_nsec / 1e9;
      fprintf(stderr, "GAP p%d %.3f -> %.3f (%.1f ms) by %d\n", p, end - gap / 1e9, end, gap / 1e6,
              (int)rd_kafka_message_broker_id(m));
    }
  }
  last_ack[p] = t;
  int32_t by = rd_kafka_message_broker_id(m);
  if (p == armed_part && by != armed_broker && t > armed_at) {
    printf("{\"ev\":\"failover\",\"partition\":%d,\"ms\":%.3f,\"by\":%d}\n", p,
           (t - armed_at) / 1e6, (int)by);
    fflush(stdout);
    armed_part = -1;
  }
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int produce(rd_kafka_topic_t *t, int32_t part, char *payload, int size) {
  if (rd_kafka_produce(t, part, RD_KAFKA_MSG_F_COPY, payload, size, NULL, 0, NULL) != 0) return -1;
  inflight++;
  return 0;
}

static int cmd_lat(int argc, char **argv) {
  if (argc != 9) return 2;
  const char *bootstrap = argv[2], *topic = argv[3];
  int part = atoi(argv[4]);
  const char *ack = argv[5];
  long warm = atol(argv[6]), n = atol(argv[7]);
  int size = atoi(argv[8]);
  if (part < 0 || warm < 0 || n < 1 || n > 10000000 || size < 1 || size > 1 << 20) return 2;
  rd_kafka_t *rk = make_producer(bootstrap, ack, "30000");
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  int64_t deadline = now_ns() + 300LL * 1000000000LL;
  // Warm-up: up to 16 records in flight.
  int64_t w0 = now_ns();
  for (long i = 0; i < warm && now_ns() < deadline;) {
    if (inflight < 16 && produce(t, part, payload, size) == 0) {
      i++;
      rd_kafka_poll(rk, 0);
    } else {
      rd_kafka_poll(rk, 1);
    }
  }
  rd_kafka_flush(rk, 30000);
  int64_t w1 = now_ns();
  long warm_errors = errors;
  int64_t *lat = calloc(n, sizeof(int64_t));
  long got = 0;
  int64_t m0 = now_ns();
  for (long i = 0; i < n && now_ns() < deadline; i++) {
    long before = delivered + errors;
    int64_t t0 = now_ns();
    if (produce(t, part, payload, size) != 0) die("produce", rd_kafka_err2str(rd_kafka_last_error()));
    while (delivered + errors == before && now_ns() < deadline) rd_kafka_poll(rk, 1000);
    if (delivered + errors == before) break;
    if (errors > warm_errors) break;
    lat[got++] = last_ack_ns - t0;
  }
  int64_t m1 = now_ns();
  qsort(lat, got, sizeof(int64_t), cmp64);
#define Q(q) (got ? lat[(long)(got * (q)) < got ? (long)(got * (q)) : got - 1] / 1e3 : -1)
  printf("{\"n\":%ld,\"got\":%ld,\"errors\":%ld,\"error\":\"%s\",\"warm_ms\":%.1f,\"run_ms\":%.1f,"
         "\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f}\n",
         n, got, errors, rd_kafka_err2str(last_err), (w1 - w0) / 1e6, (m1 - m0) / 1e6, Q(0.5),
         Q(0.9), Q(0.99), Q(0.999), got ? lat[got - 1] / 1e3 : -1);
#undef Q
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  return got == n && errors == 0 ? 0 : 1;
}

static int cmd_pace(int argc, char **argv) {
  if (argc != 7) return 2;
  const char *bootstrap = argv[2], *topic = argv[3];
  long rate = atol(argv[4]);
  double secs = atof(argv[5]);
  int size = atoi(argv[6]);
  if (rate < 1 || rate > 10000000 || secs <= 0 || secs > 600 || size < 1 || size > 1 << 20) return 2;
  long total = (long)(rate * secs);
  pace_cap = total;
  pace_lat = calloc(total, sizeof(int64_t));
  rd_kafka_t *rk = make_producer(bootstrap, "all", "60000");
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  // One record first, so the run starts with the leader known and the connection up.
  if (produce(t, 0, payload, size) != 0) die("produce", "first record");
  rd_kafka_flush(rk, 30000);
  pace_n = 0;
  int64_t t0 = now_ns() + 1000000LL;
  long sent = 0, queue_full = 0;
  for (long tick = 0; sent < total && tick < (long)(secs * 1000) + 60000; tick++) {
    int64_t due = t0 + tick * 1000000LL;
    struct timespec ts = {due / 1000000000LL, due % 1000000000LL};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    long upto = (long)((double)(tick + 1) * rate / 1000.0);
    if (upto > total) upto = total;
    for (; sent < upto; sent++) {
      int64_t n = now_ns();
      if (rd_kafka_produce(t, 0, RD_KAFKA_MSG_F_COPY, payload, size, NULL, 0, (void *)(intptr_t)n) != 0) {
        queue_full++;
        break;  // the producer is behind: this tick's rest goes out with the next one
      }
      inflight++;
    }
    rd_kafka_poll(rk, 0);
  }
  int64_t t_sent = now_ns();
  rd_kafka_flush(rk, 60000);
  long got = pace_n;
  qsort(pace_lat, got, sizeof(int64_t), cmp64);
#define Q(q) (got ? pace_lat[(long)(got * (q)) < got ? (long)(got * (q)) : got - 1] / 1e3 : -1)
  printf("{\"n\":%ld,\"acked\":%ld,\"errors\":%ld,\"send_ms\":%.1f,\"queue_full\":%ld,"
         "\"ack_p50_us\":%.1f,\"ack_p99_us\":%.1f,\"ack_max_us\":%.1f}\n",
         total, got, errors, (t_sent - t0) / 1e6, queue_full, Q(0.5), Q(0.99),
         got ? pace_lat[got - 1] / 1e3 : -1);
#undef Q
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  return got == total && errors == 0 ? 0 : 1;
}

static void print_gaps(void) {
  int64_t t = now_ns();
  printf("{\"ev\":\"gaps\",\"window_ms\":%.1f,\"partitions\":[", (t - window_start) / 1e6);
  for (int p = 0; p < nparts; p++) {
    // A partition still waiting counts its current silence too.
    int64_t from = last_ack[p] > window_start ? last_ack[p] : window_start;
    int64_t open = t - from;
    int64_t mx = max_gap[p] > open ? max_gap[p] : open;
    int64_t sum = sum_gap[p] + (open > gap_ns ? open : 0);
    printf("%s{\"acks\":%ld,\"max_gap_ms\":%.1f,\"unavailable_ms\":%.1f,\"long_gaps\":%ld}",
           p ? "," : "", acks[p], mx / 1e6, sum / 1e6, long_gaps[p] + (open > gap_ns));
  }
  printf("],\"errors\":%ld,\"last_error\":\"%s\"}\n", errors, rd_kafka_err2str(last_err));
  fflush(stdout);
}

static void reset_window(void) {
  window_start = now_ns();
  for (int p = 0; p < nparts; p++) {
    acks[p] = 0;
    max_gap[p] = 0;
    sum_gap[p] = 0;
    long_gaps[p] = 0;
  }
}

static int cmd_watch(int argc, char **argv) {
  if (argc != 8) return 2;
  const char *bootstrap = argv[2], *topic = argv[3];
  nparts = atoi(argv[4]);
  int size = atoi(argv[5]);
  double gap_ms = atof(argv[6]);
  double max_s = atof(argv[7]);
  if (nparts < 1 || nparts > MAX_PARTS || size < 1 || size > 1 << 20 || gap_ms <= 0 ||
      max_s <= 0 || max_s > 3600)
    return 2;
  watch = 1;
  gap_ns = (int64_t)(gap_ms * 1e6);
  gap_log = getenv("REPL_KAFKA_GAPLOG") != NULL;
  // A record waits through a failover (retried by librdkafka) instead of failing.
  rd_kafka_t *rk = make_producer(bootstrap, "all", "120000");
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  int64_t deadline = now_ns() + (int64_t)(max_s * 1e9);
  reset_window();
  char line[256];
  size_t used = 0;
  int ready = 0, quit = 0;
  long sent = 0;
  while (!quit && now_ns() < deadline) {
    for (int p = 0; p < nparts; p++) {
      if (!busy[p] && produce(t, p, payload, size) == 0) {
        busy[p] = 1;
        sent++;
      }
    }
    rd_kafka_poll(rk, 1);
    if (!ready) {
      int all = 1;
      for (int p = 0; p < nparts; p++) all &= last_ack[p] != 0;
      if (all) {
        ready = 1;
        printf("{\"ev\":\"ready\"}\n");
        fflush(stdout);
      }
    }
    struct pollfd pfd = {0, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLHUP))) continue;
    ssize_t r = read(0, line + used, sizeof line - 1 - used);
    if (r <= 0) break;  // stdin closed: the orchestrator is gone
    used += r;
    line[used] = 0;
    char *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
      *nl = 0;
      int pid, part, broker;
      if (sscanf(line, "kill %d %d %d", &pid, &part, &broker) == 3 && part >= 0 && part < nparts) {
        armed_part = part;
        armed_broker = broker;
        armed_at = now_ns();
        if (kill(pid, SIGKILL) != 0) {
          printf("{\"ev\":\"error\",\"error\":\"kill %d: %s\"}\n", pid, strerror(errno));
          armed_part = -1;
        } else {
          printf("{\"ev\":\"killed\",\"pid\":%d}\n", pid);
        }
        fflush(stdout);
      } else if (strcmp(line, "mark") == 0) {
        reset_window();
      } else if (strcmp(line, "gaps") == 0) {
        print_gaps();
      } else if (strcmp(line, "quit") == 0) {
        quit = 1;
      }
      size_t rest = used - (nl + 1 - line);
      memmove(line, nl + 1, rest);
      used = rest;
      line[used] = 0;
    }
    if (used >= sizeof line - 1) used = 0;  // a line without end: drop it
  }
  print_gaps();
  rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_flush(rk, 5000);
  printf("{\"ev\":\"end\",\"sent\":%ld,\"delivered\":%ld}\n", sent, delivered);
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int rc = 2;
  if (argc >= 2 && strcmp(argv[1], "lat") == 0) rc = cmd_lat(argc, argv);
  else if (argc >= 2 && strcmp(argv[1], "pace") == 0) rc = cmd_pace(argc, argv);
  else if (argc >= 2 && strcmp(argv[1], "watch") == 0) rc = cmd_watch(argc, argv);
  if (rc == 2) {
    fprintf(stderr,
            "usage: repl_kafka lat BOOTSTRAP TOPIC PARTITION ACKS WARMUP N SIZE\n"
            "       repl_kafka pace BOOTSTRAP TOPIC RATE SECONDS SIZE\n"
            "       repl_kafka watch BOOTSTRAP TOPIC PARTITIONS SIZE GAP_MS MAX_SECONDS\n");
  }
  return rc;
}
