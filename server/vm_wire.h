/* vm_wire: the pure parts of the VM-service client (vm_client.h): which
 * methods telescope may send, the top-level "id" of a reply found while it
 * streams in, one WebSocket message reassembled from fragments within a
 * limit, what a parsed message is, and where a watcher reply's records lie
 * (read from their text, without a JSON tree). Pure: bytes and JSON in, no
 * loop.
 *
 * Ownership: the caller embeds a vm_rxbuf_t (zeroed, limit set) and frees
 * its buffer with vm_rxbuf_free; the rest hold nothing. */
#ifndef TELESCOPE_VM_WIRE_H
#define TELESCOPE_VM_WIRE_H

#include <jansson.h>
#include <stddef.h>

/* 1 when telescope may send method (an exact name on its allowlist). */
int vm_client_method_allowed(const char *method);

/* Finds the top-level "id" of a JSON text fed in pieces, keeping a few bytes
 * of state only. It lets us fail the right call when a reply is too large to
 * keep (the VM puts "id" last) or is not valid JSON. Not a validator. */
typedef struct {
  int depth, in_str, esc;
  int expect_key; /* at depth 1, the next string is a member name */
  int str_role;   /* 0 other, 1 member name, 2 the id's string value */
  int after_key;  /* a member name ended; ':' comes next */
  int want_value; /* the member name was "id" and ':' was seen */
  int in_num;     /* reading a numeric id */
  char key[4];
  size_t klen;
  int key_long;
  char id[32];
  size_t idlen;
  int found;
} vm_idscan_t;

void vm_idscan_feed(vm_idscan_t *s, const char *p, size_t n);

/* Reassembles one WebSocket message from fragments up to limit bytes, and
 * finds its top-level id (scan) as the fragments come. Past the limit it
 * frees what it holds and only scans the rest, so memory stays bounded
 * whatever the app sends. */
typedef struct {
  char *buf;
  size_t len, cap, limit;
  int active;   /* a message is in progress */
  int overflow; /* this message went over the limit */
  size_t total; /* bytes of this message so far */
  vm_idscan_t scan;
} vm_rxbuf_t;

typedef enum { VM_RX_MORE, VM_RX_MESSAGE, VM_RX_OVERSIZE, VM_RX_NOMEM } vm_rx_status_t;

void vm_rxbuf_reset(vm_rxbuf_t *rx);
void vm_rxbuf_free(vm_rxbuf_t *rx);
/* Feeds one fragment (final: the message's last). */
vm_rx_status_t vm_rxbuf_feed(vm_rxbuf_t *rx, const char *data, size_t n, int final);

/* Where a reply's "result" holds its "records" array: [*at, *at + *len) of
 * p, '[' to its ']', so the records can be read without building a JSON
 * tree of them (record.h, record_reply_parse_raw). 1 when p is one object
 * with exactly one "result" member, an object with exactly one "records"
 * member, an array; 0 otherwise, and whenever a member name at those two
 * levels holds an escape (it could spell either name). It follows strings
 * and nesting only: the bytes of the cut are checked by the JSON parse of
 * the rest and by the records' reader. */
int vm_wire_records_span(const char *p, size_t n, size_t *at, size_t *len);
/* p with its records (vm_wire_records_span) cut out: a new buffer holding
 * the records' text, *len bytes, then the message with "[]" in their place,
 * *rest bytes. NULL when there is nothing to cut (or no memory). */
char *vm_wire_cut_records(const char *p, size_t n, size_t *rest, size_t *len);

/* A reply handed over as text (vm_client_reply_t.text), read: its message
 * (the caller's to free), *result its "result" (borrowed from it) or NULL.
 * Without a result, err says why: the error reply's message with its code
 * in *rpc, or that the text was not JSON (*rpc 0). Frees text. Pure, so
 * it runs on a worker thread. */
json_t *vm_wire_read_text(char *text, size_t len, const json_t **result, int *rpc, char *err,
                          size_t errlen);

/* What a parsed message is. */
typedef enum { VM_MSG_OTHER, VM_MSG_REPLY, VM_MSG_EVENT } vm_msg_kind_t;
/* Classifies msg; for a reply writes its id (string, or integer printed) to id. */
vm_msg_kind_t vm_msg_classify(json_t *msg, char *id, size_t idlen);

#endif
