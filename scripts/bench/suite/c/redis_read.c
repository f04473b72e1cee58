// Redis Streams read side: XRANGE the whole stream from the start in pages of COUNT entries.
//   redis_read HOST PORT KEY N    prints {"n":..,"ms":..,"bytes":..}; stops at N entries or an empty page.
#include <hiredis/hiredis.h>
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

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: redis_read HOST PORT KEY N\n");
    return 2;
  }
  long n = atol(argv[4]);
  redisContext *c = redisConnect(argv[1], atoi(argv[2]));
  if (!c || c->err) {
    fprintf(stderr, "redis_read: connect: %s\n", c ? c->errstr : "no memory");
    return 1;
  }
  char start[64] = "-";
  long got = 0;
  uint64_t bytes = 0;
  int64_t t0 = now_ns();
  // Bounded: each page advances by at least one entry or ends the loop.
  for (long pages = 0; got < n && pages <= n; pages++) {
    redisReply *r = redisCommand(c, "XRANGE %s %s + COUNT 1000", argv[3], start);
    if (!r || r->type != REDIS_REPLY_ARRAY) {
      fprintf(stderr, "redis_read: XRANGE failed: %s\n", r && r->str ? r->str : c->errstr);
      return 1;
    }
    if (r->elements == 0) { freeReplyObject(r); break; }
    for (size_t i = 0; i < r->elements; i++) {
      redisReply *e = r->element[i];
      redisReply *fields = e->element[1];
      for (size_t j = 1; j < fields->elements; j += 2) bytes += fields->element[j]->len;
      got++;
    }
    // Next page starts just after the last id (exclusive range, Redis ≥ 6.2).
    redisReply *last = r->element[r->elements - 1]->element[0];
    snprintf(start, sizeof start, "(%s", last->str);
    freeReplyObject(r);
  }
  int64_t t1 = now_ns();
  printf("{\"n\":%ld,\"ms\":%.3f,\"bytes\":%llu}\n", got, (t1 - t0) / 1e6, (unsigned long long)bytes);
  redisFree(c);
  return got == n ? 0 : 1;
}
