/*
 * ebb_osm_events: an OpenSM event plugin (osm_event_plugin.h, libopensm-dev)
 * that forwards the events about ports and sweeps to `ebb agent` as JSON
 * lines, one per datagram, over a Unix datagram socket. OpenSM dlopen()s
 * "lib<event_plugin_name>.so"; the socket path comes from
 * event_plugin_options ("ebb_osm_events=/run/ebb/osm-events.sock", or just the
 * path). Sends never block OpenSM: when no agent listens, events are dropped.
 * docs/ib_agent.md has the opensm.conf lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <opensm/osm_config.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_log.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_version.h>

#define EBB_OPTION "ebb_osm_events="

struct ebb_events {
  int fd;
  struct sockaddr_un to;
  socklen_t to_len;
  osm_log_t* log;
  uint64_t seq;
  uint64_t dropped;
};

/* The socket path in event_plugin_options: the value of ebb_osm_events=,
 * else the whole string when it is one word. */
static int socket_path(const char* options, char* out, size_t size) {
  const char *p, *end;
  size_t n;

  if (!options) return -1;
  p = strstr(options, EBB_OPTION);
  if (p)
    p += strlen(EBB_OPTION);
  else
    p = options;
  while (*p == ' ' || *p == '\t')
    p++;
  end = p;
  while (*end && *end != ' ' && *end != '\t' && *end != ',')
    end++;
  if (!p[0] || (end - p) == 0 || (!strstr(options, EBB_OPTION) && *end)) return -1;
  n = (size_t)(end - p);
  if (n + 1 > size) return -1;
  memcpy(out, p, n);
  out[n] = '\0';
  return 0;
}

static void* create(struct osm_opensm* osm) {
  struct ebb_events* e;
  char path[sizeof(((struct sockaddr_un*)0)->sun_path)];

  if (socket_path(osm->subn.opt.event_plugin_options, path, sizeof(path)) != 0) {
    osm_log(&osm->log, OSM_LOG_ERROR,
            "ebb_osm_events: no socket path: set event_plugin_options "
            "ebb_osm_events=/path/to/socket (at most %zu characters)\n",
            sizeof(path) - 1);
    return NULL;
  }
  e = calloc(1, sizeof(*e));
  if (!e) return NULL;
  e->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (e->fd < 0) {
    osm_log(&osm->log, OSM_LOG_ERROR, "ebb_osm_events: socket: %s\n", strerror(errno));
    free(e);
    return NULL;
  }
  e->to.sun_family = AF_UNIX;
  memcpy(e->to.sun_path, path, strlen(path) + 1);
  e->to_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
  e->log = &osm->log;
  osm_log(&osm->log, OSM_LOG_INFO, "ebb_osm_events: forwarding events to %s\n", path);
  return e;
}

static void destroy(void* data) {
  struct ebb_events* e = data;

  if (!e) return;
  osm_log(e->log, OSM_LOG_INFO,
          "ebb_osm_events: %" PRIu64 " events sent, %" PRIu64 " dropped (no agent listening)\n",
          e->seq - e->dropped, e->dropped);
  close(e->fd);
  free(e);
}

/* Sends `body` (the event's own fields, without braces) as one JSON line. */
static void emit(struct ebb_events* e, const char* body) {
  char line[512];
  struct timespec now;
  int n;
  uint64_t seq = __atomic_add_fetch(&e->seq, 1, __ATOMIC_RELAXED);

  clock_gettime(CLOCK_REALTIME, &now);
  n = snprintf(line, sizeof(line),
               "{\"source\":\"opensm\",\"seq\":%" PRIu64 ",\"time_ns\":%" PRId64 ",%s}\n", seq,
               (int64_t)now.tv_sec * 1000000000 + now.tv_nsec, body);
  if (n <= 0 || (size_t)n >= sizeof(line)) return;
  if (sendto(e->fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr*)&e->to,
             e->to_len) < 0)
    __atomic_add_fetch(&e->dropped, 1, __ATOMIC_RELAXED);
}

static void report_trap(struct ebb_events* e, const ib_mad_notice_attr_t* n) {
  char body[384];
  unsigned trap;
  unsigned issuer = cl_ntoh16(n->issuer_lid);

  if (!ib_notice_is_generic(n)) {
    snprintf(body, sizeof(body), "\"event\":\"trap\",\"vendor\":true,\"issuer_lid\":%u", issuer);
    emit(e, body);
    return;
  }
  trap = cl_ntoh16(n->g_or_v.generic.trap_num);
  switch (trap) {
    case 128: /* link state changed at the switch with this LID */
      snprintf(body, sizeof(body), "\"event\":\"trap\",\"trap\":128,\"issuer_lid\":%u,\"lid\":%u",
               issuer, (unsigned)cl_ntoh16(n->data_details.ntc_128.sw_lid));
      break;
    case 129: /* local link integrity threshold */
    case 130: /* excessive buffer overrun */
    case 131: /* flow control update watchdog */
      snprintf(body, sizeof(body),
               "\"event\":\"trap\",\"trap\":%u,\"issuer_lid\":%u,\"lid\":%u,\"port\":%u", trap,
               issuer, (unsigned)cl_ntoh16(n->data_details.ntc_129_131.lid),
               (unsigned)n->data_details.ntc_129_131.port_num);
      break;
    case 144: /* capability mask, width/speed enabled... changed */
      snprintf(body, sizeof(body),
               "\"event\":\"trap\",\"trap\":144,\"issuer_lid\":%u,\"lid\":%u,"
               "\"change_flags\":%u",
               issuer, (unsigned)cl_ntoh16(n->data_details.ntc_144.lid),
               (unsigned)cl_ntoh16(n->data_details.ntc_144.change_flgs));
      break;
    case 64: /* GID in service */
    case 65: /* GID out of service */
      snprintf(
          body, sizeof(body),
          "\"event\":\"trap\",\"trap\":%u,\"issuer_lid\":%u,\"port_guid\":\"0x%016" PRIx64 "\"",
          trap, issuer, (uint64_t)cl_ntoh64(n->data_details.ntc_64_67.gid.unicast.interface_id));
      break;
    default:
      snprintf(body, sizeof(body), "\"event\":\"trap\",\"trap\":%u,\"issuer_lid\":%u", trap,
               issuer);
      break;
  }
  emit(e, body);
}

static void report(void* data, osm_epi_event_id_t id, void* event) {
  struct ebb_events* e = data;
  char body[384];

  switch (id) {
    case OSM_EVENT_ID_TRAP:
      report_trap(e, event);
      return;
    case OSM_EVENT_ID_PORT_ERRORS: {
      const osm_epi_pe_event_t* pe = event;
      snprintf(
          body, sizeof(body),
          "\"event\":\"port_errors\",\"node_guid\":\"0x%016" PRIx64
          "\",\"port\":%u,"
          "\"symbol_err\":%" PRIu64 ",\"link_err_recover\":%" PRIu64 ",\"link_downed\":%" PRIu64
          ",\"rcv_err\":%" PRIu64 ",\"xmit_discards\":%" PRIu64 ",\"xmit_wait\":%" PRIu64,
          pe->port_id.node_guid, (unsigned)pe->port_id.port_num, pe->symbol_err_cnt,
          pe->link_err_recover, pe->link_downed, pe->rcv_err, pe->xmit_discards, pe->xmit_wait);
      break;
    }
    case OSM_EVENT_ID_SUBNET_UP:
      snprintf(body, sizeof(body), "\"event\":\"subnet_up\"");
      break;
    case OSM_EVENT_ID_HEAVY_SWEEP_START:
      snprintf(body, sizeof(body), "\"event\":\"heavy_sweep_start\"");
      break;
    case OSM_EVENT_ID_HEAVY_SWEEP_DONE:
      snprintf(body, sizeof(body), "\"event\":\"heavy_sweep_done\"");
      break;
    case OSM_EVENT_ID_UCAST_ROUTING_DONE:
      snprintf(body, sizeof(body), "\"event\":\"ucast_routing_done\",\"kind\":\"%s\"",
               (uintptr_t)event == UCAST_ROUTING_REROUTE ? "reroute" : "heavy_sweep");
      break;
    case OSM_EVENT_ID_STATE_CHANGE:
      snprintf(body, sizeof(body), "\"event\":\"sm_state_change\"");
      break;
    default:
      /* Counters, port select, SA dumps and LFT blocks: not forwarded. */
      return;
  }
  emit(e, body);
}

/* The symbol OpenSM looks up (OSM_EVENT_PLUGIN_IMPL_NAME). */
__attribute__((visibility("default"))) osm_event_plugin_t osm_event_plugin = {
    .osm_version = OSM_VERSION,
    .create = create,
    .delete = destroy,
    .report = report,
};
