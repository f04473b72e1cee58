// Replicated section, JetStream side (C client, libnats). URLS is a comma-separated server list.
//   repl_nats create URLS STREAM REPLICAS      a file stream on STREAM.*; prints its leader
//   repl_nats pub    URLS STREAM N SIZE        async publish N records to STREAM.0, await every
//                                              ack; a second connection samples the replicas' lag
//                                              from stream info every 250 ms meanwhile
//   repl_nats pace   URLS STREAM RATE SECONDS SIZE  async publish at RATE/s (1 ms ticks) for
//                                              SECONDS; publish → ack latency (p50/p99) and the
//                                              replicas' lag sampled every 250 ms meanwhile
//   repl_nats lat    URLS STREAM WARMUP N SIZE WARMUP async publishes (≤ 16 pending), then N
//                                              synchronous publishes, one at a time
// Each prints one JSON line on stdout; every loop is bounded by a count, a deadline, or both.
#include <nats/nats.h>
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

static void die(const char *what, natsStatus s, jsErrCode jerr) {
  fprintf(stderr, "repl_nats: %s: %s (js error %d)\n", what, natsStatus_GetText(s), (int)jerr);
  nats_PrintLastErrorStack(stderr);
  exit(1);
}

static volatile int64_t ack_errors = 0;
static void on_ack_err(jsCtx *js, jsPubAckErr *pae, void *closure) {
  (void)js; (void)pae; (void)closure;
  __atomic_add_fetch(&ack_errors, 1, __ATOMIC_RELAXED);
}

static jsPubAckHandler g_ack_handler = NULL;

static void connect_js(const char *urls, natsConnection **nc, jsCtx **js, int64_t max_pending) {
  natsOptions *opts = NULL;
  natsStatus s = natsOptions_Create(&opts);
  char *copy = strdup(urls);
  const char *list[8];
  int n = 0;
  for (char *tok = strtok(copy, ","); tok && n < 8; tok = strtok(NULL, ",")) list[n++] = tok;
  if (s == NATS_OK) s = natsOptions_SetServers(opts, list, n);
  if (s == NATS_OK) s = natsOptions_SetMaxPendingMsgs(opts, 1000000);
  if (s == NATS_OK) s = natsOptions_SetIOBufSize(opts, 1 << 20);
  if (s == NATS_OK) s = natsConnection_Connect(nc, opts);
  if (s != NATS_OK) die("connect", s, 0);
  natsOptions_Destroy(opts);
  free(copy);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 30000;
  jo.PublishAsync.MaxPending = max_pending;
  jo.PublishAsync.StallWait = 30000;
  jo.PublishAsync.ErrHandler = on_ack_err;
  jo.PublishAsync.AckHandler = g_ack_handler;  // when set, it replaces ErrHandler
  s = natsConnection_JetStream(js, *nc, &jo);
  if (s != NATS_OK) die("jetstream context", s, 0);
}

static int cmd_create(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *urls = argv[2], *stream = argv[3];
  int replicas = atoi(argv[4]);
  if (replicas < 1 || replicas > 5) return 2;
  natsConnection *nc; jsCtx *js;
  connect_js(urls, &nc, &js, 16);
  char wild[256];
  snprintf(wild, sizeof wild, "%s.*", stream);
  const char *subjects[1] = {wild};
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  sc.Name = stream;
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;
  sc.Replicas = replicas;
  jsStreamInfo *si = NULL;
  jsErrCode jerr = 0;
  natsStatus s = NATS_ERR;
  // Right after the cluster forms, JetStream may not have its meta leader yet: retry (≤ 30 s).
  for (int i = 0; i < 60; i++) {
    s = js_AddStream(&si, js, &sc, NULL, &jerr);
    if (s == NATS_OK) break;
    nats_Sleep(500);
  }
  if (s != NATS_OK) die("add stream", s, jerr);
  printf("{\"leader\":\"%s\",\"replicas\":%d}\n",
         si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "", replicas);
  jsStreamInfo_Destroy(si);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return 0;
}

// Lag sampler: a second connection asks for stream info every 250 ms while the publisher runs.
static const char *g_urls, *g_stream;
static volatile int sampling = 1;
#define MAX_SAMPLES 4096
static uint64_t lag_samples[MAX_SAMPLES];
static int nlag = 0;
static int not_current = 0;

static void *sample_lag(void *arg) {
  (void)arg;
  natsConnection *nc; jsCtx *js;
  connect_js(g_urls, &nc, &js, 16);
  for (int i = 0; i < 100000 && sampling; i++) {
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    if (js_GetStreamInfo(&si, js, g_stream, NULL, &jerr) == NATS_OK) {
      if (si->Cluster) {
        for (int r = 0; r < si->Cluster->ReplicasLen && nlag < MAX_SAMPLES; r++) {
          lag_samples[nlag++] = si->Cluster->Replicas[r]->Lag;
          if (!si->Cluster->Replicas[r]->Current) not_current++;
        }
      }
      jsStreamInfo_Destroy(si);
    }
    nats_Sleep(250);
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return NULL;
}

static int cmpu64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t stream_msgs(jsCtx *js, const char *name) {
  jsStreamInfo *si = NULL;
  jsErrCode jerr = 0;
  natsStatus s = js_GetStreamInfo(&si, js, name, NULL, &jerr);
  if (s != NATS_OK) die("stream info", s, jerr);
  uint64_t n = si->State.Msgs;
  jsStreamInfo_Destroy(si);
  return n;
}

static int cmd_pub(int argc, char **argv) {
  if (argc != 6) return 2;
  const char *urls = argv[2], *stream = argv[3];
  long n = atol(argv[4]);
  int size = atoi(argv[5]);
  if (n < 1 || size < 1 || size > 1 << 20) return 2;
  g_urls = urls;
  g_stream = stream;
  natsConnection *nc; jsCtx *js;
  connect_js(urls, &nc, &js, 8192);
  char subj[256];
  snprintf(subj, sizeof subj, "%s.0", stream);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  uint64_t before = stream_msgs(js, stream);
  pthread_t th;
  pthread_create(&th, NULL, sample_lag, NULL);
  int64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    natsStatus s = js_PublishAsync(js, subj, payload, size, NULL);
    if (s != NATS_OK) die("publish", s, 0);
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 300000;
  natsStatus s = js_PublishAsyncComplete(js, &po);
  if (s != NATS_OK) die("publish complete", s, 0);
  int64_t t1 = now_ns();
  sampling = 0;
  pthread_join(th, NULL);
  uint64_t stored = stream_msgs(js, stream) - before;
  qsort(lag_samples, nlag, sizeof(uint64_t), cmpu64);
  printf("{\"n\":%ld,\"ms\":%.3f,\"stored\":%llu,\"ack_errors\":%lld,\"lag_samples\":%d,"
         "\"lag_p50\":%llu,\"lag_max\":%llu,\"not_current\":%d}\n",
         n, (t1 - t0) / 1e6, (unsigned long long)stored, (long long)ack_errors, nlag,
         (unsigned long long)(nlag ? lag_samples[nlag / 2] : 0),
         (unsigned long long)(nlag ? lag_samples[nlag - 1] : 0), not_current);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  free(payload);
  return stored == (uint64_t)n && ack_errors == 0 ? 0 : 1;
}

static int cmd_lat(int argc, char **argv) {
  if (argc != 7) return 2;
  const char *urls = argv[2], *stream = argv[3];
  long warm = atol(argv[4]), n = atol(argv[5]);
  int size = atoi(argv[6]);
  if (warm < 0 || n < 1 || n > 10000000 || size < 1 || size > 1 << 20) return 2;
  natsConnection *nc; jsCtx *js;
  connect_js(urls, &nc, &js, 16);
  char subj[256];
  snprintf(subj, sizeof subj, "%s.0", stream);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  int64_t w0 = now_ns();
  for (long i = 0; i < warm; i++) {
    natsStatus s = js_PublishAsync(js, subj, payload, size, NULL);
    if (s != NATS_OK) die("warm-up publish", s, 0);
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 120000;
  if (warm > 0) {
    natsStatus s = js_PublishAsyncComplete(js, &po);
    if (s != NATS_OK) die("warm-up complete", s, 0);
  }
  int64_t w1 = now_ns();
  int64_t *lat = calloc(n, sizeof(int64_t));
  long got = 0, errs = 0;
  int64_t deadline = now_ns() + 300LL * 1000000000LL;
  int64_t m0 = now_ns();
  for (long i = 0; i < n && now_ns() < deadline; i++) {
    jsPubAck *pa = NULL;
    jsErrCode jerr = 0;
    int64_t t0 = now_ns();
    natsStatus s = js_Publish(&pa, js, subj, payload, size, NULL, &jerr);
    int64_t t1 = now_ns();
    if (s != NATS_OK) {
      errs++;
      break;
    }
    jsPubAck_Destroy(pa);
    lat[got++] = t1 - t0;
  }
  int64_t m1 = now_ns();
  qsort(lat, got, sizeof(int64_t), cmp64);
#define Q(q) (got ? lat[(long)(got * (q)) < got ? (long)(got * (q)) : got - 1] / 1e3 : -1)
  printf("{\"n\":%ld,\"got\":%ld,\"errors\":%ld,\"warm_ms\":%.1f,\"run_ms\":%.1f,"
         "\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f}\n",
         n, got, errs + (long)ack_errors, (w1 - w0) / 1e6, (m1 - m0) / 1e6, Q(0.5), Q(0.9),
         Q(0.99), Q(0.999), got ? lat[got - 1] / 1e3 : -1);
#undef Q
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return got == n && errs == 0 ? 0 : 1;
}

// pace: each payload starts with its send time; the ack handler (library thread) records latency.
static int64_t *pace_lat = NULL;
static volatile long pace_n = 0;
static long pace_cap = 0;

static void on_pace_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
  (void)js; (void)closure;
  int64_t now = now_ns();
  if (pa != NULL && natsMsg_GetDataLength(msg) >= 8) {
    int64_t sent;
    memcpy(&sent, natsMsg_GetData(msg), 8);
    long i = pace_n;
    if (i < pace_cap) { pace_lat[i] = now - sent; pace_n = i + 1; }
  } else if (pae != NULL) {
    __atomic_add_fetch(&ack_errors, 1, __ATOMIC_RELAXED);
  }
  natsMsg_Destroy(msg);
}

static int cmd_pace(int argc, char **argv) {
  if (argc != 7) return 2;
  const char *urls = argv[2], *stream = argv[3];
  long rate = atol(argv[4]);
  double secs = atof(argv[5]);
  int size = atoi(argv[6]);
  if (rate < 1 || secs <= 0 || secs > 600 || size < 8 || size > 1 << 20) return 2;
  long total = (long)(rate * secs);
  pace_cap = total;
  pace_lat = calloc(total, sizeof(int64_t));
  g_urls = urls;
  g_stream = stream;
  g_ack_handler = on_pace_ack;
  natsConnection *nc; jsCtx *js;
  connect_js(urls, &nc, &js, 65536);
  g_ack_handler = NULL;
  char subj[256];
  snprintf(subj, sizeof subj, "%s.0", stream);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  pthread_t th;
  pthread_create(&th, NULL, sample_lag, NULL);
  int64_t t0 = now_ns() + 1000000LL;
  long sent = 0;
  for (long tick = 0; sent < total && tick < (long)(secs * 1000) + 60000; tick++) {
    int64_t due = t0 + tick * 1000000LL;
    struct timespec ts = {due / 1000000000LL, due % 1000000000LL};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    long upto = (long)((double)(tick + 1) * rate / 1000.0);
    if (upto > total) upto = total;
    for (; sent < upto; sent++) {
      int64_t t = now_ns();
      memcpy(payload, &t, 8);
      natsStatus s = js_PublishAsync(js, subj, payload, size, NULL);
      if (s != NATS_OK) die("publish", s, 0);
    }
  }
  int64_t t_sent = now_ns();
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 60000;
  js_PublishAsyncComplete(js, &po);
  sampling = 0;
  pthread_join(th, NULL);
  long got = pace_n;
  qsort(pace_lat, got, sizeof(int64_t), cmp64);
  qsort(lag_samples, nlag, sizeof(uint64_t), cmpu64);
#define Q(q) (got ? pace_lat[(long)(got * (q)) < got ? (long)(got * (q)) : got - 1] / 1e3 : -1)
  printf("{\"n\":%ld,\"acked\":%ld,\"errors\":%lld,\"send_ms\":%.1f,\"ack_p50_us\":%.1f,"
         "\"ack_p99_us\":%.1f,\"ack_max_us\":%.1f,\"lag_samples\":%d,\"lag_p50\":%llu,"
         "\"lag_max\":%llu,\"not_current\":%d}\n",
         total, got, (long long)ack_errors, (t_sent - t0) / 1e6, Q(0.5), Q(0.99),
         got ? pace_lat[got - 1] / 1e3 : -1, nlag,
         (unsigned long long)(nlag ? lag_samples[nlag / 2] : 0),
         (unsigned long long)(nlag ? lag_samples[nlag - 1] : 0), not_current);
#undef Q
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return got == total && ack_errors == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  int rc = 2;
  if (argc >= 2 && strcmp(argv[1], "create") == 0) rc = cmd_create(argc, argv);
  else if (argc >= 2 && strcmp(argv[1], "pub") == 0) rc = cmd_pub(argc, argv);
  else if (argc >= 2 && strcmp(argv[1], "lat") == 0) rc = cmd_lat(argc, argv);
  else if (argc >= 2 && strcmp(argv[1], "pace") == 0) rc = cmd_pace(argc, argv);
  if (rc == 2) {
    fprintf(stderr,
            "usage: repl_nats create URLS STREAM REPLICAS | pub URLS STREAM N SIZE | "
            "lat URLS STREAM WARMUP N SIZE | pace URLS STREAM RATE SECONDS SIZE\n");
  }
  return rc;
}
