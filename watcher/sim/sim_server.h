/* The WebSocket endpoint of telescope-sim: libwebsockets on the sim's libuv
 * loop. It applies the handshake rules of the mode (token, Origin, paths,
 * 403 bodies), reassembles messages, queues replies per connection and hands
 * every complete text or binary message to sim_vm_handle_message(). */
#ifndef TELESCOPE_SIM_SERVER_H
#define TELESCOPE_SIM_SERVER_H

#include <jansson.h>
#include <stddef.h>

#include "sim.h"

/* Listens on cfg.host:cfg.port; s->srv.port holds the bound port. 0 or -1. */
int sim_server_init(sim_t *s);
/* Destroys the lws context; its libuv handles close as the loop runs on. */
void sim_server_close(sim_t *s);

/* Queues text (copied) as one text frame. */
void sim_server_send(sim_conn_t *c, const char *text, size_t len);
/* Queues msg as compact JSON; steals msg. */
void sim_server_send_json(sim_conn_t *c, json_t *msg);
/* Sends a close frame with code once the queue is drained. */
void sim_server_close_conn(sim_conn_t *c, int code);
/* write-gap MS: at least MS between two messages on a connection (0: none). */
void sim_server_set_gap(sim_t *s, int ms);
/* Closes every connection abruptly: no close frame. */
void sim_server_drop_all(sim_t *s);

#endif
