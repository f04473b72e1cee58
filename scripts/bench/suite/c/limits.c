// Machine limits measured in the same run as the workloads:
//   limits tcp BYTES          loopback TCP: a forked writer sends BYTES in 1 MiB writes, the parent reads
//   limits fsync PATH COUNT   COUNT × (pwrite 4 KiB at the end of the file + fdatasync): latency percentiles
// Prints one JSON line.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int tcp(long long total) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &al)) {
    perror("limits: listen");
    return 1;
  }
  static char buf[1 << 20];
  memset(buf, 'x', sizeof buf);
  pid_t pid = fork();
  if (pid == 0) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) _exit(1);
    long long left = total;
    while (left > 0) {
      ssize_t w = write(s, buf, left < (long long)sizeof buf ? left : (long long)sizeof buf);
      if (w <= 0) _exit(1);
      left -= w;
    }
    close(s);
    _exit(0);
  }
  int c = accept(ls, NULL, NULL);
  int64_t t0 = now_ns();
  long long got = 0;
  for (;;) {
    ssize_t r = read(c, buf, sizeof buf);
    if (r <= 0) break;
    got += r;
  }
  int64_t t1 = now_ns();
  int st = 0;
  waitpid(pid, &st, 0);
  printf("{\"bytes\":%lld,\"ms\":%.3f,\"mb_s\":%.1f}\n", got, (t1 - t0) / 1e6, got / 1e6 / ((t1 - t0) / 1e9));
  return got == total ? 0 : 1;
}

static int fsync_lat(const char *path, int count) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) { perror("limits: open"); return 1; }
  static char buf[4096];
  memset(buf, 'x', sizeof buf);
  int64_t *l = calloc(count, sizeof(int64_t));
  for (int i = 0; i < count; i++) {
    int64_t t0 = now_ns();
    if (pwrite(fd, buf, sizeof buf, (off_t)i * sizeof buf) != (ssize_t)sizeof buf || fdatasync(fd)) {
      perror("limits: write");
      return 1;
    }
    l[i] = now_ns() - t0;
  }
  close(fd);
  unlink(path);
  qsort(l, count, sizeof(int64_t), cmp64);
  printf("{\"n\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n", count, l[count / 2] / 1e3,
         l[(int)(count * 0.99)] / 1e3, l[count - 1] / 1e3);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "tcp") == 0) return tcp(atoll(argv[2]));
  if (argc == 4 && strcmp(argv[1], "fsync") == 0 && atoi(argv[3]) > 0) return fsync_lat(argv[2], atoi(argv[3]));
  fprintf(stderr, "usage: limits tcp BYTES | limits fsync PATH COUNT\n");
  return 2;
}
