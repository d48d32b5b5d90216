/* telescope-dtd's methods (dtd_methods.c): what dtd_impl answers on its
 * JSON-RPC connections and the ConnectedApp service, above the transport
 * (dtd_daemon.c), which hands them its events through the hooks set here. */
#ifndef TELESCOPE_DTD_METHODS_H
#define TELESCOPE_DTD_METHODS_H

#include "dtd_daemon.h"

/* Sets d's on_message, on_conn_gone and on_stop (freeing the registered
 * apps at shutdown) to the methods' handlers. */
void dtd_methods_attach(dtd_daemon_t *d);

#endif
