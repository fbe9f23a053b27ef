/* server.c: HTTP/1.1 server on a unix socket or TCP (libuv streams +
 * http-parser).
 * Each connection parses one request, hands it to the handler and waits for
 * the answer before parsing the next pipelined one; other connections go
 * on. Meanwhile it reads at most ROCK_HTTP_READ_AHEAD bytes and then stops
 * reading (backpressure) until the answer is sent. Bodies go to memory up
 * to a limit or, when on_headers picks a file, to that file as they come,
 * or (body_stream) the handler gets the request after its headers and
 * pulls the body through the parser as it wants it (rock_http_body_read:
 * the bytes go from the input buffer straight to the caller's; what is
 * not pulled is not read from the socket past the read-ahead, and a 100
 * Continue waits for the first pull); a body still coming when its answer
 * goes is read and dropped (drain) up to DRAIN_MAX, past which (or never
 * asked for by a 100) the connection closes once the answer is out, by
 * a lingering close (FIN, then a bounded read) so the client is not reset
 * over its answer.
 * The bodies being read to memory share a budget (max_body_mem): a request
 * past it waits, unread, until one is done; a body lives until its handler
 * returns.
 * A request outlives its connection (the handler may still be working): it
 * is then an orphan and rock_http_respond only frees it. A graceful stop
 * (drain) closes idle connections and lets busy ones finish. An answer
 * may be a file, streamed chunk by chunk as the client takes it, or a
 * stream its owner writes piece by piece (a relay), told when the
 * client's queue runs low again and when the client is gone.
 * API: server.h. */
#include "server.h"

#include <errno.h>
#include <http_parser.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "../core/buf.h"
#include "../core/log.h"

/* A stream of either kind. */
typedef union {
  uv_handle_t h;
  uv_stream_t s;
  uv_pipe_t pipe;
  uv_tcp_t tcp;
} io_t;

#define FILE_CHUNK (64u << 10)
/* What one sendfile call is asked to send of an answer's file (none of it
 * passes through our memory). */
#define SENDFILE_CHUNK (1u << 20)
/* The most of a body left over after an early answer (drain) that is read
 * and dropped to keep the connection; past it (or the request's max_body
 * when smaller) the connection closes once the answer is out. A client
 * that reads its answer while it sends (curl) stops within about what its
 * socket buffers held; one that sends on does not deserve more reading
 * than a new connection costs, and a chunked body has no end of its own. */
#define DRAIN_MAX (4u << 20)
/* A connection closed with a body still coming (past DRAIN_MAX, or never
 * asked for) first says it is done (FIN) and reads on for this long or
 * DRAIN_MAX bytes more: closed at once, the kernel would reset it over the
 * unread bytes, and a client still sending may then lose the answer. */
#define LINGER_MS 1000

struct rock_http_server {
  io_t listener;
  int tcp;  /* listener and connections are TCP */
  int port; /* the port bound (TCP) */
  rock_http_server_opts_t opts;
  rock_http_handler_fn fn;
  void *data;
  rock_http_conn_t *conns; /* doubly linked */
  unsigned nconns;
  unsigned long refused; /* connections closed at once: over max_conns */
  unsigned long evicted; /* idle or half-sent ones closed for a new one */
  uint64_t body_mem;     /* bytes of bodies in memory (conn.mem summed) */
  int waking, wake_again; /* wake_waiting is on the stack / must walk again */
  int inflight;
  int closing;           /* rock_http_server_close ran */
  int listener_closing;  /* uv_close'd (drain or close) */
  int listener_closed;   /* its close callback ran: free at close */
  int draining;
  void (*drained)(void *arg); /* drain's callback, until it runs */
  void *drained_arg;
  rock_buf_t spare; /* an input buffer a drained connection gave back, for
                     * the next read (no 64 KiB malloc and free a request) */
};

/* A connection. Allocated in on_connection, freed when both its handles
 * have closed (conn_closed). */
struct rock_http_conn {
  io_t handle;
  uv_timer_t idle;
  http_parser parser;
  rock_http_server_t *server;
  rock_http_conn_t *prev, *next;
  rock_buf_t in; /* in.data[in_off..in.len) is not parsed yet */
  size_t in_off;
  rock_buf_t url;
  rock_buf_t body;        /* the memory sink of the request in cur, then
                           * of busy until its handler returns */
  uint64_t mem;           /* body budget taken by this connection */
  rock_http_req_t *cur;   /* headers seen, body being read */
  rock_http_req_t *ready; /* complete, not yet handed to the handler */
  rock_http_req_t *busy;  /* handed to the handler, not yet answered */
  rock_http_req_t *pull;  /* busy too: its handler reads its body
                           * (body_stream), until the answer */
  char *pull_dst;         /* rock_http_body_read's buffer, while it runs */
  size_t pull_cap, pull_got;
  int pull_state;         /* 0 being read, 1 whole, or ROCK_HTTP_BODY_BAD
                           * or ROCK_HTTP_BODY_TOO_LARGE */
  uint64_t dropped, drop_max; /* input dropped so far (drain, linger), its bound */
  uv_shutdown_t shut;         /* the FIN of a lingering close */
  int writes;             /* uv_write requests pending */
  size_t held;            /* bytes those requests hold in memory (copies
                           * and owned bodies), written or not: freed only
                           * in their callbacks, a loop turn later */
  int handles;            /* handles not yet closed */
  char hname[16], hval[16]; /* the header being read, if it may be Expect */
  size_t hname_len, hval_len;
  rock_buf_t hdrs;    /* the headers kept (opts.max_header): name\0value\0 */
  size_t hdr_bytes;   /* URL and header bytes of the request being read */
  unsigned nfields;   /* its header fields so far (kept headers) */
  int file_fd;        /* an answer's file being sent, or -1 */
  rock_http_stream_t *stream; /* an answer being streamed, until its end */
  uint64_t file_left; /* its bytes not yet read */
  int no_sendfile;    /* sendfile refused this file or socket */
  char peer[48];
  unsigned feeding : 1, closing : 1, reading : 1, linger : 1, in_value : 1,
      expect_continue : 1, wait_mem : 1, in_msg : 1, hdr_over : 1, many_fields : 1,
      pull_wait : 1, /* a read said WAIT: on_body(READY) when bytes come */
      drain : 1,     /* answered mid-body: the rest is read and dropped */
      unread : 1,    /* a body may still come, not read: close by lingering */
      lingering : 1; /* its FIN sent: input dropped until EOF or the bound */
};

/* A streamed answer (rock_http_respond_stream). Allocated there, freed
 * by rock_http_stream_end (its owner's); c is cleared when the connection
 * goes first. */
struct rock_http_stream {
  rock_http_conn_t *c;   /* NULL once the client went away */
  rock_http_stream_fn fn;
  void *arg;
  uint64_t left;         /* body bytes still to come, or UINT64_MAX */
  unsigned head_only : 1, want_drain : 1;
};

typedef struct {
  uv_write_t w;
  rock_http_conn_t *c;
  char *owned;  /* freed once written */
  size_t bytes; /* what it holds (c->held) */
  char data[];
} write_t;

static char empty_body[1];

static const char too_large_fmt[] =
    "{\"code\":\"bad_request\",\"message\":\"request body larger than %llu "
    "bytes\"}";

static const http_parser_settings settings;
static void respond(rock_http_req_t *req, int status, const char *ctype,
                    const char *body, size_t len, char *owned);
static const char *reason(int status);
static void conn_close(rock_http_conn_t *c);

/* ---- requests and connections ---- */

static void req_free(rock_http_req_t *r) {
  free(r->path); /* the body is the connection's (c->body) */
  free(r->headers);
  free(r);
}

/* ---- the body budget ---- */

static void feed(rock_http_conn_t *c);
static void refuse(rock_http_conn_t *c, int status, const char *body);

/* Take the budget for this connection's body up to total bytes. 0 if it
 * must wait: others hold memory and total would pass the budget. */
static int mem_take(rock_http_conn_t *c, uint64_t total) {
  rock_http_server_t *s = c->server;
  uint64_t max = s->opts.max_body_mem, others = s->body_mem - c->mem;
  if (max && others && others + total > max) return 0;
  s->body_mem = others + total;
  c->mem = total;
  return 1;
}

static int body_alloc(rock_http_conn_t *c, uint64_t cl);
static void send_continue(rock_http_conn_t *c);
static void wake_waiting(rock_http_server_t *s);

/* Free this connection's body and give its budget back. */
static void body_release(rock_http_conn_t *c) {
  rock_buf_free(&c->body);
  if (!c->mem) return;
  c->server->body_mem -= c->mem;
  c->mem = 0;
  wake_waiting(c->server);
}

/* Let waiting connections in while the budget allows. Not re-entered: a
 * release during the walk makes it walk again. */
static void wake_waiting(rock_http_server_t *s) {
  if (s->waking) {
    s->wake_again = 1;
    return;
  }
  s->waking = 1;
  do {
    s->wake_again = 0;
    for (rock_http_conn_t *c = s->conns; c; c = c->next) {
      if (!c->wait_mem || c->closing) continue;
      if (!mem_take(c, c->cur->content_length + 1)) continue;
      c->wait_mem = 0;
      if (body_alloc(c, c->cur->content_length)) {
        refuse(c, 500, "{\"code\":\"no_memory\",\"message\":\"no memory for the body\"}");
        continue;
      }
      send_continue(c);
      feed(c); /* may answer, close, release: c is freed only later */
    }
  } while (s->wake_again && !s->closing);
  s->waking = 0;
}

/* A connection is done with its input buffer: keep one for the server's
 * next read, free the others. */
static void in_release(rock_http_conn_t *c) {
  rock_http_server_t *s = c->server;
  if (!s->spare.data && c->in.data && !s->closing) {
    s->spare = c->in;
    s->spare.len = 0;
    c->in = (rock_buf_t){0};
  } else {
    rock_buf_free(&c->in);
  }
  c->in_off = 0;
}

static void conn_closed(uv_handle_t *h) {
  rock_http_conn_t *c = h->data;
  if (--c->handles > 0) return;
  rock_buf_free(&c->in);
  rock_buf_free(&c->url);
  rock_buf_free(&c->hdrs);
  rock_buf_free(&c->body); /* budget given back in conn_close */
  free(c);
}

/* The request being read dies unanswered: its sink is released. */
static void drop_cur(rock_http_conn_t *c) {
  rock_http_req_t *r = c->cur;
  c->cur = NULL;
  c->wait_mem = 0;
  c->body.len = 0;
  if (r->on_drop) r->on_drop(r);
  req_free(r);
}

static void conn_close(rock_http_conn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  rock_http_server_t *s = c->server;
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  s->nconns--;
  if (c->file_fd >= 0) close(c->file_fd);
  c->file_fd = -1;
  if (c->stream) { /* its owner stops, and still ends it */
    rock_http_stream_t *st = c->stream;
    c->stream = NULL;
    st->c = NULL;
    st->fn(st->arg, ROCK_HTTP_STREAM_GONE);
  }
  if (c->pull) { /* its reader stops (the request is an orphan below) */
    rock_http_req_t *r = c->pull;
    c->pull = NULL;
    c->pull_wait = 0;
    if (r->on_body) r->on_body(r, ROCK_HTTP_BODY_GONE);
  }
  if (c->cur) drop_cur(c);
  if (c->ready) { /* not reachable: feed hands it over at once */
    req_free(c->ready);
    c->ready = NULL;
  }
  rock_http_req_t *orphan = c->busy;
  c->busy = NULL;
  if (orphan) { /* the handler still owns it */
    orphan->conn = NULL;
    orphan->body = empty_body; /* c->body goes with c */
    orphan->body_len = 0;
    s->inflight--;
    if (orphan->on_abort) orphan->on_abort(orphan);
  }
  if (c->mem) { /* the memory itself goes in conn_closed, after any
                 * handler on the stack is done with it */
    s->body_mem -= c->mem;
    c->mem = 0;
    if (!s->closing) wake_waiting(s);
  }
  uv_close(&c->handle.h, conn_closed);
  uv_close((uv_handle_t *)&c->idle, conn_closed);
  if (s->draining && !s->nconns && s->drained && !s->closing) {
    void (*cb)(void *) = s->drained;
    s->drained = NULL;
    cb(s->drained_arg);
  }
}

/* Nothing under way on c: no request being read, handled or answered. */
static int conn_idle(rock_http_conn_t *c) {
  return !c->in_msg && !c->busy && !c->writes && c->file_fd < 0 && !c->stream &&
         c->in.len == c->in_off;
}

static void shut_done(uv_shutdown_t *r, int status) { (void)r, (void)status; }

/* Close c once its answer is out: at once, or lingering (LINGER_MS) when
 * the client may still be sending a body nobody reads. */
static void idle_fire(uv_timer_t *t);
static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf);
static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);
static void conn_end(rock_http_conn_t *c) {
  if (c->closing || c->lingering) return;
  if (!c->unread || uv_shutdown(&c->shut, &c->handle.s, shut_done)) {
    conn_close(c);
    return;
  }
  c->lingering = 1;
  c->dropped = 0;
  uv_timer_start(&c->idle, idle_fire, LINGER_MS, 0);
  if (!c->reading && uv_read_start(&c->handle.s, alloc_cb, read_cb)) {
    conn_close(c);
    return;
  }
  c->reading = 1;
}

/* Nothing came for idle_timeout: close, unless a handler is at work (its
 * answer starts the timer again); a handler waiting for body bytes that
 * do not come is not at work. */
static void idle_fire(uv_timer_t *t) {
  rock_http_conn_t *c = t->data;
  if (c->busy && !(c->pull == c->busy && c->pull_wait)) return;
  conn_close(c);
}

static void idle_restart(rock_http_conn_t *c) {
  uint64_t ms = c->server->opts.idle_timeout_ms;
  if (ms && !c->closing) uv_timer_start(&c->idle, idle_fire, ms, 0);
}

/* ---- output ---- */

static void file_pump(rock_http_conn_t *c);
static void feed(rock_http_conn_t *c);

static void write_done(uv_write_t *w, int status) {
  write_t *wr = (write_t *)w;
  rock_http_conn_t *c = wr->c;
  c->held -= wr->bytes;
  free(wr->owned);
  free(wr);
  c->writes--;
  if (c->closing) return;
  if (status < 0) {
    conn_close(c);
    return;
  }
  if (c->file_fd >= 0) file_pump(c); /* may finish it and feed on */
  if (c->closing) return;
  if (c->stream) { /* the client took some: progress */
    rock_http_stream_t *st = c->stream;
    idle_restart(c);
    if (st->want_drain && c->held <= ROCK_HTTP_STREAM_LOW) {
      st->want_drain = 0;
      st->fn(st->arg, ROCK_HTTP_STREAM_DRAINED); /* may write more */
    }
    return; /* rock_http_stream_end closes or goes on */
  }
  if (c->linger && c->writes == 0 && !c->drain) conn_end(c);
  else if (c->server->draining && conn_idle(c)) conn_close(c);
}

/* Send head[0..hl) and body[0..len) (copied unless owned, which is
 * freed once written). On a connection that stays open, what the socket
 * takes at once is written right here (libuv's try_write: only when
 * nothing it holds is still unsent; most answers: no write request, no
 * callback, no loop turn); the rest is queued. */
static void conn_write(rock_http_conn_t *c, const char *head, size_t hl,
                       const char *body, size_t len, char *owned) {
  if (!c->linger && !c->server->draining) {
    uv_buf_t t[2];
    unsigned nt = 0;
    if (hl) t[nt++] = uv_buf_init((char *)head, hl);
    if (len) t[nt++] = uv_buf_init((char *)body, len);
    int n = nt ? uv_try_write(&c->handle.s, t, nt) : 0;
    if (n > 0) {
      size_t k = (size_t)n;
      if (k >= hl) {
        body += k - hl;
        len -= k - hl;
        hl = 0;
      } else {
        head += k;
        hl -= k;
      }
    }
    if (!hl && !len) {
      free(owned);
      return;
    }
  }
  size_t copy = owned ? 0 : len;
  write_t *wr = malloc(sizeof *wr + hl + copy);
  if (!wr) {
    free(owned);
    conn_close(c);
    return;
  }
  wr->c = c;
  wr->owned = owned;
  wr->bytes = hl + len;
  if (hl) memcpy(wr->data, head, hl);
  if (copy) memcpy(wr->data + hl, body, copy);
  uv_buf_t b[2];
  unsigned nb = 1;
  if (owned && len) {
    b[0] = uv_buf_init(wr->data, hl);
    b[1] = uv_buf_init((char *)body, len); /* inside owned */
    nb = 2;
  } else {
    b[0] = uv_buf_init(wr->data, hl + copy);
  }
  c->writes++;
  c->held += wr->bytes;
  if (uv_write(&wr->w, &c->handle.s, b, nb, write_done)) {
    c->writes--;
    c->held -= wr->bytes;
    free(wr->owned);
    free(wr);
    conn_close(c);
  }
}

static const char *reason(int status) {
  switch (status) {
  case 200: return "OK";
  case 201: return "Created";
  case 204: return "No Content";
  case 206: return "Partial Content";
  case 301: return "Moved Permanently";
  case 302: return "Found";
  case 304: return "Not Modified";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 409: return "Conflict";
  case 411: return "Length Required";
  case 413: return "Payload Too Large";
  case 415: return "Unsupported Media Type";
  case 416: return "Range Not Satisfiable";
  case 422: return "Unprocessable Entity";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 501: return "Not Implemented";
  case 502: return "Bad Gateway";
  case 503: return "Service Unavailable";
  case 504: return "Gateway Timeout";
  case 505: return "HTTP Version Not Supported";
  case 507: return "Insufficient Storage";
  default: return status < 300 ? "OK" : "Error";
  }
}

/* ---- input ---- */

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf);
static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);

/* A body streamed to a file (body_fd) is read this much at a time: its
 * bytes go straight on to the file, fewer and larger reads and writes. */
#define SINK_READ_AHEAD (256u << 10)
/* A body its handler pulls (a relay) is read 1 MiB at a time: about half
 * the CPU per byte of 256 KiB in rock serve's PUT relay (more pieces,
 * more pauses of the transfer they go on by), and no better past it. */
#define PULL_READ_AHEAD (1u << 20)

/* The read-ahead of c now. */
static size_t read_ahead(const rock_http_conn_t *c) {
  if (c->pull) return PULL_READ_AHEAD;
  return (c->cur && c->cur->body_fd >= 0) || c->drain ? SINK_READ_AHEAD : ROCK_HTTP_READ_AHEAD;
}

/* Input is read and parsed on: no answer closes the connection yet, or
 * the rest of a body is still to be dropped first. */
static int reads_on(const rock_http_conn_t *c) { return !c->linger || c->drain; }

/* Read while there is room in the read-ahead and an answer may follow. */
static void set_reading(rock_http_conn_t *c) {
  if (c->closing || c->lingering) return;
  int want = reads_on(c) && c->in.len - c->in_off < read_ahead(c) - 1;
  if (want && !c->reading) {
    if (uv_read_start(&c->handle.s, alloc_cb, read_cb) == 0)
      c->reading = 1;
  } else if (!want && c->reading) {
    uv_read_stop(&c->handle.s);
    c->reading = 0;
  }
}

/* Refuse the request being read with status (413, 400, 500) and close
 * the connection once the answer is out. */
static void refuse(rock_http_conn_t *c, int status, const char *body) {
  rock_http_req_t *r = c->cur;
  if (r->on_drop) r->on_drop(r);
  r->on_drop = NULL;
  respond(r, status, "application/json", body, strlen(body), NULL);
}

static void refuse_too_large(rock_http_conn_t *c, uint64_t limit) {
  char msg[sizeof too_large_fmt + 24];
  snprintf(msg, sizeof msg, too_large_fmt, (unsigned long long)limit);
  refuse(c, 413, msg);
}

/* A parse error: its status and the JSON body saying why. */
static int parse_failure(rock_http_conn_t *c, enum http_errno e, char *msg,
                         size_t cap) {
  if (c->many_fields) {
    snprintf(msg, cap, "{\"code\":\"bad_request\",\"message\":\"more than %d "
             "request header fields\"}", ROCK_HTTP_MAX_FIELDS);
    return 431;
  }
  if (c->hdr_over || e == HPE_HEADER_OVERFLOW) {
    snprintf(msg, cap, "{\"code\":\"bad_request\",\"message\":\"request headers "
             "larger than %zu bytes\"}",
             c->server->opts.max_header ? c->server->opts.max_header : (size_t)80 << 10);
    return 431;
  }
  if (e == HPE_INVALID_TRANSFER_ENCODING) {
    snprintf(msg, cap, "{\"code\":\"bad_request\",\"message\":\"unsupported "
             "Transfer-Encoding (only chunked is)\"}");
    return 501;
  }
  snprintf(msg, cap, "{\"code\":\"bad_request\",\"message\":\"malformed http "
           "request: %s\"}", http_errno_description(e));
  return 400;
}

/* Parse what is buffered, one request at a time, until a request is in
 * flight or input runs out. Re-entered from rock_http_respond. */
static void feed(rock_http_conn_t *c) {
  if (c->feeding) return;
  c->feeding = 1;
  int dropping = c->drain;
  while (!c->busy && !c->closing && reads_on(c) && !c->wait_mem && c->file_fd < 0 &&
         !c->stream && c->in_off < c->in.len) {
    size_t n = http_parser_execute(&c->parser, &settings, c->in.data + c->in_off,
                                   c->in.len - c->in_off);
    c->in_off += n;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (e == HPE_PAUSED) {
      http_parser_pause(&c->parser, 0);
    } else if (e != HPE_OK) {
      char msg[200];
      int status = parse_failure(c, e, msg, sizeof msg);
      if (c->drain) { /* a dropped body's framing: its request was answered
                       * already; nothing after it can be parsed: close */
        c->drain = 0;
        c->linger = 1;
        c->unread = 1;
        c->in_msg = 0;
      } else if (c->cur) {
        refuse(c, status, msg);
      } else { /* between requests or in the headers: answer on our own */
        char head[200];
        size_t ml = strlen(msg);
        int hl = snprintf(head, sizeof head,
                          "HTTP/1.1 %d %s\r\nContent-Type: "
                          "application/json\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\n\r\n",
                          status, reason(status), ml);
        c->linger = 1;
        c->in_msg = 0;
        conn_write(c, head, hl, msg, ml, NULL);
      }
      break;
    }
    if (c->drain && (c->dropped += n) > c->drop_max) { /* too much to drop:
                                                        * close once the answer is out */
      c->drain = 0;
      c->linger = 1;
      c->unread = 1;
      break;
    }
    if (c->ready) {
      rock_http_req_t *r = c->ready;
      c->ready = NULL;
      c->busy = r;
      c->server->inflight++;
      c->server->fn(r, c->server->data);
      if (c->busy == r) { /* answered later: the body is not kept */
        r->body = empty_body;
        r->body_len = 0;
      }
      body_release(c);
    } else if (n == 0) {
      break;
    }
  }
  if (!c->closing && c->in_off == c->in.len) in_release(c); /* nothing held when drained */
  if (dropping && !c->drain && !c->closing &&
      ((c->linger && !c->writes) || (c->server->draining && conn_idle(c)))) {
    c->feeding = 0; /* the rest of the body is dropped (or cut), the answer
                     * out; or a graceful stop, which skipped c mid-body */
    conn_end(c);
    return;
  }
  set_reading(c);
  c->feeding = 0;
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  rock_http_conn_t *c = h->data;
  (void)hint;
  size_t left = c->in.len - c->in_off;
  if (c->in_off) { /* keep the unparsed bytes at the front */
    memmove(c->in.data, c->in.data + c->in_off, left);
    c->in.len = left;
    c->in_off = 0;
  }
  if (!c->in.data && c->server->spare.data) { /* the server's spare buffer */
    c->in = c->server->spare;
    c->server->spare = (rock_buf_t){0};
  }
  /* at most the read-ahead with the NUL rock_buf keeps */
  size_t ahead = read_ahead(c), room = ahead - 1 - left;
  if (left >= ahead - 1 || rock_buf_reserve(&c->in, room)) {
    *buf = uv_buf_init(NULL, 0);
    return;
  }
  *buf = uv_buf_init(c->in.data + c->in.len, room);
}

static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  rock_http_conn_t *c = st->data;
  (void)buf;
  if (n == UV_ENOBUFS) { /* no room: wait for the answer */
    uv_read_stop(st);
    c->reading = 0;
    return;
  }
  if (n < 0) { /* the client went away (or reset) */
    conn_close(c);
    return;
  }
  if (n == 0) return;
  if (c->lingering) { /* dropped; the timer set at its start holds */
    c->in.len = c->in_off = 0;
    if ((c->dropped += (uint64_t)n) > DRAIN_MAX) conn_close(c);
    return;
  }
  c->in.len += n;
  idle_restart(c);
  feed(c);
  if (c->pull && c->pull_wait && !c->closing) { /* its reader waits for these */
    c->pull_wait = 0;
    if (c->pull->on_body) c->pull->on_body(c->pull, ROCK_HTTP_BODY_READY);
  }
}

/* ---- parser callbacks: collect bytes, route the body ---- */

static int on_message_begin(http_parser *p) {
  rock_http_conn_t *c = p->data;
  c->in_msg = 1;
  c->url.len = 0;
  c->hdrs.len = 0;
  c->hdr_bytes = 0;
  c->nfields = 0;
  c->body.len = 0;
  c->hname_len = c->hval_len = 0;
  c->in_value = 0;
  c->expect_continue = 0;
  return 0;
}

/* Count URL and header bytes against max_header; -1 past it. */
static int count_header(rock_http_conn_t *c, size_t len) {
  size_t max = c->server->opts.max_header;
  c->hdr_bytes += len;
  if (max && c->hdr_bytes > max) {
    c->hdr_over = 1;
    return -1;
  }
  return 0;
}

/* Keep at[0..len) of a header (lowercased for a name), when kept. */
static int keep_header(rock_http_conn_t *c, const char *at, size_t len, int lower) {
  if (!c->server->opts.max_header) return 0;
  if (count_header(c, len)) return -1;
  size_t from = c->hdrs.len;
  if (rock_buf_append(&c->hdrs, at, len)) return -1;
  if (lower)
    for (size_t i = from; i < c->hdrs.len; i++)
      if (c->hdrs.data[i] >= 'A' && c->hdrs.data[i] <= 'Z') c->hdrs.data[i] += 32;
  return 0;
}

/* End the name or value being kept with its NUL. */
static int keep_end(rock_http_conn_t *c) {
  if (!c->server->opts.max_header) return 0;
  return rock_buf_append(&c->hdrs, "", 1); /* the NUL itself */
}

static int on_url(http_parser *p, const char *at, size_t len) {
  rock_http_conn_t *c = p->data;
  if (count_header(c, len)) return -1;
  return rock_buf_append(&c->url, at, len);
}

/* Headers are not kept; only Expect: 100-continue is looked for. */
static void header_done(rock_http_conn_t *c) {
  if (c->in_value && c->hname_len == 6 && c->hval_len >= 12 &&
      !strncasecmp(c->hname, "expect", 6) &&
      !strncasecmp(c->hval, "100-continue", 12))
    c->expect_continue = 1;
  c->hname_len = c->hval_len = 0;
  c->in_value = 0;
}

/* Append at[0..len) to dst; past cap, *dlen becomes cap + 1 for good. */
static void take(char *dst, size_t cap, size_t *dlen, const char *at,
                 size_t len) {
  if (*dlen > cap) return;
  if (len > cap - *dlen) {
    *dlen = cap + 1;
    return;
  }
  memcpy(dst + *dlen, at, len);
  *dlen += len;
}

static int on_header_field(http_parser *p, const char *at, size_t len) {
  rock_http_conn_t *c = p->data;
  if (c->server->opts.max_header && (c->in_value || !c->hname_len) &&
      ++c->nfields > ROCK_HTTP_MAX_FIELDS) { /* a field begins: one too many */
    c->many_fields = 1;
    return -1;
  }
  if (c->in_value) {
    header_done(c);
    if (keep_end(c)) return -1; /* the value's */
  }
  take(c->hname, sizeof c->hname, &c->hname_len, at, len);
  return keep_header(c, at, len, 1);
}

static int on_header_value(http_parser *p, const char *at, size_t len) {
  rock_http_conn_t *c = p->data;
  if (!c->in_value && keep_end(c)) return -1; /* the name's */
  c->in_value = 1;
  take(c->hval, sizeof c->hval, &c->hval_len, at, len);
  return keep_header(c, at, len, 0);
}

/* The client asked to hear that its body is wanted: it is. */
static void send_continue(rock_http_conn_t *c) {
  static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
  if (c->expect_continue) conn_write(c, cont, sizeof cont - 1, NULL, 0, NULL);
}

/* The body buffer for cl bytes (and the NUL). */
static int body_alloc(rock_http_conn_t *c, uint64_t cl) {
  char *d = malloc(cl + 1);
  if (!d) return -1;
  rock_buf_free(&c->body);
  c->body = (rock_buf_t){d, 0, cl + 1};
  return 0;
}

static int on_headers_complete(http_parser *p) {
  rock_http_conn_t *c = p->data;
  rock_http_server_t *s = c->server;
  if (c->in_value && keep_end(c)) return -1;
  header_done(c);
  rock_http_req_t *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(c->url.len ? c->url.data : "/"))) {
    free(r);
    return -1; /* a parse error: 400 */
  }
  r->method = http_method_str(p->method);
  char *q = strchr(r->path, '?');
  if (q) *q++ = 0;
  r->query = q ? q : r->path + strlen(r->path);
  r->body = empty_body;
  r->content_length = p->flags & F_CHUNKED          ? UINT64_MAX
                      : p->flags & F_CONTENTLENGTH ? p->content_length
                                                   : 0;
  r->max_body = s->opts.max_body;
  r->body_fd = -1;
  r->conn = c;
  r->keep_alive = http_should_keep_alive(p) && !p->upgrade; /* no protocol switch */
  if (s->opts.max_header) { /* the headers go with the request */
    r->headers = c->hdrs.data ? c->hdrs.data : strdup("");
    r->headers_len = c->hdrs.len;
    c->hdrs = (rock_buf_t){0};
    if (!r->headers) {
      req_free(r);
      return -1;
    }
  }
  memcpy(r->peer, c->peer, sizeof r->peer);
  c->cur = r;
  if (p->http_major != 1) { /* HTTP/1.0 and 1.1 only */
    static const char no[] =
        "{\"code\":\"bad_request\",\"message\":\"HTTP version not supported\"}";
    refuse(c, 505, no);
    http_parser_pause(p, 1);
    return 0;
  }
  if (p->method == HTTP_CONNECT) { /* a proxy's verb: not served here */
    static const char no[] =
        "{\"code\":\"bad_request\",\"message\":\"CONNECT is not supported\"}";
    refuse(c, 501, no);
    http_parser_pause(p, 1);
    return 0;
  }
  if (s->opts.on_headers) s->opts.on_headers(r, s->data);
  if (!c->cur) { /* answered already: the body is not read */
    http_parser_pause(p, 1);
    return 0;
  }
  uint64_t cl = r->content_length;
  if (cl != UINT64_MAX && cl > r->max_body) {
    refuse_too_large(c, r->max_body);
    http_parser_pause(p, 1);
    return 0;
  }
  if (r->body_stream) { /* to the handler now; it pulls the body */
    c->cur = NULL;
    c->pull = r;
    c->pull_state = 0;
    c->ready = r;
    /* the 100 goes with the handler's first read: an answer before it
     * closes the connection, the body never asked for (not dropped) */
    if (cl == 0) c->expect_continue = 0;
    http_parser_pause(p, 1);
    return 0;
  }
  if (r->body_fd < 0 && cl != UINT64_MAX && cl > 0) { /* exactly what it needs */
    if (!mem_take(c, cl + 1)) { /* over the budget: wait, unread */
      c->wait_mem = 1;
      http_parser_pause(p, 1);
      return 0;
    }
    if (body_alloc(c, cl)) {
      refuse(c, 500, "{\"code\":\"no_memory\",\"message\":\"no memory for the body\"}");
      http_parser_pause(p, 1);
      return 0;
    }
  }
  if (cl != 0) send_continue(c);
  return 0;
}

/* Body bytes of a pulled request: into rock_http_body_read's buffer
 * (which has room: it parses no more input than it has room for). */
static int pull_body(rock_http_conn_t *c, const char *at, size_t len) {
  rock_http_req_t *r = c->pull;
  if (len > r->max_body - r->body_bytes) { /* chunked past the limit */
    c->pull_state = ROCK_HTTP_BODY_TOO_LARGE;
    http_parser_pause(&c->parser, 1);
    return 0;
  }
  if (!c->pull_dst || len > c->pull_cap - c->pull_got) { /* parsed outside a read */
    c->pull_state = ROCK_HTTP_BODY_BAD;
    http_parser_pause(&c->parser, 1);
    return 0;
  }
  memcpy(c->pull_dst + c->pull_got, at, len);
  c->pull_got += len;
  r->body_bytes += len;
  return 0;
}

static int on_body(http_parser *p, const char *at, size_t len) {
  rock_http_conn_t *c = p->data;
  rock_http_req_t *r = c->cur;
  if (!r && c->pull) return pull_body(c, at, len);
  if (!r && c->drain) return 0; /* answered already: dropped */
  if (!r) {
    http_parser_pause(p, 1);
    return 0;
  }
  uint64_t got = r->body_fd >= 0 ? r->body_bytes : c->body.len;
  if (got + len > r->max_body) { /* chunked past the limit */
    refuse_too_large(c, r->max_body);
    http_parser_pause(p, 1);
    return 0;
  }
  if (r->body_fd >= 0) {
    r->body_bytes += len;
    while (len && !r->body_err) {
      ssize_t w = write(r->body_fd, at, len);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) r->body_err = errno;
      else at += w, len -= w;
    }
    return 0;
  }
  size_t need = c->body.len + len + 1; /* <= max_body + 1: checked above */
  if (need > c->body.cap) { /* grow by doubling, but never past the limit */
    size_t cap = c->body.cap ? c->body.cap * 2 : 4096;
    if (cap < need) cap = need;
    if (r->max_body < cap - 1) cap = r->max_body + 1;
    if (!mem_take(c, cap)) { /* chunked: no size to wait for */
      refuse(c, 503, "{\"code\":\"no_memory\",\"message\":\"too many request bodies "
                     "in memory at once: retry, or send a Content-Length\"}");
      http_parser_pause(p, 1);
      return 0;
    }
    char *d = realloc(c->body.data, cap);
    if (!d) {
      refuse(c, 500, "{\"code\":\"no_memory\",\"message\":\"no memory for the body\"}");
      http_parser_pause(p, 1);
      return 0;
    }
    c->body.data = d;
    c->body.cap = cap;
  }
  memcpy(c->body.data + c->body.len, at, len);
  c->body.len += len;
  c->body.data[c->body.len] = 0;
  return 0;
}

static int on_message_complete(http_parser *p) {
  rock_http_conn_t *c = p->data;
  rock_http_req_t *r = c->cur;
  http_parser_pause(p, 1);
  c->in_msg = 0;
  if (!r) {
    if (c->pull) c->pull_state = 1; /* a pulled body is whole */
    c->drain = 0;                   /* a dropped one is over */
    return 0;
  }
  c->cur = NULL;
  if (r->body_fd < 0 && c->body.data) { /* lent until the handler returns */
    r->body = c->body.data;
    r->body_len = c->body.len;
    r->body[r->body_len] = 0;
  }
  r->keep_alive = r->keep_alive && http_should_keep_alive(p);
  c->ready = r;
  return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ---- answers ---- */

/* While nothing is queued on the connection, the kernel copies the file
 * to the socket itself (sendfile: no pass through our memory), until the
 * socket is full (as a write that succeeds at once goes on until then).
 * Returns 0 (the socket is full, or sendfile cannot serve this pair: go on
 * with read + write) or -1 once the connection closed. */
static int file_sendfile(rock_http_conn_t *c) {
  uv_os_fd_t sfd;
  if (uv_fileno(&c->handle.h, &sfd)) {
    c->no_sendfile = 1;
    return 0;
  }
  while (c->file_left > 0) {
    size_t want = c->file_left < SENDFILE_CHUNK ? (size_t)c->file_left : SENDFILE_CHUNK;
    ssize_t n = sendfile(sfd, c->file_fd, NULL, want);
    if (n > 0) {
      c->file_left -= (uint64_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n < 0 && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
      c->no_sendfile = 1; /* read + write from now on */
      return 0;
    }
    /* 0: the file is shorter than said; else the client is gone */
    if (n == 0)
      rock_log(ROCK_LOG_WARN, "http", "msg=\"answer file ended early: connection closed\"");
    conn_close(c);
    return -1;
  }
  return 0;
}

/* Send the answer's file: by sendfile while the connection has nothing
 * queued; when the socket is full, one chunk through libuv (which waits
 * for the socket to take it), then sendfile again. Without sendfile, read
 * + write with at most two 64 KiB chunks in flight. At its end go on with
 * the connection's next request. */
static void file_pump(rock_http_conn_t *c) {
  while (c->file_fd >= 0 && c->file_left > 0 && !c->closing) {
    if (!c->writes && !c->no_sendfile) {
      if (file_sendfile(c)) return;
      if (!c->file_left) break;
    }
    if (c->writes >= (c->no_sendfile ? 2 : 1)) break;
    size_t want = c->file_left < FILE_CHUNK ? (size_t)c->file_left : FILE_CHUNK;
    char *buf = malloc(want);
    ssize_t n = -1;
    if (buf) {
      while ((n = read(c->file_fd, buf, want)) < 0 && errno == EINTR) {}
    }
    if (n <= 0) { /* the file is shorter than said, or unreadable */
      free(buf);
      rock_log(ROCK_LOG_WARN, "http", "msg=\"answer file ended early: connection closed\"");
      conn_close(c);
      return;
    }
    c->file_left -= (uint64_t)n;
    conn_write(c, NULL, 0, buf, (size_t)n, buf);
  }
  if (c->file_fd >= 0 && c->file_left == 0 && !c->closing) {
    close(c->file_fd);
    c->file_fd = -1;
    if (reads_on(c)) feed(c);
  }
}

/* Append s[0..n) at *p (room checked by the caller). */
static char *put(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

/* Append v in decimal at p. */
static char *put_u64(char *p, uint64_t v) {
  char d[24];
  int n = 0;
  do d[n++] = (char)('0' + v % 10); while ((v /= 10));
  while (n) *p++ = d[--n];
  return p;
}

/* The answer's head in buf (cap bytes) or, when larger, a malloc'ed block
 * (*heap); NULL when out of memory. Sets *hl. */
static char *make_head(char *buf, size_t cap, char **heap, size_t *hl, int status,
                       const char *ctype, const char *headers, uint64_t len, int keep) {
  const char *rs = reason(status);
  size_t cl = ctype ? strlen(ctype) : 0, hdl = headers ? strlen(headers) : 0;
  size_t need = 9 + 12 + strlen(rs) + (ctype ? 16 + cl : 0) + hdl + 40 + 19 + 2;
  char *h = buf;
  *heap = NULL;
  if (need > cap && !(h = *heap = malloc(need))) return NULL;
  char *p = put(h, "HTTP/1.1 ", 9);
  if (status < 0 || status > 999) status = 500;
  *p++ = (char)('0' + status / 100);
  *p++ = (char)('0' + status / 10 % 10);
  *p++ = (char)('0' + status % 10);
  *p++ = ' ';
  p = put(p, rs, strlen(rs));
  p = put(p, "\r\n", 2);
  if (ctype) {
    p = put(p, "Content-Type: ", 14);
    p = put(p, ctype, cl);
    p = put(p, "\r\n", 2);
  }
  p = put(p, headers ? headers : "", hdl);
  if (len != UINT64_MAX) { /* else the body ends when the connection does */
    p = put(p, "Content-Length: ", 16);
    p = put_u64(p, len);
    p = put(p, "\r\n", 2);
  }
  if (!keep) p = put(p, "Connection: close\r\n", 19);
  p = put(p, "\r\n", 2);
  *hl = (size_t)(p - h);
  return h;
}

/* Answer req: status, then ctype (a Content-Type) or headers (lines), the
 * body (copied, or owned: freed once written), a file (fd >= 0, len
 * bytes, taken) or a stream (st: len bytes to come, UINT64_MAX unknown;
 * st->c is set once the head is out). Frees req. */
static void respond_any(rock_http_req_t *req, int status, const char *ctype,
                        const char *headers, const char *body, uint64_t len,
                        char *owned, int fd, rock_http_stream_t *st) {
  rock_http_conn_t *c = req->conn;
  if (!c) {
    free(owned);
    if (fd >= 0) close(fd);
    req_free(req);
    return;
  }
  int keep = req->keep_alive && !c->server->draining && !(st && len == UINT64_MAX);
  if (req == c->busy) {
    c->busy = NULL;
    c->server->inflight--;
    if (req == c->pull) { /* a body it read, maybe not all of it */
      c->pull = NULL;
      c->pull_wait = 0;
      if (c->pull_state < 0) {
        keep = 0; /* cut: nothing after it can be parsed */
      } else if (c->pull_state == 0) {
        /* its reader (a relay's transfer, paused) learns now that no
         * more comes; req is freed only below */
        if (req->on_body) req->on_body(req, ROCK_HTTP_BODY_GONE);
        uint64_t max = req->max_body < DRAIN_MAX ? req->max_body : DRAIN_MAX;
        uint64_t cl = req->content_length;
        /* never told to send (Expect): not read; more than max to come:
         * not worth reading. Both close after the answer. */
        if (c->expect_continue || (cl != UINT64_MAX && cl - req->body_bytes > max)) {
          keep = 0;
          c->in_msg = 0;
          c->unread = 1;
        } else { /* the rest is dropped as it comes, up to max */
          c->drain = 1;
          c->dropped = 0;
          c->drop_max = max;
        }
      }
    }
  } else if (req == c->cur) { /* answered before its body was read */
    c->cur = NULL;
    c->wait_mem = 0;
    keep = 0;
    body_release(c);
  }
  int head_only = !strcmp(req->method, "HEAD");
  req_free(req);
  char hbuf[4096], *heap;
  size_t hl;
  char *head = make_head(hbuf, sizeof hbuf, &heap, &hl, status, ctype, headers, len, keep);
  if (!head) { /* no memory for the head: the client sees the close */
    free(owned);
    if (fd >= 0) close(fd);
    conn_close(c);
    return;
  }
  if (!keep) c->linger = 1;
  if (head_only || fd >= 0 || st) {
    free(owned);
    conn_write(c, head, hl, NULL, 0, NULL);
  } else if (head == hbuf && len <= sizeof hbuf - hl) { /* small: one buffer, one write */
    if (len) memcpy(hbuf + hl, body, len);
    free(owned);
    conn_write(c, hbuf, hl + len, NULL, 0, NULL);
  } else {
    conn_write(c, head, hl, body, len, owned);
  }
  free(heap);
  if (c->closing) {
    if (fd >= 0) close(fd);
    return;
  }
  if (st) { /* the body comes by rock_http_stream_write; nothing is read
             * meanwhile (a HEAD's too: its end goes on) */
    st->c = c;
    st->head_only = head_only;
    st->left = head_only ? 0 : len;
    c->stream = st;
  } else if (fd >= 0 && !head_only) {
    c->file_fd = fd;
    c->file_left = len;
    file_pump(c);
  } else if (fd >= 0) {
    close(fd);
  }
  if (c->closing) return;
  idle_restart(c);
  feed(c);
}

static void respond(rock_http_req_t *req, int status, const char *ctype,
                    const char *body, size_t len, char *owned) {
  respond_any(req, status, ctype, NULL, body, len, owned, -1, NULL);
}

void rock_http_respond(rock_http_req_t *req, int status,
                       const char *content_type, const char *body,
                       size_t len) {
  respond(req, status, content_type, body, len, NULL);
}

void rock_http_respond_take(rock_http_req_t *req, int status,
                            const char *content_type, char *body, size_t len) {
  respond(req, status, content_type, body, len, body);
}

void rock_http_respond_headers(rock_http_req_t *req, int status,
                               const char *headers, const char *body,
                               size_t len) {
  respond_any(req, status, NULL, headers, body, len, NULL, -1, NULL);
}

void rock_http_respond_headers_take(rock_http_req_t *req, int status,
                                    const char *headers, char *body, size_t len) {
  respond_any(req, status, NULL, headers, body, len, body, -1, NULL);
}

void rock_http_respond_file(rock_http_req_t *req, int status,
                            const char *headers, int fd, uint64_t size) {
  respond_any(req, status, NULL, headers, NULL, size, NULL, fd, NULL);
}

rock_http_stream_t *rock_http_respond_stream(rock_http_req_t *req, int status,
                                             const char *headers, uint64_t size,
                                             rock_http_stream_fn fn, void *arg) {
  rock_http_stream_t *st = calloc(1, sizeof *st);
  if (!st) {
    static const char msg[] = "{\"code\":\"no_memory\",\"message\":\"no memory for the answer\"}";
    respond(req, 500, "application/json", msg, sizeof msg - 1, NULL);
    return NULL;
  }
  st->fn = fn;
  st->arg = arg;
  respond_any(req, status, NULL, headers, NULL, size, NULL, -1, st);
  if (!st->c) { /* the client was gone, or went with the head */
    free(st);
    return NULL;
  }
  return st;
}

int rock_http_stream_write(rock_http_stream_t *st, const char *p, size_t n) {
  if (st->head_only) return 0;
  rock_http_conn_t *c = st->c;
  if (!c) return -1;
  int over = 0;
  if (st->left != UINT64_MAX) {
    if (n > st->left) { /* more than it said: what it said, then cut */
      n = (size_t)st->left;
      over = 1;
    }
    st->left -= n;
  }
  if (n) conn_write(c, NULL, 0, p, n, NULL);
  if (!st->c) return -1; /* the write failed: GONE was called */
  idle_restart(c);
  return over ? -1 : 0;
}

int rock_http_stream_full(rock_http_stream_t *st) {
  rock_http_conn_t *c = st->c;
  if (!c || st->head_only) return 0;
  if (c->held <= ROCK_HTTP_STREAM_HIGH) return 0;
  st->want_drain = 1;
  return 1;
}

void rock_http_stream_end(rock_http_stream_t *st, int ok) {
  rock_http_conn_t *c = st->c;
  int whole = ok && (st->left == 0 || st->left == UINT64_MAX);
  free(st);
  if (!c) return;
  c->stream = NULL;
  if (c->closing) return;
  if (!whole) c->linger = 1; /* the client sees the body end short */
  if (c->linger) {
    if (!c->writes) conn_end(c);
    return; /* write_done closes it once the rest is out */
  }
  idle_restart(c);
  feed(c);
}

long rock_http_body_read(rock_http_req_t *req, char *dst, size_t cap) {
  rock_http_conn_t *c = req->conn;
  if (!c || c->closing || c->pull != req) return ROCK_HTTP_BODY_GONE;
  if (c->pull_state) return c->pull_state > 0 ? 0 : c->pull_state;
  if (c->expect_continue) { /* the body is wanted now */
    send_continue(c);
    c->expect_continue = 0;
    if (c->closing) return ROCK_HTTP_BODY_GONE;
  }
  if (cap > LONG_MAX) cap = LONG_MAX;
  c->pull_dst = dst;
  c->pull_cap = cap;
  c->pull_got = 0;
  /* the parser is given no more input than dst holds: a body byte is an
   * input byte (chunk framing only takes some away) */
  while (!c->pull_got && !c->pull_state && c->in_off < c->in.len) {
    size_t left = c->in.len - c->in_off;
    size_t n = http_parser_execute(&c->parser, &settings, c->in.data + c->in_off,
                                   left < cap ? left : cap);
    c->in_off += n;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (e == HPE_PAUSED) http_parser_pause(&c->parser, 0); /* the end, or a cut */
    else if (e != HPE_OK) c->pull_state = ROCK_HTTP_BODY_BAD;
    else if (n == 0) break;
  }
  c->pull_dst = NULL;
  long got = (long)c->pull_got;
  if (c->in_off == c->in.len) in_release(c);
  set_reading(c); /* room again: the client is read on */
  if (got) return got;
  if (c->pull_state) return c->pull_state > 0 ? 0 : c->pull_state;
  c->pull_wait = 1;
  idle_restart(c); /* a client that sends nothing more is closed in time */
  return ROCK_HTTP_BODY_WAIT;
}

const char *rock_http_req_header(const rock_http_req_t *req, const char *name) {
  const char *p = req->headers, *end = p ? p + req->headers_len : NULL;
  while (p && p < end) {
    const char *v = p + strlen(p) + 1;
    if (v >= end) break;
    if (!strcmp(p, name)) return v;
    p = v + strlen(v) + 1;
  }
  return NULL;
}

/* ---- listening ---- */

/* The connection a new one takes the place of when the server is full:
 * the oldest (the list is newest first) with nothing under way: idle
 * between requests, or still sending its request's headers (no request
 * read, handled or answered). NULL when every one holds a request: then
 * the new one is refused. So clients that only hold connections open,
 * idle or half-sent, cannot lock everyone out. */
static rock_http_conn_t *evictable(rock_http_server_t *s) {
  rock_http_conn_t *found = NULL;
  for (rock_http_conn_t *c = s->conns; c; c = c->next)
    if (!c->closing && !c->cur && !c->ready && !c->busy && !c->writes && c->file_fd < 0 &&
        !c->stream && !c->linger)
      found = c;
  return found;
}

static void on_connection(uv_stream_t *l, int status) {
  rock_http_server_t *s = l->data;
  if (status < 0 || s->draining) return;
  rock_http_conn_t *c = calloc(1, sizeof *c);
  if (!c) return;
  c->server = s;
  c->file_fd = -1;
  if (s->tcp) uv_tcp_init(l->loop, &c->handle.tcp);
  else uv_pipe_init(l->loop, &c->handle.pipe, 0);
  uv_timer_init(l->loop, &c->idle);
  c->handle.h.data = c->idle.data = c;
  c->handles = 2;
  int full = s->opts.max_conns && s->nconns >= s->opts.max_conns;
  rock_http_conn_t *old = full ? evictable(s) : NULL;
  if (old) {
    s->evicted++;
    if (!(s->evicted & (s->evicted - 1))) /* 1, 2, 4, 8, ... */
      rock_log(ROCK_LOG_WARN, "http",
               "msg=\"too many connections: closed the oldest idle or half-sent one\" "
               "open=%u max=%u evicted=%lu", s->nconns, s->opts.max_conns, s->evicted);
    conn_close(old);
    full = 0;
  }
  if (uv_accept(l, &c->handle.s) || full) {
    if (full) s->refused++;
    if (full && !(s->refused & (s->refused - 1))) /* 1, 2, 4, 8, ... */
      rock_log(ROCK_LOG_WARN, "http",
               "msg=\"too many connections: closed at once\" open=%u max=%u refused=%lu",
               s->nconns, s->opts.max_conns, s->refused);
    c->closing = 1;
    uv_close(&c->handle.h, conn_closed);
    uv_close((uv_handle_t *)&c->idle, conn_closed);
    return;
  }
  if (s->tcp) {
    struct sockaddr_storage ss;
    int sl = sizeof ss;
    uv_tcp_nodelay(&c->handle.tcp, 1);
    if (!uv_tcp_getpeername(&c->handle.tcp, (struct sockaddr *)&ss, &sl))
      uv_ip_name((struct sockaddr *)&ss, c->peer, sizeof c->peer);
  }
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->nconns++;
  set_reading(c);
  idle_restart(c);
}

/* The kernel caps listen()'s backlog at net.core.somaxconn: ask for that. */
static int listen_backlog(void) {
  int n = 0;
  FILE *f = fopen("/proc/sys/net/core/somaxconn", "re");
  if (f) {
    if (fscanf(f, "%d", &n) != 1) n = 0;
    fclose(f);
  }
  return n > SOMAXCONN ? n : SOMAXCONN;
}

/* The listener's close callback: the server goes once closed too. */
static void server_free(rock_http_server_t *s) {
  rock_buf_free(&s->spare);
  free(s);
}

static void listener_closed(uv_handle_t *h) {
  rock_http_server_t *s = h->data;
  s->listener_closed = 1;
  if (s->closing) server_free(s);
}

static void listener_close(rock_http_server_t *s) {
  if (s->listener_closing) return;
  s->listener_closing = 1;
  uv_close(&s->listener.h, listener_closed);
}

static rock_http_server_t *server_new(const rock_http_server_opts_t *opts,
                                      rock_http_handler_fn fn, void *data) {
  static const rock_http_server_opts_t defaults = ROCK_HTTP_SERVER_OPTS_DEFAULT;
  rock_http_server_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->opts = opts ? *opts : defaults;
  s->fn = fn;
  s->data = data;
  return s;
}

/* Listen on the bound listener, or close it and free the server. */
static int server_listen(rock_http_server_t *s, int rc, rock_http_server_t **out) {
  s->listener.h.data = s;
  if (!rc) rc = uv_listen(&s->listener.s, listen_backlog(), on_connection);
  if (rc) {
    s->closing = 1;
    listener_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* Make room for a socket at path: nothing there is fine, and a socket no
 * server listens on (its connect refused: a server that died) is removed.
 * A live server's socket (connect accepted, or its backlog full) is
 * UV_EADDRINUSE and a path that is no socket UV_EEXIST, both left as
 * they are. */
static int clear_dead_socket(const char *path) {
  struct stat st;
  if (lstat(path, &st)) return errno == ENOENT ? 0 : uv_translate_sys_error(errno);
  if (!S_ISSOCK(st.st_mode)) return UV_EEXIST;
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a.sun_path) return UV_ENAMETOOLONG;
  memcpy(a.sun_path, path, strlen(path));
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return uv_translate_sys_error(errno);
  int r = connect(fd, (struct sockaddr *)&a, sizeof a), e = errno;
  close(fd);
  if (!r || e == EAGAIN || e == EINPROGRESS) return UV_EADDRINUSE;
  if (e != ECONNREFUSED) return uv_translate_sys_error(e);
  if (unlink(path) && errno != ENOENT) return uv_translate_sys_error(errno);
  return 0;
}

int rock_http_server_start(rock_http_server_t **out, uv_loop_t *loop,
                           const char *path, const rock_http_server_opts_t *opts,
                           rock_http_handler_fn fn, void *data) {
  int rc = clear_dead_socket(path);
  if (rc) return rc;
  rock_http_server_t *s = server_new(opts, fn, data);
  if (!s) return UV_ENOMEM;
  uv_pipe_init(loop, &s->listener.pipe, 0);
  rc = uv_pipe_bind(&s->listener.pipe, path);
  /* owner-only, whatever the umask: a client of the socket needs no
   * token. Set before listen(): until then nobody can connect. */
  if (!rc && chmod(path, 0600)) {
    rc = uv_translate_sys_error(errno);
    unlink(path);
  }
  return server_listen(s, rc, out);
}

int rock_http_server_start_tcp(rock_http_server_t **out, uv_loop_t *loop,
                               const char *host, int port,
                               const rock_http_server_opts_t *opts,
                               rock_http_handler_fn fn, void *data) {
  struct sockaddr_storage ss;
  if (port < 0 || port > 65535) return UV_EINVAL;
  if (uv_ip4_addr(host, port, (struct sockaddr_in *)&ss) &&
      uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss))
    return UV_EINVAL;
  rock_http_server_t *s = server_new(opts, fn, data);
  if (!s) return UV_ENOMEM;
  s->tcp = 1;
  uv_tcp_init(loop, &s->listener.tcp);
  int rc = uv_tcp_bind(&s->listener.tcp, (struct sockaddr *)&ss, 0);
  if (!rc) {
    struct sockaddr_storage got;
    int gl = sizeof got;
    rc = uv_tcp_getsockname(&s->listener.tcp, (struct sockaddr *)&got, &gl);
    if (!rc)
      s->port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                                : ((struct sockaddr_in *)&got)->sin_port);
  }
  return server_listen(s, rc, out);
}

int rock_http_server_port(rock_http_server_t *s) { return s->port; }

void rock_http_server_drain(rock_http_server_t *s, void (*cb)(void *arg),
                            void *arg) {
  if (!s || s->closing || s->draining) return;
  s->draining = 1;
  s->drained = cb;
  s->drained_arg = arg;
  listener_close(s);
  rock_http_conn_t *next;
  for (rock_http_conn_t *c = s->conns; c; c = next) {
    next = c->next;
    if (conn_idle(c)) conn_close(c); /* may call cb when it is the last */
    else if (!c->busy && !c->in_msg) c->linger = 1; /* an answer being written */
  }
  if (!s->nconns && s->drained) {
    s->drained = NULL;
    cb(arg);
  }
}

void rock_http_server_close(rock_http_server_t *s) {
  if (!s || s->closing) return;
  s->closing = 1;
  s->drained = NULL;
  while (s->conns) conn_close(s->conns);
  if (s->listener_closed) server_free(s);
  else listener_close(s);
}

int rock_http_server_inflight(rock_http_server_t *s) { return s->inflight; }

void rock_http_server_stats(rock_http_server_t *s,
                            rock_http_server_stats_t *st) {
  memset(st, 0, sizeof *st);
  for (rock_http_conn_t *c = s->conns; c; c = c->next) {
    st->conns++;
    if (!c->reading && !c->linger) st->paused++;
    if (c->wait_mem) st->waiting++;
    st->buffered += c->in.cap + c->url.cap + c->body.cap + c->hdrs.cap;
    st->writing += c->held;
  }
  st->body_mem = s->body_mem;
}
