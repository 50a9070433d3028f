/*
 * kdp-cni, the native plugin binary: what a CNI runtime execs for `"type": "kdp-cni"`. As the
 * plugins of Cilium, Calico and Multus do, it carries no networking code: it hands the request
 * (the CNI_* environment and the config on stdin) to the node agent's CNI service over a unix
 * socket and prints the agent's answer, so a call costs a process start of ~1 ms instead of
 * Node's ~100 ms. With no agent serving this node (no socket, or nobody listening) it execs the
 * full Node plugin, which behaves identically (src/cni/plugin.ts serves both).
 *
 * Which agent: the one serving the network namespace this process runs in (a runtime runs a
 * plugin in the node's namespace). Its socket is KDP_CNI_SOCKET_DIR/<inode of
 * /proc/self/ns/net>.sock; the directory is root's and mode 0700, and the three paths below are
 * compiled in by src/cni/shim-build.ts, so nothing from the environment or the config chooses
 * what runs or where the request goes.
 *
 * Wire format (src/cni/shim-protocol.ts): netstrings (`<decimal length>:<bytes>,`). Request:
 * "kdp-cni/1", then one netstring per CNI_* variable ("NAME=value"), then "" (end of the
 * environment), then the stdin bytes. Answer: the exit code (decimal), stdout, stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef KDP_CNI_SOCKET_DIR
#error "KDP_CNI_SOCKET_DIR must be defined"
#endif
#ifndef KDP_NODE
#error "KDP_NODE must be defined"
#endif
#ifndef KDP_CNI_SCRIPT
#error "KDP_CNI_SCRIPT must be defined"
#endif

extern char **environ;

struct buf { char *p; size_t len, cap; };

static void die_cni(const char *msg, const char *detail) {
  /* A CNI error object (code 999: plugin-specific), as the Node plugin prints its own. */
  printf("{\n    \"cniVersion\": \"1.0.0\",\n    \"code\": 999,\n    \"msg\": \"%s\",\n    \"details\": \"%s\"\n}", msg,
         detail);
  fflush(stdout);
  exit(1);
}

static void put(struct buf *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) die_cni("kdp-cni: out of memory", "");
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
}

static void netstring(struct buf *b, const char *p, size_t n) {
  char head[32];
  int h = snprintf(head, sizeof head, "%zu:", n);
  put(b, head, (size_t)h);
  put(b, p, n);
  put(b, ",", 1);
}

static void fallback(void) {
  char *argv[] = { (char *)KDP_NODE, (char *)KDP_CNI_SCRIPT, NULL };
  execve(KDP_NODE, argv, environ);
  die_cni("kdp-cni: no node agent serves this namespace and the Node plugin did not start", strerror(errno));
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Parses one netstring at *pos of the answer; returns its start and sets *n, or NULL. */
static const char *take(const struct buf *b, size_t *pos, size_t *n) {
  size_t i = *pos, len = 0, digits = 0;
  while (i < b->len && b->p[i] >= '0' && b->p[i] <= '9' && digits < 12) {
    len = len * 10 + (size_t)(b->p[i] - '0');
    i++;
    digits++;
  }
  if (digits == 0 || i >= b->len || b->p[i] != ':') return NULL;
  i++;
  if (len > b->len - i || i + len >= b->len || b->p[i + len] != ',') return NULL;
  *n = len;
  *pos = i + len + 1;
  return b->p + i;
}

int main(void) {
  struct stat st;
  if (stat("/proc/self/ns/net", &st) != 0) fallback();
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int plen = snprintf(addr.sun_path, sizeof addr.sun_path, "%s/%lu.sock", KDP_CNI_SOCKET_DIR, (unsigned long)st.st_ino);
  if (plen <= 0 || (size_t)plen >= sizeof addr.sun_path) fallback();
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fallback();
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    close(fd);
    fallback(); /* stdin is still unread: the Node plugin gets it whole */
  }

  struct buf req = { 0 };
  netstring(&req, "kdp-cni/1", 9);
  for (char **e = environ; *e; e++) {
    if (strncmp(*e, "CNI_", 4) == 0) netstring(&req, *e, strlen(*e));
  }
  netstring(&req, "", 0);
  struct buf in = { 0 };
  const char *cmd = getenv("CNI_COMMAND");
  if (!cmd || strcmp(cmd, "VERSION") != 0) { /* as the Node plugin: VERSION reads no stdin */
    char chunk[65536];
    for (;;) {
      ssize_t r = read(0, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      put(&in, chunk, (size_t)r);
    }
  }
  netstring(&req, in.p ? in.p : "", in.len);
  if (write_all(fd, req.p, req.len) != 0) die_cni("kdp-cni: the node agent's CNI service went away", strerror(errno));
  shutdown(fd, SHUT_WR);

  struct buf ans = { 0 };
  char chunk[65536];
  for (;;) {
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die_cni("kdp-cni: reading the node agent's answer failed", strerror(errno));
    if (r == 0) break;
    put(&ans, chunk, (size_t)r);
  }
  close(fd);
  size_t pos = 0, ncode = 0, nout = 0, nerr = 0;
  const char *code = take(&ans, &pos, &ncode);
  const char *out = code ? take(&ans, &pos, &nout) : NULL;
  const char *err = out ? take(&ans, &pos, &nerr) : NULL;
  if (!err || ncode == 0 || ncode > 3) die_cni("kdp-cni: the node agent's answer was cut short", "");
  int status = 0;
  for (size_t i = 0; i < ncode; i++) {
    if (code[i] < '0' || code[i] > '9') die_cni("kdp-cni: the node agent's answer was malformed", "");
    status = status * 10 + (code[i] - '0');
  }
  if (write_all(1, out, nout) != 0 || write_all(2, err, nerr) != 0) return 1;
  return status > 255 ? 1 : status;
}
