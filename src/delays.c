/* A thread's delay-accounting figures through taskstats, the kernel's
 * generic-netlink family "TASKSTATS": one request (TASKSTATS_CMD_GET with
 * the thread's id) and one reply holding the thread's struct taskstats.
 * The family's id is asked once (CTRL_CMD_GETFAMILY) and kept. */
#include "internal.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "prim/thread.h"

/* From the uapi <linux/taskstats.h>, not included: the headers a build
 * sees may be older than the kernel it runs on (Debian 12's stop at
 * version 13, before the IRQ delay). */
#define TASKSTATS_GENL_NAME "TASKSTATS"
enum { TS_CMD_GET = 1 };           /* TASKSTATS_CMD_GET */
enum { TS_CMD_ATTR_PID = 1 };      /* TASKSTATS_CMD_ATTR_PID: u32, a thread's id */
enum { TS_TYPE_STATS = 3, TS_TYPE_AGGR_PID = 4 }; /* reply: AGGR_PID { PID, STATS } */

/* Where struct taskstats keeps each delay: a u64 count, then the u64 total
 * in ns, at a fixed offset from the start (the struct only grows at its
 * end), and the version that added it. Version 15 put a maximum and a
 * minimum after each total, which moved every later field; version 16 moved
 * them to the end again, so 15 is the one layout this table does not
 * describe. The version itself is the u16 at offset 0. */
typedef struct ts_field {
    unsigned short offset;
    unsigned char since;
} ts_field;

enum { TS_VERSION_BAD_LAYOUT = 15 };

static const ts_field ts_fields[8] = {
    {16, 1},  /* cpu_count, cpu_delay_total */
    {32, 1},  /* blkio_count, blkio_delay_total */
    {48, 1},  /* swapin_count, swapin_delay_total */
    {312, 7}, /* freepages_count, freepages_delay_total */
    {328, 9}, /* thrashing_count, thrashing_delay_total */
    {352, 11}, /* compact_count, compact_delay_total */
    {400, 13}, /* wpcopy_count, wpcopy_delay_total */
    {416, 14}, /* irq_count, irq_delay_total */
};

/* A request: the netlink header, the generic one, one attribute. */
typedef struct ts_request {
    struct nlmsghdr nl;
    struct genlmsghdr genl;
    unsigned char attrs[32];
} ts_request;

/* The family's id, once known (0: not yet). Any thread may store it; all
 * store the same value, so relaxed order is enough. */
static _Atomic int ts_family;

/* Appends attribute type with len bytes of data to req (the caller sized
 * attrs for it). */
static void put_attr(ts_request *req, unsigned short type, const void *data, unsigned short len)
{
    struct nlattr *a = (struct nlattr *)((char *)req + NLMSG_ALIGN(req->nl.nlmsg_len));
    a->nla_type = type;
    a->nla_len = (unsigned short)(NLA_HDRLEN + len);
    memcpy((char *)a + NLA_HDRLEN, data, len);
    req->nl.nlmsg_len = NLMSG_ALIGN(req->nl.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Sends req on fd and receives the kernel's answer into buf: 0 and the
 * generic message's attributes (*attrs, *len), or the -errno of an error
 * reply, or -EIO for one that does not parse. */
static int round_trip(int fd, ts_request *req, unsigned seq, char *buf, size_t cap, const char **attrs,
                      size_t *len)
{
    req->nl.nlmsg_flags = NLM_F_REQUEST;
    req->nl.nlmsg_seq = seq;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    ssize_t n;
    do
        n = sendto(fd, req, req->nl.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    for (;;) {
        struct sockaddr_nl from;
        socklen_t flen = sizeof from;
        do
            n = recvfrom(fd, buf, cap, MSG_TRUNC, (struct sockaddr *)&from, &flen);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return -errno;
        if ((size_t)n > cap || (size_t)n < NLMSG_HDRLEN)
            return -EIO;
        if (from.nl_pid != 0)
            continue; /* not from the kernel */
        const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
        if (!NLMSG_OK(h, (size_t)n))
            return -EIO;
        if (h->nlmsg_seq != seq)
            continue; /* an answer to an earlier request */
        if (h->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(h);
            if (h->nlmsg_len < NLMSG_LENGTH(sizeof *e))
                return -EIO;
            return e->error < 0 ? e->error : -EIO; /* 0 would be an ack, never asked for */
        }
        if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
            return -EIO;
        *attrs = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
        *len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
        return 0;
    }
}

/* The attribute of that type among attrs[0..len), its payload and length;
 * NULL if there is none or the list is damaged. */
static const char *find_attr(const char *attrs, size_t len, unsigned short type, size_t *plen)
{
    while (len >= NLA_HDRLEN) {
        const struct nlattr *a = (const struct nlattr *)attrs;
        if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
            return NULL;
        if ((a->nla_type & NLA_TYPE_MASK) == type) {
            *plen = a->nla_len - NLA_HDRLEN;
            return attrs + NLA_HDRLEN;
        }
        size_t step = NLA_ALIGN(a->nla_len);
        if (step >= len)
            break;
        attrs += step;
        len -= step;
    }
    return NULL;
}

/* The TASKSTATS family's id: 0 and *id, -ENOTSUP when the kernel has no
 * such family, or the round trip's error. */
static int family_id(int fd, unsigned seq, int *id)
{
    int known = atomic_load_explicit(&ts_family, memory_order_relaxed);
    if (known != 0) {
        *id = known;
        return 0;
    }
    ts_request req = {.nl = {.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN), .nlmsg_type = GENL_ID_CTRL},
                      .genl = {.cmd = CTRL_CMD_GETFAMILY, .version = 1}};
    put_attr(&req, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof TASKSTATS_GENL_NAME);
    char buf[4096];
    const char *attrs;
    size_t len, plen;
    int rc = round_trip(fd, &req, seq, buf, sizeof buf, &attrs, &len);
    if (rc == -ENOENT)
        return -ENOTSUP; /* CONFIG_TASKSTATS off, or this netns cannot see it */
    if (rc != 0)
        return rc;
    const char *p = find_attr(attrs, len, CTRL_ATTR_FAMILY_ID, &plen);
    unsigned short v;
    if (p == NULL || plen < sizeof v)
        return -EIO;
    memcpy(&v, p, sizeof v);
    atomic_store_explicit(&ts_family, v, memory_order_relaxed);
    *id = v;
    return 0;
}

/* Fills out from a struct taskstats of plen bytes at p: a field the
 * version does not have, or the payload does not reach, reads -1. */
static int read_stats(const char *p, size_t plen, tt_delays *out)
{
    unsigned short version;
    if (plen < sizeof version)
        return -EIO;
    memcpy(&version, p, sizeof version);
    if (version == 0)
        return -EIO;
    if (version == TS_VERSION_BAD_LAYOUT)
        return -ENOTSUP;
    tt_delay *kinds[8] = {&out->cpu,       &out->blkio,   &out->swapin, &out->reclaim,
                          &out->thrashing, &out->compact, &out->wpcopy, &out->irq};
    out->version = version;
    for (int i = 0; i < 8; i++) {
        const ts_field *f = &ts_fields[i];
        uint64_t pair[2];
        if (version < f->since || f->offset + sizeof pair > plen) {
            kinds[i]->count = kinds[i]->ns = -1;
            continue;
        }
        memcpy(pair, p + f->offset, sizeof pair);
        /* Counts and ns totals fit 63 bits for centuries; a value past
         * that is not one the kernel keeps. */
        if (pair[0] > INT64_MAX || pair[1] > INT64_MAX)
            return -EIO;
        kinds[i]->count = (int64_t)pair[0];
        kinds[i]->ns = (int64_t)pair[1];
    }
    return 0;
}

int tt__taskstats_get(pid_t tid, tt_delays *out)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (fd < 0)
        return errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT ? -ENOTSUP : -errno;
    int family;
    int rc = family_id(fd, 1, &family);
    if (rc == 0) {
        ts_request req = {.nl = {.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN), .nlmsg_type = (unsigned short)family},
                          .genl = {.cmd = TS_CMD_GET, .version = 1}};
        uint32_t id = (uint32_t)tid;
        put_attr(&req, TS_CMD_ATTR_PID, &id, sizeof id);
        /* The reply is ~600 bytes: headers and a struct taskstats that
         * grows with the kernel; MSG_TRUNC tells if it ever outgrows this. */
        char buf[4096];
        const char *attrs, *stats, *aggr;
        size_t len, alen, slen;
        rc = round_trip(fd, &req, 2, buf, sizeof buf, &attrs, &len);
        if (rc == 0) {
            aggr = find_attr(attrs, len, TS_TYPE_AGGR_PID, &alen);
            stats = aggr != NULL ? find_attr(aggr, alen, TS_TYPE_STATS, &slen) : NULL;
            rc = stats != NULL ? read_stats(stats, slen, out) : -EIO;
        }
    }
    close(fd);
    return rc;
}

int tt_tid_delays(pid_t tid, tt_delays *out)
{
    if (out == NULL)
        return -EFAULT;
    if (tid < 0)
        return -EINVAL;
    if (tid == 0)
        tid = tt__gettid();
    else if (tt__tgkill(getpid(), tid, 0) != 0)
        return tt__classify_missing(tid);
    /* Read before the figures: on then means they were being counted (an
     * "on" read after could follow a switch made after the kernel answered
     * with its zeros). No sysctl file (a kernel before 5.14, where the
     * "nodelayacct" boot option was the only switch): taskstats decides. */
    char flag[8];
    int off = tt__read_small("/proc/sys/kernel/task_delayacct", flag, sizeof flag) > 0 && flag[0] == '0';
    tt_delays d;
    int rc = tt__taskstats_get(tid, &d);
    if (rc == -ESRCH)
        return tt__classify_missing(tid); /* it exited after the check */
    if (rc != 0)
        return rc;
    if (off)
        return -ENODATA;
    *out = d;
    return 0;
}
