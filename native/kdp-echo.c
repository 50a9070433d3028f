/*
 * The kdp/echo workload, native build: the same contract as bin/kdp-echo.js (which stays the
 * fallback where no C compiler is found) in about a megabyte of memory instead of Node's ~40 MB
 * resident floor, so that a lab with hundreds of pods stays small (issue 5: ≤ 30 MB a process).
 *
 * On each port of KDP_ECHO_PORTS ("80/TCP,53/UDP"; TCP and UDP both, as the JS one) it answers
 * every TCP connection (raw or HTTP/1) and every datagram with one line
 *   pod=<name> from=<source ip>:<port> to=<local ip>:<port>
 * (IPv6 addresses in brackets, v4-mapped ones printed as IPv4). Sockets are dual-stack `::`
 * where the namespace has IPv6, else 0.0.0.0; UDP learns the local address from IP_PKTINFO /
 * IPV6_PKTINFO and answers from it. HTTP `GET /kdp/healthz` is 200 while healthy, else 503;
 * `/kdp/fail` and `/kdp/recover` switch (start: KDP_ECHO_HEALTHY, default true).
 * KDP_ECHO_EXIT_AFTER_MS exits after that long with KDP_ECHO_EXIT_CODE (default 1). Prints
 * `ready pod=<name> ports=<p,...>` once listening, then one line per request it answers
 * (`kubectl logs -f` shows traffic): `tcp|udp from=<src> to=<local>`, and for HTTP
 * `http from=<src> to=<local> <METHOD> <path>` (the path's unprintable bytes as `?`, at most
 * 200). SIGTERM/SIGINT exit 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 64
#define MAX_CONNS 256
#define MAX_FDS (MAX_PORTS * 2 + MAX_CONNS)

static const char *pod = "unknown";
static int healthy = 1;

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig) { (void)sig; _exit(0); }

/* "ip:port" or "[ip6]:port"; v4-mapped IPv6 printed as IPv4. */
static void format_addr(const struct sockaddr_storage *sa, char *out, size_t n) {
  char ip[INET6_ADDRSTRLEN] = "";
  if (sa->ss_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    snprintf(out, n, "%s:%u", ip, ntohs(a->sin_port));
    return;
  }
  const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
  if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
    inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], ip, sizeof ip);
    snprintf(out, n, "%s:%u", ip, ntohs(a->sin6_port));
  } else {
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
    snprintf(out, n, "[%s]:%u", ip, ntohs(a->sin6_port));
  }
}

static int echo_line(const struct sockaddr_storage *from, const struct sockaddr_storage *to, char *out, size_t n) {
  char f[64], t[64];
  format_addr(from, f, sizeof f);
  format_addr(to, t, sizeof t);
  return snprintf(out, n, "pod=%s from=%s to=%s\n", pod, f, t);
}

/* The request's log line on stdout, one write: `<kind> from=<src> to=<local>[ <request>]`. */
static void log_request(const char *kind, const struct sockaddr_storage *from,
                        const struct sockaddr_storage *to, const char *req, ssize_t n) {
  char f[64], t[64], line[512];
  format_addr(from, f, sizeof f);
  format_addr(to, t, sizeof t);
  int len = snprintf(line, sizeof line, "%s from=%s to=%s", kind, f, t);
  if (req) {
    /* "METHOD path": up to the second space of the request line */
    int spaces = 0, k = 0;
    line[len++] = ' ';
    for (ssize_t i = 0; i < n && k < 200 + 16; i++, k++) {
      char c = req[i];
      if (c == '\r' || c == '\n' || (c == ' ' && ++spaces == 2)) break;
      line[len++] = (c >= 0x20 && c < 0x7f) ? c : '?';
    }
  }
  line[len++] = '\n';
  if (write(1, line, (size_t)len) < 0) { /* stdout gone: keep serving */ }
}

/* A socket on `::` (dual-stack) or, without IPv6 in the namespace, on 0.0.0.0. */
static int open_socket(int type, int port, int *v6) {
  int one = 1, zero = 0;
  int fd = socket(AF_INET6, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_any};
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0) { *v6 = 1; return fd; }
    close(fd);
  }
  fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) { close(fd); return -1; }
  *v6 = 0;
  return fd;
}

static int is_http(const char *b, ssize_t n) {
  ssize_t i = 0;
  while (i < n && b[i] >= 'A' && b[i] <= 'Z') i++;
  if (i == 0 || i >= n || b[i] != ' ') return 0;
  ssize_t j = ++i;
  while (i < n && b[i] != ' ' && b[i] != '\r' && b[i] != '\n') i++;
  return i > j && n - i >= 7 && memcmp(b + i, " HTTP/1", 7) == 0;
}

static void answer_http(int fd, const char *req, ssize_t n, const char *body) {
  char path[256] = "/";
  const char *sp = memchr(req, ' ', (size_t)n);
  if (sp) {
    size_t k = 0;
    for (const char *p = sp + 1; p < req + n && *p != ' ' && k + 1 < sizeof path; p++) path[k++] = *p;
    path[k] = 0;
  }
  const char *status = "200 OK";
  if (strcmp(path, "/kdp/healthz") == 0) {
    if (!healthy) status = "503 Service Unavailable";
    body = healthy ? "ok\n" : "unhealthy\n";
  } else if (strcmp(path, "/kdp/fail") == 0 || strcmp(path, "/kdp/recover") == 0) {
    healthy = strcmp(path, "/kdp/recover") == 0;
  }
  char out[512];
  int len = snprintf(out, sizeof out,
    "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
    status, strlen(body), body);
  if (write(fd, out, (size_t)len) < 0) { /* the peer went away: nothing to report */ }
}

/* Answers a connection that has sent its first bytes; 0 while there is nothing to read yet. */
static int serve_conn(int fd) {
  char buf[1024], body[256];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  struct sockaddr_storage from, to;
  socklen_t fl = sizeof from, tl = sizeof to;
  if (n > 0 && getpeername(fd, (struct sockaddr *)&from, &fl) == 0 &&
      getsockname(fd, (struct sockaddr *)&to, &tl) == 0) {
    int len = echo_line(&from, &to, body, sizeof body);
    int http = is_http(buf, n);
    if (http) answer_http(fd, buf, n, body);
    else if (write(fd, body, (size_t)len) < 0) { /* ignored as above */ }
    log_request(http ? "http" : "tcp", &from, &to, http ? buf : NULL, n);
  }
  close(fd);
  return 1;
}

static void serve_datagram(int fd, int v6) {
  char buf[2048], body[256], ctrl[256];
  struct sockaddr_storage from = {0}, to = {0};
  struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
  struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
                     .msg_control = ctrl, .msg_controllen = sizeof ctrl};
  if (recvmsg(fd, &m, 0) < 0) return;
  getsockname(fd, (struct sockaddr *)&to, &(socklen_t){sizeof to});
  char reply_ctrl[CMSG_SPACE(sizeof(struct in6_pktinfo))] = {0};
  size_t reply_ctrl_len = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    struct cmsghdr *r = (struct cmsghdr *)reply_ctrl;
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      struct in_pktinfo pi;
      memcpy(&pi, CMSG_DATA(c), sizeof pi);
      if (to.ss_family == AF_INET6) {
        struct sockaddr_in6 *t = (struct sockaddr_in6 *)&to;
        memset(&t->sin6_addr, 0, sizeof t->sin6_addr);
        t->sin6_addr.s6_addr[10] = t->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&t->sin6_addr.s6_addr[12], &pi.ipi_addr, 4);
      } else {
        ((struct sockaddr_in *)&to)->sin_addr = pi.ipi_addr;
      }
      struct in_pktinfo out = {.ipi_spec_dst = pi.ipi_addr};
      r->cmsg_level = IPPROTO_IP; r->cmsg_type = IP_PKTINFO; r->cmsg_len = CMSG_LEN(sizeof out);
      memcpy(CMSG_DATA(r), &out, sizeof out);
      reply_ctrl_len = CMSG_SPACE(sizeof out);
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      struct in6_pktinfo pi;
      memcpy(&pi, CMSG_DATA(c), sizeof pi);
      ((struct sockaddr_in6 *)&to)->sin6_addr = pi.ipi6_addr;
      struct in6_pktinfo out = {.ipi6_addr = pi.ipi6_addr};
      r->cmsg_level = IPPROTO_IPV6; r->cmsg_type = IPV6_PKTINFO; r->cmsg_len = CMSG_LEN(sizeof out);
      memcpy(CMSG_DATA(r), &out, sizeof out);
      reply_ctrl_len = CMSG_SPACE(sizeof out);
    }
  }
  (void)v6;
  int len = echo_line(&from, &to, body, sizeof body);
  struct iovec riov = {.iov_base = body, .iov_len = (size_t)len};
  struct msghdr rm = {.msg_name = &from, .msg_namelen = m.msg_namelen, .msg_iov = &riov, .msg_iovlen = 1,
                      .msg_control = reply_ctrl_len ? reply_ctrl : NULL, .msg_controllen = reply_ctrl_len};
  sendmsg(fd, &rm, 0);
  log_request("udp", &from, &to, NULL, 0);
}

int main(void) {
  const char *env;
  if ((env = getenv("KDP_POD_NAME")) && *env) pod = env;
  if ((env = getenv("KDP_ECHO_HEALTHY")) && strcmp(env, "false") == 0) healthy = 0;
  long long exit_at = -1;
  int exit_code = 1;
  if ((env = getenv("KDP_ECHO_EXIT_AFTER_MS")) && *env) exit_at = now_ms() + atoll(env);
  if ((env = getenv("KDP_ECHO_EXIT_CODE")) && *env) exit_code = atoi(env);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  signal(SIGPIPE, SIG_IGN);

  int ports[MAX_PORTS], nports = 0;
  const char *spec = getenv("KDP_ECHO_PORTS");
  if (!spec || !*spec) spec = "8080/TCP";
  for (const char *p = spec; *p && nports < MAX_PORTS;) {
    int port = atoi(p), dup = 0;
    for (int i = 0; i < nports; i++) dup |= ports[i] == port;
    if (port > 0 && port < 65536 && !dup) ports[nports++] = port;
    const char *comma = strchr(p, ',');
    if (!comma) break;
    p = comma + 1;
  }

  struct pollfd fds[MAX_FDS];
  int kind[MAX_FDS]; /* 0 listener, 1 udp v4-only, 2 udp dual, 3 connection */
  int nfds = 0;
  for (int i = 0; i < nports; i++) {
    int one = 1, v6 = 0;
    int t = open_socket(SOCK_STREAM, ports[i], &v6);
    if (t < 0 || listen(t, 128) != 0) { fprintf(stderr, "kdp-echo: tcp port %d: %s\n", ports[i], strerror(errno)); return 1; }
    fds[nfds] = (struct pollfd){.fd = t, .events = POLLIN}; kind[nfds++] = 0;
    int u = open_socket(SOCK_DGRAM, ports[i], &v6);
    if (u < 0) { fprintf(stderr, "kdp-echo: udp port %d: %s\n", ports[i], strerror(errno)); return 1; }
    setsockopt(u, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
    if (v6) setsockopt(u, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
    fds[nfds] = (struct pollfd){.fd = u, .events = POLLIN}; kind[nfds++] = v6 ? 2 : 1;
  }
  printf("ready pod=%s ports=", pod);
  for (int i = 0; i < nports; i++) printf(i ? ",%d" : "%d", ports[i]);
  printf("\n");
  fflush(stdout);

  for (;;) {
    int timeout = -1;
    if (exit_at >= 0) {
      long long left = exit_at - now_ms();
      if (left <= 0) return exit_code;
      timeout = (int)left;
    }
    if (poll(fds, (nfds_t)nfds, timeout) < 0 && errno != EINTR) return 1;
    int listeners = nports * 2;
    for (int i = 0; i < listeners; i++) {
      if (!(fds[i].revents & POLLIN)) continue;
      if (kind[i] == 0) {
        int c;
        while ((c = accept4(fds[i].fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
          if (nfds >= MAX_FDS) { close(c); continue; }
          fds[nfds] = (struct pollfd){.fd = c, .events = POLLIN}; kind[nfds++] = 3;
        }
      } else {
        serve_datagram(fds[i].fd, kind[i] == 2);
      }
    }
    for (int i = listeners; i < nfds;) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && serve_conn(fds[i].fd)) {
        fds[i] = fds[--nfds]; kind[i] = kind[nfds];
        continue; /* the moved entry's revents belong to this round: look at it again */
      }
      i++;
    }
  }
}
