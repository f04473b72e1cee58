// JetStream side of the benchmark suite (C client, libnats): so the client is not the bottleneck.
//   nats_bench pub  URL STREAM SUBJECTS N SIZE   create a file stream, async-publish N records, await every ack
//   nats_bench read URL STREAM N                 ordered push consumer from the first message until N are read
//   nats_bench lat  URL STREAM RATE SECONDS SIZE publish at RATE/s, consume, latency from a timestamp in the payload
// Each prints one JSON line on stdout; every loop is bounded by N, a deadline, or both.
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <errno.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what, natsStatus s, jsErrCode jerr) {
  fprintf(stderr, "nats_bench: %s: %s (js error %d)\n", what, natsStatus_GetText(s), (int)jerr);
  nats_PrintLastErrorStack(stderr);
  exit(1);
}

static volatile int64_t ack_errors = 0;
static void on_ack_err(jsCtx *js, jsPubAckErr *pae, void *closure) {
  (void)js; (void)pae; (void)closure;
  __atomic_add_fetch(&ack_errors, 1, __ATOMIC_RELAXED);
}

static void connect_js(const char *url, natsConnection **nc, jsCtx **js, int64_t max_pending) {
  natsOptions *opts = NULL;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, url);
  if (s == NATS_OK) s = natsOptions_SetMaxPendingMsgs(opts, 1000000);
  if (s == NATS_OK) s = natsOptions_SetIOBufSize(opts, 1 << 20);
  if (s == NATS_OK) s = natsConnection_Connect(nc, opts);
  if (s != NATS_OK) die("connect", s, 0);
  natsOptions_Destroy(opts);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 30000;
  jo.PublishAsync.MaxPending = max_pending;
  jo.PublishAsync.StallWait = 30000;
  jo.PublishAsync.ErrHandler = on_ack_err;
  s = natsConnection_JetStream(js, *nc, &jo);
  if (s != NATS_OK) die("jetstream context", s, 0);
}

static void add_stream(jsCtx *js, const char *name, const char *subject) {
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  const char *subjects[1] = {subject};
  sc.Name = name;
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;  // the default; stated for the reader
  jsStreamInfo *si = NULL;
  jsErrCode jerr = 0;
  natsStatus s = js_AddStream(&si, js, &sc, NULL, &jerr);
  if (s != NATS_OK) die("add stream", s, jerr);
  jsStreamInfo_Destroy(si);
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
  if (argc != 7) return 2;
  const char *url = argv[2], *stream = argv[3];
  int subjects = atoi(argv[4]);
  long n = atol(argv[5]);
  int size = atoi(argv[6]);
  if (subjects < 1 || subjects > 1000 || n < 1 || size < 1 || size > 1 << 20) return 2;
  natsConnection *nc; jsCtx *js;
  connect_js(url, &nc, &js, 8192);
  char wild[256], subj[256];
  snprintf(wild, sizeof wild, "%s.*", stream);
  add_stream(js, stream, wild);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  int64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    snprintf(subj, sizeof subj, "%s.%d", stream, (int)(i % subjects));
    natsStatus s = js_PublishAsync(js, subj, payload, size, NULL);
    if (s != NATS_OK) die("publish", s, 0);
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 120000;
  natsStatus s = js_PublishAsyncComplete(js, &po);
  if (s != NATS_OK) die("publish complete", s, 0);
  int64_t t1 = now_ns();
  uint64_t stored = stream_msgs(js, stream);
  printf("{\"n\":%ld,\"ms\":%.3f,\"stored\":%llu,\"ack_errors\":%lld}\n", n, (t1 - t0) / 1e6,
         (unsigned long long)stored, (long long)ack_errors);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  free(payload);
  return stored == (uint64_t)n && ack_errors == 0 ? 0 : 1;
}

static int cmd_read(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *url = argv[2], *stream = argv[3];
  long n = atol(argv[4]);
  if (n < 1) return 2;
  natsConnection *nc; jsCtx *js;
  connect_js(url, &nc, &js, 4000);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream;
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverAll;
  char wild[256];
  snprintf(wild, sizeof wild, "%s.*", stream);
  natsSubscription *sub = NULL;
  jsErrCode jerr = 0;
  int64_t t0 = now_ns();
  natsStatus s = js_SubscribeSync(&sub, js, wild, NULL, &so, &jerr);
  if (s != NATS_OK) die("subscribe", s, jerr);
  natsSubscription_SetPendingLimits(sub, -1, -1);
  long got = 0;
  uint64_t bytes = 0;
  while (got < n) {
    natsMsg *m = NULL;
    s = natsSubscription_NextMsg(&m, sub, 10000);  // bounded: 10 s without a message ends the run
    if (s != NATS_OK) die("next message", s, 0);
    bytes += natsMsg_GetDataLength(m);
    got++;
    natsMsg_Destroy(m);
  }
  int64_t t1 = now_ns();
  printf("{\"n\":%ld,\"ms\":%.3f,\"bytes\":%llu}\n", got, (t1 - t0) / 1e6, (unsigned long long)bytes);
  natsSubscription_Destroy(sub);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return 0;
}

// Latency: samples in a fixed array; the consumer callback runs on the library's delivery thread.
static int64_t *lat = NULL;
static volatile long lat_n = 0;
static long lat_cap = 0;

static void on_msg(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
  (void)nc; (void)sub; (void)closure;
  int64_t now = now_ns();
  if (natsMsg_GetDataLength(m) >= 8) {
    int64_t sent;
    memcpy(&sent, natsMsg_GetData(m), 8);
    long i = lat_n;
    if (i < lat_cap) { lat[i] = now - sent; lat_n = i + 1; }
  }
  natsMsg_Destroy(m);
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmd_lat(int argc, char **argv) {
  if (argc != 7) return 2;
  const char *url = argv[2], *stream = argv[3];
  long rate = atol(argv[4]);
  double secs = atof(argv[5]);
  int size = atoi(argv[6]);
  if (rate < 1 || secs <= 0 || secs > 600 || size < 8 || size > 1 << 20) return 2;
  long total = (long)(rate * secs);
  lat_cap = total;
  lat = calloc(total, sizeof(int64_t));
  natsConnection *nc; jsCtx *js;
  connect_js(url, &nc, &js, 8192);
  char subj[256];
  snprintf(subj, sizeof subj, "%s.0", stream);
  char wild[256];
  snprintf(wild, sizeof wild, "%s.*", stream);
  add_stream(js, stream, wild);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream;
  so.Ordered = true;
  natsSubscription *sub = NULL;
  jsErrCode jerr = 0;
  // The consumer uses its own connection, as a separate client would.
  natsConnection *nc2; jsCtx *js2;
  connect_js(url, &nc2, &js2, 8192);
  natsStatus s = js_Subscribe(&sub, js2, wild, on_msg, NULL, NULL, &so, &jerr);
  if (s != NATS_OK) die("subscribe", s, jerr);
  natsSubscription_SetPendingLimits(sub, -1, -1);
  char *payload = malloc(size);
  memset(payload, 'x', size);
  // Paced in 1 ms ticks (rate/1000 records per tick), sleeping to an absolute deadline, no spinning.
  int64_t t0 = now_ns();
  long sent = 0;
  for (long tick = 0; sent < total; tick++) {
    int64_t due = t0 + tick * 1000000LL;
    struct timespec ts = {due / 1000000000LL, due % 1000000000LL};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    long upto = (long)((double)(tick + 1) * rate / 1000.0);
    if (upto > total) upto = total;
    for (; sent < upto; sent++) {
      int64_t t = now_ns();
      memcpy(payload, &t, 8);
      s = js_PublishAsync(js, subj, payload, size, NULL);
      if (s != NATS_OK) die("publish", s, 0);
    }
  }
  int64_t t_sent = now_ns();
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 60000;
  js_PublishAsyncComplete(js, &po);
  // Wait (bounded: 30 s) for the consumer to see everything.
  for (int i = 0; i < 3000 && lat_n < total; i++) nats_Sleep(10);
  long got = lat_n;
  qsort(lat, got, sizeof(int64_t), cmp64);
  double p50 = got ? lat[(long)(got * 0.50)] / 1e3 : -1;
  double p99 = got ? lat[(long)(got * 0.99)] / 1e3 : -1;
  double p999 = got ? lat[(long)(got * 0.999)] / 1e3 : -1;
  double mx = got ? lat[got - 1] / 1e3 : -1;
  printf("{\"n\":%ld,\"received\":%ld,\"send_ms\":%.3f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f}\n",
         total, got, (t_sent - t0) / 1e6, p50, p99, p999, mx);
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  jsCtx_Destroy(js2);
  natsConnection_Destroy(nc2);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return got == total ? 0 : 1;
}

int main(int argc, char **argv) {
  int rc = 2;
  if (argc >= 2 && strcmp(argv[1], "pub") == 0) rc = cmd_pub(argc, argv);
  else if (argc >= 2 && strcmp(argv[1], "read") == 0) rc = cmd_read(argc, argv);
  else if (argc >= 2 && strcmp(argv[1], "lat") == 0) rc = cmd_lat(argc, argv);
  if (rc == 2) fprintf(stderr, "usage: nats_bench pub URL STREAM SUBJECTS N SIZE | read URL STREAM N | lat URL STREAM RATE SECONDS SIZE\n");
  return rc;
}
